"""AppTest for Chat › What eviction loses (issue 32): the press sweep's curves as measured
(every number from the shipped result), where perplexity hides a loss, the baseline per
task, the CSV, one example asked live under one press, the lesson step, and 中文."""

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.analysis import press_eval
from engine.checkpoints import load_result
from engine.evaluation import cache as sweep
from engine.models import chat as chat_lib
from tests.app.test_locales import english, interface_strings

PAGE = Path(__file__).resolve().parents[2] / "app" / "studios" / "chat.py"
pytestmark = pytest.mark.skipif(
    not chat_lib.available(), reason="the chat model is not converted: bash scripts/setup.sh"
)
SHIPPED = load_result(sweep.RESULT)


def open_presses(**params) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=600)
    at.query_params.update(tokens="2", section="presses", **params)
    return at.run()


def specs(at) -> dict[str, dict]:
    out = {}
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        out[spec["layout"]["title"]["text"].replace("<br>", " ")] = spec
    return out


def test_the_sweep_s_result_is_shipped():
    assert SHIPPED is not None, "python -m engine.evaluate cache --summary …"
    assert SHIPPED["tasks"] and all(s["n"] >= 1 for s in SHIPPED["tasks"].values())


@pytest.fixture(scope="module")
def page():
    at = open_presses()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_curves_draw_the_measured_accuracy_and_perplexity(page):
    at = page
    name = at.selectbox(key="chat-ctask").value
    task = SHIPPED["tasks"][name]
    assert task["counts"] or not any(s["counts"] for s in SHIPPED["tasks"].values())
    figs = specs(at)
    acc = next(s for k, s in figs.items() if k.startswith("Accuracy against compression"))
    ppl = next(s for k, s in figs.items() if k.startswith("Perplexity over the same"))
    presses = [p for p in task["presses"] if p != "full"]
    assert len(acc["data"]) == len(presses) + 1  # a line per press and the full cache
    for line, p in zip(acc["data"], presses, strict=False):
        by = task["presses"][p]
        want = [task["full_accuracy"]] + [by[str(r)]["accuracy"] for r in line["x"][1:]]
        assert line["y"] == pytest.approx(want)
    assert ppl["layout"]["yaxis"]["type"] == "log"
    assert ppl["data"][-1]["y"][0] == pytest.approx(task["full_ppl"])
    said = " ".join(m.value for m in at.markdown)
    assert f"The full cache answers **{task['full_accuracy']:.2f}**" in said
    hidden = press_eval.hidden_losses(task)
    if hidden:
        assert f"Perplexity hides {len(hidden)} of the" in said
    else:
        assert "perplexity does not hide what eviction costs" in said
    table = at.dataframe[0].value
    assert len(table) == len(SHIPPED["tasks"])


def test_the_live_example_waits_for_ask(page):
    """The curves are a figure at once; the live example (tens of seconds) runs only when
    asked, or from a link that asked."""
    assert any("Press Ask to run this example" in c.value for c in page.caption)
    assert not any(k.startswith("What StreamingLLM") for k in specs(page))


def test_one_needle_under_one_press():
    """A RULER-style example from the book: the full cache's answer, the press's, and
    which positions the press kept."""
    at = open_presses(ptask="niah_number", press="streaming_llm", ratio="0.875", ask="1")
    assert not at.exception, [e.value for e in at.exception]
    said = " ".join(m.value for m in at.markdown)
    assert "**Full cache** (keeps 100% of the context)" in said
    assert "**StreamingLLM (sinks + recent)** (keeps 12% of the context)" in said, said
    spec = next(s for k, s in specs(at).items() if "What StreamingLLM" in k)
    assert spec["layout"]["shapes"], "the answer's place in the context is marked"
    assert any("StreamingLLM keeps the first 4 tokens" in c.value for c in at.caption)
    # another ratio of the same example reuses its prefill: the answers differ, the question not
    at.select_slider(key="chat-ratio").set_value(0.25)
    next(b for b in at.button if b.label == "Ask").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "(keeps 75% of the context)" in " ".join(m.value for m in at.markdown)
    # the head-wise press ranked by the measured retrieval-head scores (the shipped result)
    at.selectbox(key="chat-press").set_value("retrieval_heads")
    next(b for b in at.button if b.label == "Ask").click().run()
    assert not at.exception, [e.value for e in at.exception]
    said = " ".join(m.value for m in at.markdown)
    assert "**retrieval heads, measured (head-wise)**" in said, said
    assert any("Measured retrieval heads: the same head-wise rule" in c.value for c in at.caption)


def test_the_curves_in_chinese():
    at = open_presses(lang="zh")
    assert not at.exception, [e.value for e in at.exception]
    left = sorted({(kind, text) for kind, text in interface_strings(at) if english(text)})
    assert not left, left
