"""The Home page says which models this project trained and which it ships pretrained,
as the model registry knows them (a card with no training command was trained elsewhere)."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from engine.models import registry

MAIN = Path(__file__).resolve().parents[2] / "app" / "main.py"


def blocks() -> dict[str, str]:
    """The page's "trained" and "pretrained" lists, by their headings."""
    at = AppTest.from_file(str(MAIN), default_timeout=180).run()
    assert not at.exception, [e.value for e in at.exception]
    found = {}
    for m in at.markdown:
        if m.value.startswith("**Trained by this project**"):
            found["trained"] = m.value
        elif m.value.startswith("**Shipped pretrained**"):
            found["pretrained"] = m.value
    return found


def test_trained_and_pretrained_models_come_from_the_registry():
    shown = blocks()
    cards = registry.cards()
    pretrained = [str(c.title) for c in cards if c.train_command is None]
    trained = [c for c in cards if c.train_command is not None]
    assert pretrained and trained
    for title in pretrained:  # MiniLM (and any chat model) under "pretrained" only
        assert title in shown["pretrained"] and title not in shown["trained"], title
    for family in {c.family for c in trained}:
        n = sum(c.family == family for c in trained)
        paper = next(c.paper for c in trained if c.family == family)
        assert f"({paper}): {n} checkpoint(s)" in shown["trained"], (family, shown["trained"])
