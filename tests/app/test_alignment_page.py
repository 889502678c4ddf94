"""The Alignment page through Streamlit's AppTest: every section renders, bad input is explained."""

import pytest


@pytest.fixture
def at(page):
    return page("alignment")


def markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def show(at, section: str):
    """Pick one of the page's sections: only the chosen one is drawn."""
    at.segmented_control(key="nmt-section").set_value(section).run()
    assert not at.exception
    return at


def test_default_example_renders_every_section(at):
    assert not at.exception
    headers = []
    for section in ("alignment", "steps", "side-by-side", "head-view", "measured"):
        headers += [h.value for h in show(at, section).header]
    for h in (
        "Soft alignment α_ij",
        "Step through the decoding",
        "Inside the score at this step",
        "Side by side",
        "bertviz head view of this cross-attention",
        "Measured on the test split",
    ):
        assert h in headers
    show(at, "alignment")
    assert at.text_area[0].value.startswith("The agreement on the european economic area")
    assert [m.label for m in at.metric][:2] == [
        "AER (argmax vs sure + possible)",
        "AER (argmax vs sure only)",
    ]


def test_empty_input_prompts(at):
    at.text_area[0].set_value("   ").run()
    assert not at.exception
    assert any("Type a sentence" in i.value for i in at.info)


def test_over_long_input_names_the_limit(at):
    at.text_area[0].set_value("the minister " * 30).run()
    assert not at.exception
    assert any("limit here is 50" in i.value for i in at.info)


def test_unknown_words_are_listed_and_typed_text_survives_reruns(at):
    at.text_area[0].set_value("The zorblax signed the **treaty** <script>.").run()
    assert not at.exception
    warning = " ".join(w.value for w in at.warning)
    assert "zorblax" in warning and "script" in warning
    at.slider(key="nmt-beam").set_value(2).run()
    assert at.text_area[0].value == "The zorblax signed the **treaty** <script>."


def test_step_slider_and_beam_change(at):
    show(at, "steps")
    at.slider(key="nmt-step").set_value(2).run()
    assert not at.exception
    assert "At step **2**" in markdown(at)


def test_drawn_sentence_has_gold(at):
    at.button[0].click().run()
    assert not at.exception
    assert len(at.metric) >= 2


def test_dates_task(at):
    at.radio(key="nmt-task").set_value("dates").run()
    assert not at.exception
    assert at.text_area[0].value == "Tuesday, 3 May 1979"
    at.text_area[0].set_value("x" * 41).run()
    assert any("40" in i.value for i in at.info)
