"""Keep a benchmark's last-line JSON as ``bench/results/<name>.json``, stamped.

Every script in ``bench/`` prints one JSON object as its last line; ``save`` writes the
same object with what a reader needs to judge it: the date, the command line, the machine
load (``/proc/loadavg``: the cores are shared, and load inflates wall-clock times several
fold) and the host. ``python -m bench.report`` writes ``bench/RESULTS.md`` from these
files; git keeps their history.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shlex
import sys
from importlib import metadata
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
STAMP = ("date", "command", "load")


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages, as /proc/loadavg states them."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:  # not Linux
        return " ".join(f"{x:.2f}" for x in os.getloadavg())


def host() -> dict:
    """What the numbers depend on: cores, CPU model, memory, Python and torch versions."""
    facts = {
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
    }
    info = Path("/proc/cpuinfo")
    if info.exists():
        models = [
            ln.split(":", 1)[1].strip()
            for ln in info.read_text().splitlines()
            if ln.startswith("model name")
        ]
        facts["cpu"] = models[0] if models else ""
    mem = Path("/proc/meminfo")
    if mem.exists():
        kib = int(mem.read_text().split()[1])  # MemTotal, the first line
        facts["memory_gib"] = round(kib / 2**20, 1)
    try:  # the version without importing torch (a second of start-up)
        facts["torch"] = metadata.version("torch")
    except metadata.PackageNotFoundError:
        pass
    return facts


def stamp() -> dict:
    script = Path(sys.argv[0])
    where = f"bench/{script.name}" if script.parent.name == "bench" else str(script)
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": shlex.join(["python", where, *sys.argv[1:]]),
        "load": load_average(),
    }


def save(result: dict, name: str | None = None, *, by: str | None = None) -> dict:
    """Write ``result`` to ``bench/results/<name>.json`` (default: the script's name) and
    return it unchanged, so a script prints what it saved.

    ``by`` names a part of ``result`` measured item by item (``pages``): items this run
    did not measure are kept from the file, each with its own date, command and load.
    """
    name = name or Path(sys.argv[0]).stem
    path = RESULTS / f"{name}.json"
    now = stamp()
    kept = dict(result)
    if by is not None:
        earlier = json.loads(path.read_text())["result"].get(by, {}) if path.exists() else {}
        kept[by] = earlier | {k: dict(v) | now for k, v in result.get(by, {}).items()}
    saved = {"name": name, **now, "host": host(), "source": f"bench/{Path(sys.argv[0]).name}"}
    RESULTS.mkdir(exist_ok=True)
    path.write_text(json.dumps(saved | {"result": kept}, indent=1, ensure_ascii=False) + "\n")
    return result
