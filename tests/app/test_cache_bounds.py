"""Every cache in the app is bounded (entries or age), so memory stays flat over a class."""

import re
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
CACHE = re.compile(r"@st\.cache_(data|resource)(\((?P<args>[^)]*)\))?")


def test_every_cache_states_max_entries_or_ttl():
    unbounded = []
    for path in APP.rglob("*.py"):
        for match in CACHE.finditer(path.read_text()):
            args = match.group("args") or ""
            if "max_entries" not in args and "ttl" not in args:
                unbounded.append(f"{path.relative_to(APP)}: {match.group(0)}")
    assert not unbounded, unbounded
