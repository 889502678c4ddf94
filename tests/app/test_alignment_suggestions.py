"""The Alignment page's replacements by meaning: an everyday sentence with unknown words
becomes, in one click, a sentence of the grammar, and it translates."""

import pytest
from kit.i18n import md_escape
from state import nmt as state

from engine.data import coverage as cv


@pytest.fixture
def at(page):
    return page("alignment")


def coverage_html(at) -> str:
    return " ".join(h.proto.body for h in at.get("html") if "kit-coverage" in h.proto.body)


def headings(at) -> list[str]:
    return [m.value.removeprefix("### ") for m in at.markdown if m.value.startswith("### ")]


@pytest.mark.parametrize("typed", ["My brother doesn't like fish?", "Tom bought a new bicycle!"])
def test_one_click_makes_an_everyday_sentence_translate(at, typed):
    at.text_area[0].set_value(typed).run()
    assert not at.exception
    assert "kit-unknown" in coverage_html(at)
    button = at.button(key="nmt-fix-all")
    expected = cv.detokenize(cv.coverage(typed, meanings=state.meanings).replaced())
    assert md_escape(expected) in button.label
    button.click().run()
    assert not at.exception
    assert at.text_area[0].value == expected
    assert "kit-unknown" not in coverage_html(at)
    assert any("A sentence of the grammar" in s.value for s in at.success)
    assert not at.warning  # every word known to the model, no card warning
    translation = state.translate(state.default("en-fr"), expected, 5).outputs["translation"]
    assert md_escape(translation) in headings(at)


def test_suggestions_are_by_meaning_and_punctuation_is_not_unknown(at):
    at.text_area[0].set_value("She drinks a cup of tea every morning?").run()
    assert not at.exception
    tea = [b.label for b in at.button if b.key and b.key.startswith("nmt-fix-5-")]
    assert tea and not {"eva", "ten", "a"} & set(tea)
    marks = coverage_html(at)
    assert marks.count("kit-unknown") == 4  # she, drinks, tea, morning; never "?"
