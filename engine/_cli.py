"""Dispatch ``python -m engine.train|evaluate <family> …`` to one module per model family.

Each family lives in ``engine/<stage>/<family>.py`` with ``main(argv) -> int``, so adding
a model adds a file, not a branch here.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys


def families(stage: str) -> list[str]:
    pkg = importlib.import_module(f"engine.{stage}")
    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_"))


def dispatch(stage: str, command: str, argv: list[str]) -> int:
    known = families(stage)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in known:
        print(
            f"usage: python -m engine.{command} {{{'|'.join(known)}}} [options]\n"
            f"       python -m engine.{command} <family> --help",
            file=sys.stderr,
        )
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    module = importlib.import_module(f"engine.{stage}.{argv[0]}")
    return int(module.main(argv[1:]) or 0)


def recorded_command(prefix: str, argv: list[str], output_option: str) -> str:
    """The command line a checkpoint stores to say how it was made.

    Where the files go does not change them, so ``output_option`` and its value are left
    out: the stored line reproduces the checkpoint wherever it is run.
    """
    kept, skip = [], False
    for arg in argv:
        if skip:  # the value of output_option
            skip = False
        elif arg == output_option:
            skip = True
        elif not arg.startswith(output_option + "="):
            kept.append(arg)
    return f"python -m {prefix} " + " ".join(kept)
