"""docs/ARCHITECTURE.md describes the code as it is: every path it names exists, every
number it states is the one a test enforces, and its claims about pages hold."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "ARCHITECTURE.md").read_text()


def named_paths() -> set[str]:
    """Every `path` in backticks that names a file or folder of this repository."""
    found = set()
    for raw in re.findall(r"`([^`\s]+)`", DOC):
        if "/" in raw and not raw.startswith(("?", "<")) and "<" not in raw and "*" not in raw:
            found.add(raw.rstrip("/"))
    return found


def test_every_path_the_document_names_exists():
    paths = named_paths()
    assert len(paths) >= 20, paths  # the parse found the document's paths
    missing = sorted(p for p in paths if not (ROOT / p).exists() and not p.startswith("shared/"))
    assert not missing, missing


def test_the_stated_page_rules_are_the_enforced_ones():
    from tests.app import test_page_rules as rules

    assert f"at most {rules.MAX_FUNCTION_LINES} lines" in DOC
    assert f"at most {rules.PAGE_BUDGET} lines" in DOC


def test_every_page_is_one_file_plus_at_most_one_helper():
    from catalog import PAGES

    studios = ROOT / "app" / "studios"
    for page in PAGES:
        assert page.path.count("/") == 1, page.path  # studios/<page>.py, not a folder
        stem = Path(page.path).stem
        helpers = [p for p in studios.glob(f"{stem}_*.py")]
        assert len(helpers) <= 1, helpers
    assert not [p for p in studios.iterdir() if p.is_dir() and p.name != "__pycache__"]


def test_the_import_contracts_it_names_are_configured():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contracts = config["contracts"]
    kinds = {c["type"] for c in contracts}
    assert {"forbidden", "layers", "acyclic_siblings"} <= kinds
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    order = [
        "engine.params",
        "engine.models.card",
        "engine.models.cards",
        "engine.models.registry",
        "engine.training",
        "engine.evaluation",
    ]
    flat = [name for layer in reversed(layers) for name in layer.split("|")]
    flat = [n.strip() for n in flat]
    assert [n for n in flat if n in order] == order  # the order the document states
    acyclic = next(c for c in contracts if c["type"] == "acyclic_siblings")
    assert not acyclic.get("ignore_imports"), "the document says no exception is listed"


def test_sections_said_to_be_fragments_are_fragments():
    """Alignment and Compare: input, figures, link and downloads in one fragment; Chat's step
    slider, Positional's and Transformer's sections and Memory's map are fragments."""
    studios = ROOT / "app" / "studios"
    for page in ("alignment", "compare", "positional", "transformer", "chat", "memory"):
        assert "@fragment" in (studios / f"{page}.py").read_text(), page  # kit.fragment
