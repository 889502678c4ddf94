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


def coverage_html(at) -> str:
    return " ".join(h.proto.body for h in at.get("html") if "kit-coverage" in h.proto.body)


def test_unknown_word_is_marked_and_a_replacement_applies(at):
    at.text_area[0].set_value("The zorblax signed the treaty.").run()
    assert not at.exception
    marks = coverage_html(at)
    assert "kit-unknown" in marks and "zorblax" in marks
    assert marks.count("kit-known") == 5  # the, signed, the, treaty, .
    offered = at.button(key="nmt-fix-1-0")
    replacement = offered.label
    offered.click().run()
    assert not at.exception
    assert at.text_area[0].value == f"The {replacement} signed the treaty."
    assert "kit-unknown" not in coverage_html(at)
    assert any("A sentence of the grammar" in s.value for s in at.success)


def test_apply_all_replaces_every_unknown_word(at):
    at.text_area[0].set_value("The minister didn't sign the treatys.").run()
    at.button(key="nmt-fix-all").click().run()
    assert not at.exception
    assert at.text_area[0].value == "The minister did not sign the treaty."
    assert any("active verb" in s.value and "negation" in s.value for s in at.success)


def test_known_words_in_an_uncovered_construction_are_explained(at):
    at.text_area[0].set_value("The exam was difficult.").run()
    assert not at.exception
    assert "kit-unknown" not in coverage_html(at)
    assert any("stop at “difficult”" in i.value for i in at.info)


def test_vocabulary_and_patterns_open_and_filter(at):
    at.button(key="nmt-browse").click().run()
    assert not at.exception
    assert at.segmented_control(key="nmt-section").value == "vocabulary"
    assert "What the English → French models know" in [h.value for h in at.header]
    words, patterns = at.dataframe[0].value, at.dataframe[1].value
    assert len(words) > 900 and "traité (m)" in set(words["French"])
    assert len(patterns) == 13 and "Le professeur aime le livre." in set(patterns["its French"])
    at.text_input(key="nmt-vocab-query").set_value("treat").run()
    assert set(at.dataframe[0].value["English"]) == {"treaty", "treatment"}


def test_dates_task_has_no_grammar_check(at):
    at.radio(key="nmt-task").set_value("dates").run()
    assert not at.exception
    assert not coverage_html(at)
    assert "vocabulary" not in at.segmented_control(key="nmt-section").options
