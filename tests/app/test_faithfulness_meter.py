"""The faithfulness meter (issue 33) on the Alignment, Memory and Retrieval pages: its figure
has one row or column per input of the example shown, the numbers it shows are the engine's
for that example (``engine.analysis.faithfulness_*``), the shipped evaluation's numbers are
read from its file, 中文 renders translated, and bad input gives a message, not an exception."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import numpy as np
import pytest
from kit import i18n
from state import faithfulness as faithful
from streamlit.testing.v1 import AppTest
from views.faithfulness import NO, YES, row_scaled

from engine.analysis import faithfulness as F
from engine.analysis import faithfulness_memory, faithfulness_nmt, faithfulness_retrieval
from engine.analysis import retrieval as rag
from engine.data.babi import dataset
from engine.models import chat as chat_lib
from engine.models import registry
from tests.app.plotly_support import z_values
from tests.app.test_locales import english

APP = Path(__file__).resolve().parents[2] / "app"
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def english_afterwards():
    """Leave the process in English: outside a run, t() speaks the last run's language."""
    yield
    i18n._last = i18n.DEFAULT


def open_page(page: str, **params) -> AppTest:
    at = AppTest.from_file(str(APP / "studios" / f"{page}.py"), default_timeout=300)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def meter(at, key: str) -> dict:
    """The spec of the chart drawn under ``key``."""
    found = [c for c in at.get("plotly_chart") if c.proto.id.endswith(f"-{key}")]
    assert len(found) == 1, [c.proto.id for c in at.get("plotly_chart")]
    return json.loads(found[0].proto.spec)


def numbers(values) -> np.ndarray:
    """A trace's x or z as floats (Plotly sends numeric arrays as base64)."""
    return z_values(values)


def table(at):
    """The meter's table (the Memory page's every-task table, in its expander, is the other)."""
    every_task = {"restarts", "重启训练"}  # its column memory.col_restarts, en and 中文
    found = [d.value for d in at.dataframe if not every_task & set(d.value.columns)]
    assert len(found) == 1
    return found[0]


def shown(at) -> str:
    parts = [*at.markdown, *at.caption, *at.info, *at.warning, *at.error]
    return "\n".join(str(p.value) for p in parts)


def calm(at) -> None:
    """No traceback and no "something went wrong": a message the reader can act on."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def translated(at, spec: dict) -> None:
    """The meter's interface in Chinese: figure title, axis and panel titles, colour bar,
    legend, table headers."""
    layout = spec["layout"]
    assert CJK.search(layout["title"]["text"]), layout["title"]["text"]
    texts = [layout[a].get("title", {}).get("text", "") for a in layout if a.startswith("xaxis")]
    texts += [note["text"] for note in layout.get("annotations", [])]
    texts += [d["name"] for d in spec["data"] if d.get("name")]
    texts += [d["colorbar"]["title"]["text"] for d in spec["data"] if d.get("showscale")]
    texts += [str(c) for c in table(at).columns]
    left = [x for x in texts if english(x)]
    assert not left, left


# ---- the Alignment page: α beside erasing each source word --------------------------------


@pytest.fixture(scope="module")
def alignment():
    at = open_page("alignment", section="faithfulness")
    calm(at)
    return at


def test_alignment_meter_draws_the_engines_saliency_of_the_sentence_shown(alignment):
    at = alignment
    text, beam = at.text_area(key="nmt-text-en-fr").value, at.slider(key="nmt-beam").value
    tr = registry.default("en-fr", family="nmt").load()
    trace = tr.translate(text, beam)
    src, tgt = trace.inputs["tokens"], trace.outputs["tokens"]
    found = faithfulness_nmt.saliency(tr, src, tgt)
    spec = meter(at, "nmt-faithfulness")
    heats = [d for d in spec["data"] if d["type"] == "heatmap"]
    assert len(heats) == 3, "α, occlusion and gradient × input side by side"
    for heat, m in zip(heats, (found.alpha, found.occlusion, found.grad_x_input), strict=True):
        assert len(heat["x"]) == len(src) and len(heat["y"]) == len(tgt) + 1  # words, </s>
        z = numbers(heat["z"]).reshape(len(tgt) + 1, len(src))
        np.testing.assert_allclose(z, row_scaled(m), atol=1e-5)
    assert "row scaled" in json.dumps(spec["layout"]), "the figure says how it is scaled"
    rows = table(at)
    assert len(rows) == len(tgt) + 1
    for method in ("occlusion", "grad_x_input"):
        name = {"occlusion": "occlusion", "grad_x_input": "gradient × input"}[method]
        agree = found.agreement()[method]
        rho = [None if a.spearman is None else round(a.spearman, 3) for a in agree]
        shown_rho = [None if v in ("–", None) else float(v) for v in rows[f"{name}: ρ with α"]]
        assert shown_rho == pytest.approx(rho, abs=1e-3)
        assert list(rows[f"{name}: same top?"]) == [YES if a.top1 else NO for a in agree]
        mean = F.summarise(agree)
        assert f"mean Spearman ρ {mean['spearman']:.2f}" in shown(at)


def test_alignment_meter_states_the_shipped_evaluation_from_its_file(alignment):
    saved = faithful.evaluation("nmt")
    assert saved is not None, "assets/checkpoints holds the NMT faithfulness evaluation"
    text = shown(alignment)
    for method in ("attention", "occlusion", "grad_x_input"):
        assert f"{saved['aer'][method]:.3f}" in text, method
    assert saved["command"] in text


def test_alignment_meter_on_dates_sets_no_other_tasks_evaluation_beside_it():
    at = open_page("alignment", section="faithfulness", task="dates")
    calm(at)
    tokens = (
        registry.default("dates", family="nmt")
        .load()
        .tokens(at.text_area(key="nmt-text-dates").value)
    )
    heats = meter(at, "nmt-faithfulness")["data"]
    assert [len(h["x"]) for h in heats] == [len(tokens)] * 3
    assert faithful.evaluation("nmt")["command"] not in shown(at), "measured on en→fr only"


def test_alignment_meter_in_chinese():
    at = open_page("alignment", section="faithfulness", lang="zh")
    calm(at)
    translated(at, meter(at, "nmt-faithfulness"))
    assert "忠实吗？" in at.segmented_control(key="nmt-section").options


@pytest.mark.parametrize("text", ["", "xyzzy plugh frobozz", "</script><b>x</b> ?? 🙂", "hello"])
def test_alignment_meter_on_bad_input_gives_a_message(alignment, text):
    at = alignment
    at.text_area(key="nmt-text-en-fr").set_value(text).run()
    calm(at)
    if not text:  # the page's own message; nothing is translated
        assert not at.get("plotly_chart")
        return
    # Unknown words are read as <unk>, said above the answer; the meter reads them too.
    assert "<unk>" in shown(at)
    assert len(meter(at, "nmt-faithfulness")["data"]) == 3


# ---- the Memory page: p_i at each hop beside removing each fact ---------------------------


@pytest.fixture(scope="module")
def memory():
    at = open_page("memory", section="faithfulness", task="3", story="5")
    calm(at)
    return at


def test_memory_meter_draws_the_engines_removals(memory):
    at = memory
    name = at.selectbox(key="mem_model_task3").value
    reader = registry.get(name).load()
    sample = dataset(3, "test")[5]
    found = faithfulness_memory.remove_each(reader, sample)
    n, hops = len(found.delta), found.hops.shape[0]
    spec = meter(at, "mem-faithfulness")
    heat = next(d for d in spec["data"] if d["type"] == "heatmap")
    bars = [d for d in spec["data"] if d["type"] == "bar"]
    assert len(heat["y"]) == n and len(heat["x"]) == hops and len(bars) == 1
    assert len(bars[0]["y"]) == n
    # Each fact whole: "John travelled to t…" hid the room, all that told two facts apart.
    assert [label.split(". ", 1)[1] for label in heat["y"]] == list(sample.story)
    np.testing.assert_allclose(numbers(heat["z"]).reshape(n, hops), found.hops.T, atol=1e-4)
    np.testing.assert_allclose(numbers(bars[0]["x"]), found.delta, atol=1e-4)
    rows = table(at)
    assert len(rows) == hops
    agree = found.agreement()
    rho = [None if a.spearman is None else round(a.spearman, 3) for a in agree]
    assert [None if v in ("–", None) else float(v) for v in rows["ρ(p, Δ)"]] == rho
    assert list(rows["top fact = most needed?"]) == [YES if a.top1 else NO for a in agree]
    top = int(found.hops[-1].argmax())
    said = "changes the answer to" if found.changes()[top] else "leaves the answer"
    assert said in shown(at)


def test_memory_meter_states_the_shipped_evaluation_from_its_file(memory):
    saved = faithful.evaluation("memn2n")
    assert saved is not None
    task = saved["tasks"]["3"]
    text = shown(memory)
    assert " / ".join(f"{v:.2f}" for v in task["top_attended_is_most_needed"]) in text
    assert f"{saved['mean_last_hop_top_is_most_needed']:.2f}" in text


def test_memory_meter_in_chinese():
    at = open_page("memory", section="faithfulness", lang="zh")
    calm(at)
    translated(at, meter(at, "mem-faithfulness"))


@pytest.mark.parametrize(
    "story, question, says",
    [
        ("Mary moved to the bathroom.", "", "Type a question"),
        ("Zork flew to Mars.\nBlorp ate the moon.", "Where is Zork?", "outside the vocabulary"),
        ("</script><b>x</b>", "Where is <b>Mary</b>?", "outside the vocabulary"),
    ],
)
def test_memory_meter_on_bad_input_gives_a_message(story, question, says):
    at = open_page("memory", section="faithfulness", own="1", text=story, question=question)
    calm(at)
    assert says in shown(at)
    if question:  # a story read without its unknown words: the meter reads what is left
        assert len(table(at)) == 3
        assert "<b>" not in " ".join(m.value for m in at.markdown if "most attended" in m.value)


# ---- the Retrieval page: the chat model's mass beside dropping each passage --------------

needs_chat = pytest.mark.skipif(
    not chat_lib.available(), reason="the chat model is not converted: bash scripts/setup.sh"
)
STORY = dict(store="babi", task="1", story="2", tokens="6", context="story")


@pytest.fixture(scope="module")
def retrieval():
    at = open_page("retrieval", section="faithfulness", **STORY)
    calm(at)
    return at


@pytest.fixture(scope="module")
def story_answer():
    """The chat model (a copy of the page's) answering STORY's question from the whole
    story, and the engine's drops of it: (chat, trace, PassageRemoval)."""
    sample = dataset(1, "test")[2]
    chat = registry.chat().load()
    trace = rag.answer(
        chat, sample.question, rag.story_passages(sample), mode="story", max_new_tokens=6
    )
    return chat, trace, faithfulness_retrieval.drop_each(chat, trace)


@needs_chat
def test_retrieval_meter_draws_the_engines_drops(retrieval, story_answer):
    at = retrieval
    sample = dataset(1, "test")[2]
    chat, trace, found = story_answer
    assert f"**A (chat model):** {trace.outputs['answer'].split()[0]}" in shown(at)
    spec = meter(at, "ret-faithfulness")
    heat = next(d for d in spec["data"] if d["type"] == "heatmap")
    delta, gxi = (d for d in spec["data"] if d["type"] == "bar")
    assert len(heat["y"]) == len(sample.story) == len(delta["y"]) == len(gxi["y"])
    assert [label.split(". ", 1)[1] for label in heat["y"]] == list(sample.story)  # whole
    # Δ reads the answer's tokens teacher-forced: the page's batch wrote the same ones.
    np.testing.assert_allclose(numbers(delta["x"]), found.delta, atol=2e-3)
    np.testing.assert_allclose(numbers(gxi["x"]), found.grad_x_input, atol=2e-2)
    mass = numbers(heat["z"])
    np.testing.assert_allclose(mass, found.attention, atol=5e-3)  # the batch's float16 maps
    rows = table(at)
    shown_agree = F.agreement(mass, numbers(delta["x"]))
    assert float(rows.iloc[0]["ρ with the mass"]) == pytest.approx(shown_agree.spearman, abs=1e-3)
    assert rows.iloc[0]["same passage?"] == (YES if shown_agree.top1 else NO)


@needs_chat
def test_retrieval_drops_show_progress_and_stop_between_runs(story_answer):
    """The queue's job ticks once per run of the chat model and stops at the next run
    after Stop; left alone it returns the engine's own drops."""
    chat, trace, found = story_answer
    runs = len(trace.outputs["passages"]) + 2
    ticks, cancel = [], threading.Event()

    def progress(done, total, unit):
        ticks.append((done, total))
        if done == 2:
            cancel.set()

    assert faithful._drop_each(chat, trace, "runs", cancel, progress) is None
    assert ticks == [(0, runs), (1, runs), (2, runs)]
    ticks.clear()
    cancel.clear()
    whole = faithful._drop_each(chat, trace, "runs", cancel, lambda d, n, u: ticks.append((d, n)))
    assert [done for done, _ in ticks] == list(range(runs))
    np.testing.assert_allclose(whole.delta, found.delta, atol=1e-5)
    np.testing.assert_allclose(whole.grad_x_input, found.grad_x_input, atol=1e-4)


@needs_chat
def test_retrieval_meter_states_the_shipped_hit_rates_from_its_file(retrieval):
    saved = faithful.evaluation("retrieval")
    assert saved is not None
    record = saved["tasks"]["1"]
    text = shown(retrieval)
    assert f"supporting fact {record['occlusion_hit_rate']:.2f}" in text
    assert f"the most read one {record['attention_hit_rate']:.2f}" in text


@needs_chat
def test_retrieval_meter_in_chinese():
    at = open_page("retrieval", section="faithfulness", lang="zh", **STORY)
    calm(at)
    translated(at, meter(at, "ret-faithfulness"))


@needs_chat
def test_retrieval_meter_without_passages_gives_a_message():
    at = open_page("retrieval", section="faithfulness", **(STORY | {"context": "none"}))
    calm(at)
    assert "nothing to drop" in shown(at)
    assert not [c for c in at.get("plotly_chart") if c.proto.id.endswith("-ret-faithfulness")]
