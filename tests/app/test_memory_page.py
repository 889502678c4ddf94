"""AppTest for the Memory (MemN2N) page: generated and own stories, bad input, the map."""

import json
import math
import re

import numpy as np
import pytest

from tests.app.page_support import messages
from tests.app.plotly_support import z_values


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
        ("约翰去了厨房。玛丽去了花园。", "Where is John?", "read as bAbI's English"),
        ("Mary went to the kitchen.", "约翰在哪里？", "no English word"),
    ],
)
def test_bad_input_gets_a_message_not_a_traceback(memory, story, question, expected):
    at = own(memory(), story, question)
    shown = " ".join(x.value for x in (*at.info, *at.warning, *at.error))
    assert expected in shown


# -- the training timeline (issue 21): a step slider over a run's snapshots -------------


def redirect_timelines(monkeypatch, directory):
    """Read every timeline from ``directory`` (the checkpoints stay where they are)."""
    from engine import timeline

    real = timeline.paths
    monkeypatch.setattr(timeline, "paths", lambda name, _: real(name, directory))


@pytest.fixture(scope="module")
def quick_timeline(tmp_path_factory):
    """A task-1 model's timeline from a quick run of the training command (seconds)."""
    from engine import timeline
    from engine.training.memn2n import main

    out = tmp_path_factory.mktemp("memn2n-timeline")
    argv = ["--task", "1", "--quick", "--restarts", "1", "--jobs", "1", "--out", str(out)]
    assert main(argv) == 0
    return out, timeline.load("memn2n-task1", out)


def open_training(at, model="memn2n-task1"):
    at.selectbox(key="mem_task").set_value(1).run()
    at.selectbox(key="mem_model_task1").set_value(model).run()
    at.segmented_control(key="mem_section").set_value("training").run()
    assert not at.exception
    return at


def test_training_step_slider_redraws_the_probe_hops_beside_the_curves(
    memory, quick_timeline, monkeypatch
):
    directory, tl = quick_timeline
    redirect_timelines(monkeypatch, directory)
    at = open_training(memory())
    slider = at.select_slider(key="mem_step_memn2n-task1")
    assert [int(s) for s in slider.options] == tl.steps and slider.value == tl.steps[-1]
    assert len(charts(at)) == 2  # sentences × hops at the step, the curves
    curves = json.loads(charts(at)[1].proto.spec)
    assert {d["name"] for d in curves["data"]} == {"training", "validation"}
    marked = [a["text"] for a in curves["layout"]["annotations"]]
    assert "linear start ends" in marked and "kept" in marked
    # Both drawn for their columns of the narrowest page (3 : 2): the curves' panel titles
    # wrapped to the plot ("loss (cross-entropy per question)" was cut at its edge), and the
    # hops map's numbers left to the hover where its cells are too small for them.
    from kit.fonts import label_px
    from views.heatmap import column_px
    from views.timeline import LEGEND_FONT

    titles = [a["text"] for a in curves["layout"]["annotations"] if "<br>" in a["text"]]
    lines = [x for title in titles for x in title.split("<br>")]
    assert "loss" in lines[0] and label_px(lines, LEGEND_FONT) <= column_px(0.4) - 60, lines
    assert "texttemplate" not in json.loads(charts(at)[0].proto.spec)["data"][0]
    for step in (tl.steps[0], tl.steps[len(tl.steps) // 2], tl.steps[-1]):
        at.select_slider(key="mem_step_memn2n-task1").set_value(step).run()
        assert not at.exception, step
        shown = tl.probes[tl.at(step)][0]
        said = f"At step {step:,} the model answers `{shown.outputs['answer']}`"
        assert any(said in m.value for m in at.markdown), step
        z = json.loads(charts(at)[0].proto.spec)["data"][0]["z"]  # sentences × hops, base64
        hops = z_values(z)
        want = shown.maps["memory"].weights[:, 0, 0, :].T
        assert np.allclose(hops.reshape(want.shape), want, atol=1e-3)
    at.selectbox(key="mem_probe_memn2n-task1").set_value(len(tl.probes[0]) - 1).run()
    assert not at.exception and len(charts(at)) == 2


def test_a_step_in_the_link_that_was_not_saved_is_ignored(memory, quick_timeline, monkeypatch):
    directory, tl = quick_timeline
    redirect_timelines(monkeypatch, directory)
    from catalog import APP_DIR
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP_DIR / "studios" / "memory.py"), default_timeout=180)
    at.query_params.update(task="1", model="memn2n-task1", section="training", step="7777777")
    at.run()
    assert not at.exception
    assert at.select_slider(key="mem_step_memn2n-task1").value == tl.steps[-1]


def test_missing_timeline_is_a_message_and_the_model_still_answers(memory, monkeypatch, tmp_path):
    redirect_timelines(monkeypatch, tmp_path)  # nothing there
    at = open_training(memory())
    assert "No training timeline is shipped for memn2n-task1" in messages(at)
    assert "python -m engine.train memn2n" in messages(at)
    assert any("**A:**" in m.value for m in at.markdown)  # the finished model answers
    at.segmented_control(key="mem_section").set_value("hops").run()
    assert not at.exception and len(charts(at)) == 2


def test_damaged_timeline_is_a_message(memory, monkeypatch, tmp_path):
    from engine import timeline

    weights, meta = timeline.paths("memn2n-task1", tmp_path)
    weights.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{")  # cut short, as by a broken copy
    meta.write_text('{"format": "attention-studio-timeline", "version": 1, "steps": [0, 10')
    redirect_timelines(monkeypatch, tmp_path)
    at = open_training(memory())
    assert "training timeline of memn2n-task1 cannot be read" in messages(at)
    assert not charts(at)
    assert any("**A:**" in m.value for m in at.markdown)
    assert any("Measured on every task" in e.label for e in at.expander)


def test_every_task_table_has_short_stories_the_paper_gap_and_the_restarts(memory):
    from engine.models import registry

    saved = registry.default("babi").saved_results()["tasks"]
    at = memory()
    (table,) = [d.value for d in at.dataframe if "restarts" in d.value.columns]
    for column in ("short stories (2–4 sentences)", "paper − ours", "restarts"):
        assert column in table.columns
    first = next(iter(saved.values()))
    assert table["short stories (2–4 sentences)"].iloc[0] == pytest.approx(first["short_accuracy"])
    assert table["paper − ours"].iloc[0] == pytest.approx(first["paper_miss"])
    # Someone else's place: a number for the yes/no tasks (the Daniel story's kind), a gap
    # else (a number column still: the table draws "–" there, and sorts it as numbers).
    column = table["short, asked about someone else's place"]
    assert column.dtype.kind == "f"
    elsewhere = dict(zip(table.iloc[:, 0], column, strict=True))
    for task, row in saved.items():
        cell = next(v for k, v in elsewhere.items() if k.startswith(f"{task}:"))
        want = row.get("elsewhere_accuracy")
        assert math.isnan(cell) if want is None else cell == pytest.approx(want)
    assert column.notna().sum() == 3  # tasks 6, 9 and 10


def test_the_hops_are_named_in_the_readers_language():
    """The 中文 page named its columns "hop 1", beside a slider saying 第 3 跳: numbered
    now (level at every width), under the axis title in the reader's language."""
    from catalog import APP_DIR
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP_DIR / "studios" / "memory.py"), default_timeout=180)
    at.query_params.update(section="hops", task="1", story="0", lang="zh")
    at.run()
    assert not at.exception
    hops = next(json.loads(c.proto.spec) for c in charts(at) if "跳" in c.proto.spec)
    assert list(hops["data"][0]["x"]) == ["1", "2", "3"]
    assert hops["layout"]["xaxis"]["title"]["text"] == "跳（hop）"
    assert hops["layout"]["xaxis"]["tickangle"] == 0


def test_every_hop_is_labelled_beside_long_sentences():
    """Long story sentences once took the hop map's width: only "hop 1" was labelled."""
    from views.memory import hops_figure

    from engine.trace import AttentionMap

    long = [f"Sentence {i} tells of a long walk through the garden and the hall." for i in range(6)]
    w = np.full((3, 1, 1, 6), 1 / 6, dtype=np.float32)
    amap = AttentionMap(w, ["q"], long, "memory", layer_labels=[f"hop {h}" for h in (1, 2, 3)])
    fig = hops_figure(amap, [2])
    ticks = fig.layout.xaxis.ticktext or fig.layout.xaxis.tickvals or list(fig.data[0].x)
    assert list(ticks) == ["1", "2", "3"] and fig.layout.xaxis.tickangle == 0


@pytest.mark.parametrize("present", ["0", "1"])
def test_the_projector_shows_each_sentence_whole_on_the_hops_map(present):
    """On a projector (presenter mode: no sidebar, the map's column ~630 px at 1024) the rows
    said "John went to the be…" with a third of the column empty beside them."""
    from catalog import APP_DIR
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP_DIR / "studios" / "memory.py"), default_timeout=180)
    at.query_params.update(section="hops", task="1", story="0", present=present)
    at.run()
    assert not at.exception
    hops = next(
        json.loads(c.proto.spec) for c in charts(at) if "per hop" in c.proto.spec
    )  # the sentences × hops map
    rows = list(hops["data"][0]["y"])
    assert list(hops["data"][0]["x"]) == ["1", "2", "3"]
    whole = [r for r in rows if not r.endswith("…")]
    if present == "1":
        assert len(whole) == len(rows), rows
    else:
        assert len(max(rows, key=len)) <= len("★ 99. ") + 20


def test_the_answer_line_names_the_weight_tying_in_the_readers_language():
    """The model's config says "adjacent"; a Chinese reader read "adjacent 权重共享"."""
    from catalog import APP_DIR
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP_DIR / "studios/memory.py"), default_timeout=120)
    at.query_params["lang"] = "zh"
    at.run()
    assert not at.exception
    line = next(m.value for m in at.markdown if "权重共享" in m.value)
    assert "相邻层 权重共享" in line and "adjacent" not in line


def test_the_hops_map_and_answer_bars_fit_their_columns_on_the_narrowest_page():
    """At 1024 px with the sidebar open the hops map's title, wrapped to the whole page,
    ran off its column ("… (★ = supporting fa"), and a list answer ("milk,football,apple")
    left the bars beside it a few pixels."""
    from kit import exports
    from kit.fonts import label_px
    from views.heatmap import NARROW_PX, TITLE_FONT
    from views.memory import ANSWER_CHARS, answer_bars, hops_figure

    from engine.trace import AttentionMap

    w = np.full((3, 1, 1, 2), 0.5, dtype=np.float32)
    amap = AttentionMap(w, ["q"], ["a.", "b."], "memory", layer_labels=["hop 1", "hop 2", "hop 3"])
    whole = hops_figure(amap, [1])
    top, height = whole.layout.margin.t, whole.layout.height
    fig = exports.in_column(whole, 2 / 3)  # sections.memory.draw_hops: st.columns([1, 2])
    lines = [re.sub("<[^>]+>", "", x) for x in fig.layout.title.text.split("<br>")]
    room = NARROW_PX * 2 / 3 - exports.COLUMN_GAP_PX
    assert len(lines) == 3 and max(label_px([x], TITLE_FONT) for x in lines) <= room, lines
    assert (fig.layout.margin.t, fig.layout.height) == (top + 24, height + 24)  # on top
    assert fig.layout.meta is None  # once: drawn again, it does not grow again
    bars = answer_bars(["milk,football,apple", "no"], [0.9, 0.1]).data[0]
    assert max(len(n) for n in bars.y) == ANSWER_CHARS and "milk,football,apple" in bars.customdata
