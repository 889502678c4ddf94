"""Every shipped deck's views name a real page and values that page accepts: opened on the
page itself (the lesson's "open on the page" link), nothing is dropped as unusable and the
section shown is the one the step names."""

from pathlib import Path

import pytest
from catalog import PAGES
from kit import decks
from kit.i18n import catalog
from state.lessons import results
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "app"


def views() -> list[decks.View]:
    found = {}
    for name, files in decks.shipped().items():
        for lang in files:
            for step in decks.load(name, lang, results).steps:
                found[step.view.link()] = step.view
    return list(found.values())


def dropped_note(name: str, notes: list[str]) -> bool:
    """The note that a link's ``name`` was dropped, in either form (with the value it held
    and what the page takes, or without, where no phrase says it)."""
    said = catalog("en")["links.ignored"].format(name=name)
    return any(n == said or n.startswith(said.split(" (")[0] + ":") for n in notes)


def test_every_deck_view_names_a_page_of_the_studio():
    pages = {p.url for p in PAGES}
    assert {v.page for v in views()} <= pages


@pytest.mark.parametrize("view", views(), ids=lambda v: v.link()[:60])
def test_a_deck_view_opens_on_its_page_as_linked(view):
    path = next(p.path for p in PAGES if p.url == view.page)
    at = AppTest.from_file(str(APP / path), default_timeout=300)
    for key, value in view.params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    notes = [el.value for el in at.info]
    dropped = [k for k in view.params if dropped_note(k, notes)]
    assert not dropped, dropped
    if "section" in view.params:
        assert at.query_params["section"] in (view.params["section"], [view.params["section"]])


def test_the_check_can_fail():
    """A section the page does not have is dropped with a note, which the test above sees."""
    at = AppTest.from_file(str(APP / "studios/positional.py"), default_timeout=300)
    at.query_params["section"] = "head"
    at.run()
    assert dropped_note("section", [el.value for el in at.info])
