"""``python -m engine.models``: the model registry from a shell.

    python -m engine.models                      # one line per model card (* = default)
    python -m engine.models default TASK [--family F] [--variant V]   # who serves TASK
    python -m engine.models show NAME            # the card as JSON (limits, commands, results)
    python -m engine.models trace NAME "TEXT" [--option k=v ...] [--out trace.json|.npz]

The last stdout line is one JSON object, as for every CLI of the engine.
"""

from __future__ import annotations

import argparse
import json
import sys

from engine.errors import InputError
from engine.models import registry


def _option(raw: str) -> tuple[str, object]:
    key, _, value = raw.partition("=")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m engine.models",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="cmd")
    show = sub.add_parser("show")
    show.add_argument("name")
    default = sub.add_parser("default")
    default.add_argument("task", help="en-fr, dates, babi, sentence, …")
    default.add_argument("--family", default=None)
    default.add_argument("--variant", default=None)
    tr = sub.add_parser("trace")
    tr.add_argument("name")
    tr.add_argument("text")
    tr.add_argument("--option", action="append", default=[], help="k=v, e.g. beam=1")
    tr.add_argument("--out", default=None, help="write the Trace (.json or .npz)")
    a = ap.parse_args(argv)
    try:
        if a.cmd is None:
            cards = registry.cards()
            for c in cards:
                mark = "*" if c.is_default else " "
                print(f"{mark} {c.name:32} {c.family:11} {c.task:9} {c.title}", file=sys.stderr)
            print(json.dumps([c.name for c in cards]))
        elif a.cmd == "default":
            card = registry.default(a.task, family=a.family, variant=a.variant)
            print(json.dumps(card.name))
        elif a.cmd == "show":
            card = registry.get(a.name)
            print(json.dumps(card.describe() | {"results": card.results()}, ensure_ascii=False))
        else:
            card = registry.get(a.name)
            trace = card.trace(a.text, **dict(_option(o) for o in a.option))
            if a.out:
                data = trace.to_npz() if a.out.endswith(".npz") else trace.to_json().encode()
                with open(a.out, "wb") as f:
                    f.write(data)
            print(
                json.dumps(
                    {"model": card.name, "outputs": trace.outputs}, ensure_ascii=False, default=str
                )
            )
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
