"""AppTest for the Memory (MemN2N) page: generated and own stories, bad input, the map."""

import pytest


@pytest.fixture(scope="module")
def memory(request):
    from catalog import APP_DIR
    from streamlit.testing.v1 import AppTest

    def _open():
        at = AppTest.from_file(str(APP_DIR / "studios" / "memory.py"), default_timeout=180)
        at.run()
        assert not at.exception
        return at

    return _open


def charts(at):
    return at.get("plotly_chart")


def own(at, story, question="Where is Mary?"):
    at.radio(key="mem_source").set_value("own").run()
    at.text_area(key="mem_story").set_value(story)
    at.text_input(key="mem_question").set_value(question)
    at.run()
    assert not at.exception
    return at


def test_generated_story_shows_answer_heatmap_story_and_map(memory):
    at = memory()
    assert any("**A:**" in m.value for m in at.markdown)
    assert len(charts(at)) == 2  # answer bars, sentences × hops
    assert at.get("html"), "the shaded story"
    at.select_slider(key="mem_hop").set_value("hop 1").run()
    assert not at.exception
    # The UMAP map is its own section, drawn when picked.
    at.segmented_control(key="mem_section").set_value("map").run()
    assert not at.exception and len(charts(at)) == 1
    at.radio(key="mem_colour").set_value("entity").run()
    assert not at.exception and len(charts(at)) == 1


def test_every_task_answers(memory):
    at = memory()
    for task in at.selectbox(key="mem_task").options[:4]:
        at.selectbox(key="mem_task").set_value(int(task.split(":")[0])).run()
        assert not at.exception, task
        assert any("**A:**" in m.value for m in at.markdown)


def test_measured_accuracy_of_the_shown_model_is_stated(memory):
    """The shipped evaluation's numbers appear beside the model they measure, and only
    beside that model."""
    from engine.models import registry

    measured = registry.default("babi").saved_results()["tasks"]["16"]
    at = memory()
    at.selectbox(key="mem_task").set_value(16).run()
    assert not at.exception
    model = at.selectbox(key="mem_model_task16")
    assert model.value == measured["model"], "a new task starts from its better model"
    text = " ".join(c.value for c in at.caption)
    assert f"accuracy **{measured['accuracy']:.3f}**" in text
    assert f"{measured['paper_accuracy']:.3f}" in text
    assert any("Measured on every task" in e.label for e in at.expander)
    other = [m for m in model.options if m != measured["model"]]
    if other:
        model.set_value(other[0]).run()
        assert "accuracy **" not in " ".join(c.value for c in at.caption)


def test_own_story_with_unknown_words_names_them(memory):
    at = own(memory(), "Mary went to the kitchen. Zorblax flew to the moon.")
    notes = " ".join(i.value for i in at.info)
    assert "zorblax" in notes and "moon" in notes
    assert any("**A:**" in m.value for m in at.markdown)


def test_long_story_keeps_the_latest_fifty(memory):
    story = "\n".join(["John went to the garden.", "Mary went to the office."] * 30)
    at = own(memory(), story)
    assert any("earliest 10 were left out" in i.value for i in at.info)


@pytest.mark.parametrize(
    "story, question, expected",
    [
        ("", "Where is Mary?", "Write a story"),
        ("Mary went to the kitchen.", "", "Type a question"),
        ("1 Mary went home.\n3 Where is Mary?\thome\t1", "", "Line 2"),
        ("x" * 25_000, "Where is Mary?", "limit"),
        ("Mary went to the kitchen.", "Qwerty zxcv?", "vocabulary"),
    ],
)
def test_bad_input_gets_a_message_not_a_traceback(memory, story, question, expected):
    at = own(memory(), story, question)
    shown = " ".join(x.value for x in (*at.info, *at.warning, *at.error))
    assert expected in shown
