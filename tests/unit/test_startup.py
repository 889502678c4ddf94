"""The home page starts without torch or numpy; the modules a card names load on first use.

Importing torch costs about a second here (FIELD-NOTES), so the first page painted after
``streamlit run`` (``bench/startup.py``) must not wait for it: card discovery reads the
checkpoints' JSON, and a card imports its family's model module (``runtime_module``) on
its first load or trace.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from engine.models import card, registry
from engine.models.cards.pretrained import ChatCard

ROOT = Path(__file__).resolve().parents[2]
# numpy too: about 50-110 ms of the first page's script, which draws line charts only.
HEAVY = ("torch", "transformers", "umap", "triton", "numpy")

# The router and the home page as a user lands on them, in a fresh interpreter: what was
# loaded when the page was drawn (the preload's start, after it), and after the whole run.
HOME = f"""
import sys
sys.path.insert(0, {str(ROOT / "app")!r})
from streamlit.testing.v1 import AppTest
from state import preload
drawn, start = [], preload.start
def recorded():
    drawn.extend(m for m in {HEAVY!r} if m in sys.modules)
    return start()
preload.start = recorded
at = AppTest.from_file({str(ROOT / "app" / "main.py")!r}, default_timeout=120).run()
assert not at.exception, [e.value for e in at.exception]
assert any(m.value.startswith("**Trained by this project**") for m in at.markdown)
print(" ".join(drawn) or "-")
print(" ".join(m for m in {HEAVY!r} if m in sys.modules))
"""


def loaded_after(code: str) -> set[str]:
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return set(run.stdout.split())


def test_the_home_page_runs_without_importing_torch_or_numpy():
    """Drawn without either; then numpy alone, in the page's thread, before the preload
    thread imports torch (state/preload.py: a half-imported numpy in sys.modules broke a
    figure drawn meanwhile)."""
    run = subprocess.run(
        [sys.executable, "-c", HOME], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    drawn, after = run.stdout.splitlines()[-2:]
    assert drawn == "-" and after.split() == ["numpy"]


def test_listing_every_card_and_what_it_states_imports_no_torch_or_numpy():
    code = (
        "import sys\nfrom engine.models import registry\n"
        "cards = registry.cards()\n"
        "assert cards and all(str(c.title) and c.paper and c.task for c in cards)\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    assert loaded_after(code) == set()


def named_modules() -> list[str]:
    families = {type(c) for c in registry.cards()} | {ChatCard}
    return sorted({c.runtime_module for c in families} | {card.TIMELINE, card.VARIANTS})


@pytest.mark.parametrize("module", named_modules())
def test_a_module_named_by_the_cards_never_imports_the_card_layer_back(module):
    """A name hides the import from lint-imports; this keeps the cycle it could hide out."""
    imported = grimp.build_graph("engine").find_upstream_modules(module)
    above = ("engine.models.card", "engine.models.cards", "engine.models.registry")
    back = sorted(m for m in imported if m.startswith(above))
    assert not back, f"{module} imports {back}"


def test_the_check_finds_a_module_that_imports_the_card_layer():
    imported = grimp.build_graph("engine").find_upstream_modules("engine.evaluation.memn2n")
    assert "engine.models.cards.memn2n" in imported
