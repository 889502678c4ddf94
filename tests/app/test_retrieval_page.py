"""AppTest for the Retrieval page: a question over a bAbI story and over the shipped text,
the retrieved passages and the passages × tokens map, every section, a layer and head
picked, bad and hostile input, 中文, a copied link, and the page without the chat model."""

import json
import re
from pathlib import Path

import numpy as np
import pytest
from kit.fonts import label_px
from state import retrieval as state
from streamlit.testing.v1 import AppTest
from views.heatmap import NARROW_PX, TITLE_FONT

from engine.models import chat as chat_lib
from tests.app.plotly_support import z_values
from tests.app.test_locales import english, interface_strings

PAGE = Path(__file__).resolve().parents[2] / "app" / "studios" / "retrieval.py"
pytestmark = pytest.mark.skipif(
    not chat_lib.available(), reason="the chat model is not converted: bash scripts/setup.sh"
)
# Task 1, test story 2: six sentences, "Where is John?", one supporting fact.
STORY = {"store": "babi", "task": "1", "story": "2", "tokens": "6"}


def open_page(**params) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=300)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def shown(at) -> str:
    parts = [*at.markdown, *at.info, *at.warning, *at.error, *at.caption, *at.subheader]
    return "\n".join(str(p.value) for p in parts)


def passages_html(at) -> str:
    return " ".join(h.proto.body for h in at.get("html") if "retrieved-passages" in h.proto.body)


def specs(at) -> str:
    # A title's line break reads as a space: "L5, H1" may fall across two lines.
    specs = " ".join(c.proto.spec for c in at.get("plotly_chart")).replace("\\u002f", "/")
    return specs.replace("\\u003cbr\\u003e", " ").replace("<br>", " ")


def z_max(heat: dict) -> float:
    """The largest value of a heatmap trace (its z is sent as base64)."""
    return float(np.nanmax(z_values(heat["z"])))


def ask(at, question: str, **widgets) -> AppTest:
    box = next(w for w in at.text_input if w.key.startswith("ret-question-"))
    box.set_value(question)
    for key, value in widgets.items():
        at.number_input(key=key).set_value(value)
    return at.button(key="ret-ask").click().run()


@pytest.fixture(scope="module")
def page():
    at = open_page(**STORY)
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_story_question_shows_passages_answer_and_the_map(page):
    at = page
    text = shown(at)
    sample = state.stories(1)[2]
    assert f"**Q:** {sample.question}" in text and "**A (chat model):**" in text, text
    assert "The bAbI answer:" in text
    # body text, not a caption: presenting hides captions, and the class saw the wrong
    # answer with no word that it was wrong
    assert any("The bAbI answer:" in str(m.value) for m in at.markdown)
    listed = passages_html(at)
    assert listed.count("[") >= 3 and "★" in listed, "k = 3 passages, the supporting fact starred"
    # A story's passages stand in story order: where that is not by cosine, it is said.
    cosines = [float(c) for c in re.findall(r"cos (-?[0-9.]+)", listed)]
    assert ("in story order, not by cosine" in text) is (cosines != sorted(cosines)[::-1])
    assert len(at.get("plotly_chart")) == 1
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    title = fig["layout"]["title"]["text"]
    # The title wraps to the page's width (issue 29); read as one line, it names the map.
    lines = title.split("<br>")
    assert all(label_px([line], TITLE_FONT) <= NARROW_PX - 40 for line in lines), lines
    words = " ".join(lines)
    assert "Attention mass on each passage per generated token" in words
    assert "mean of every layer, mean of every head" in words
    # Alone, the map is on its kind's scale: 0–1, or 0–its max with that range in the title.
    heat = fig["data"][0]
    top = z_max(heat)
    assert heat["zmin"] == 0 and heat["zmax"] == pytest.approx(top if top < 0.25 else 1.0)
    assert (f"0–{top:.2g}" in words) == (top < 0.25), (top, words)
    # The map is the engine's: mean over layers and heads of the passages' mass.
    assert "falls outside the passages" in text


def test_a_layer_and_a_head_redraw_the_map_only(page):
    at = page
    at.selectbox(key="ret-reading-layer").set_value(3).run()
    at.selectbox(key="ret-reading-head").set_value(2).run()
    assert not at.exception
    assert "L3, H2" in specs(at)
    assert at.query_params["layer"] in ("3", ["3"]) and at.query_params["head"] in ("2", ["2"])
    at.toggle(key="ret-reading-share").set_value(True).run()
    assert "Share of the passages" in specs(at)
    at.selectbox(key="ret-reading-layer").set_value(None).run()
    at.selectbox(key="ret-reading-head").set_value(None).run()
    at.toggle(key="ret-reading-share").set_value(False).run()


@pytest.mark.parametrize(
    "section, charts, words",
    [
        ("addressing", 1, "cosine"),
        ("side-by-side", 2, "MemN2N"),
        ("measured", 0, "retrieval"),
    ],
)
def test_every_section_draws(page, section, charts, words):
    at = page
    at.segmented_control(key="ret-section").set_value(section).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert len(at.get("plotly_chart")) == charts
    assert words in shown(at) + specs(at)
    at.segmented_control(key="ret-section").set_value("reading").run()


def test_side_by_side_draws_each_reader_on_a_scale_it_uses(page):
    at = page
    at.segmented_control(key="ret-section").set_value("side-by-side").run()
    text = shown(at)
    assert "**MemN2N**" in text and "**Chat model**" in text, text
    memn2n, chat = (json.loads(c.proto.spec) for c in at.get("plotly_chart"))
    # Hop weights on 0–1; the chat model's far flatter mass on 0 to its max, the max printed
    # (on 0–1 it is one colour), and the intro says the scales differ.
    assert "compare the numbers, not the colours" in text
    heat = memn2n["data"][0]
    assert (heat.get("zmin"), heat.get("zmax")) == (0.0, 1.0)
    heat = chat["data"][0]
    top = float(np.max(z_values(heat["z"])))
    assert heat["zmin"] == 0.0 and heat["zmax"] in (1.0, pytest.approx(top, abs=1e-3))
    if heat["zmax"] != 1.0:
        assert f"0–{heat['zmax']:.2g}" in chat["layout"]["title"]["text"]
    # The same six sentences on both figures' rows.
    assert len(memn2n["data"][0]["y"]) == len(chat["data"][0]["y"]) == 6
    at.segmented_control(key="ret-section").set_value("reading").run()


def test_the_shipped_text_store(page):
    at = open_page(store="text", question="Who is Mr. Darcy's friend?", k="2", tokens="4")
    assert not at.exception, [e.value for e in at.exception]
    listed = passages_html(at)
    assert "text-" in listed and listed.count("cos ") == 2
    assert "story order" not in shown(at)  # the book's passages stand by rank
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert len(fig["data"][0]["y"]) == 2, "one row per retrieved passage"
    at.segmented_control(key="ret-section").set_value("addressing").run()
    assert "The 20 passages most similar" in shown(at)
    at.segmented_control(key="ret-section").set_value("side-by-side").run()
    assert "needs a bAbI story" in shown(at)


def test_a_question_of_the_book_evaluation_is_read_against_the_books_answer():
    """A question on the book had no known answer beside the reply: the 135M model's "The
    answer to this question is: Mr. Darcy's friend." stood with no word that it was not
    one. A question the book evaluation asks now shows the book's answer, the rank MiniLM
    gave its passage (the shipped measurement's), whether that passage is in the prompt,
    and whether the reply holds the answer's words: in body text, as presenting shows it."""
    at = open_page(store="text")  # the page's own question on the book is one of them
    assert not at.exception
    body = "\n".join(m.value for m in at.markdown)
    assert "The book's answer: **Lambton**" in body and "at 2 of 4,026" in body
    assert "(passage [2] of the 3 in the prompt)" in body
    reply = next(m.value for m in at.markdown if "(chat model)" in m.value)
    held = "the chat model's answer holds its words" in body
    assert held == ("Lambton" in reply.split("(chat model)")[1])  # the reply decides
    at = open_page(store="text", question="What is Mr. Bingley's income?", k="2", tokens="4")
    body = "\n".join(m.value for m in at.markdown)
    assert "at 181 of 4,026 (not among the 2 passages in the prompt)" in body
    assert "does not hold its words" in body
    at = open_page(store="text", question="Who is Mr. Darcy's friend?", k="2", tokens="4")
    assert "The book's answer" not in "\n".join(m.value for m in at.markdown)


def test_measured_numbers_are_shown_when_the_evaluation_exists(monkeypatch):
    record = {
        "accuracy": {"retrieved": 0.5, "story": 0.4, "none": 0.1},
        "recall_at_k": {"1": 0.7, "3": 0.9, "5": 1.0},
        "attention_hit_rate": 0.6,
        "memn2n_hit_rate": 0.95,
        "memn2n_accuracy": 1.0,
        "n": 20,
        "examples": [{"question": "Where is <b>Mary</b>?", "expected": "office", "none": "Paris"}],
    }
    conditions = {"chat_model": "SmolLM2", "dtype": "float16", "threads": "1", "machine": "x86"}
    results = {"tasks": {"1": record, "2": record}, "n": 20, "k": 3, "seed": 0}
    results["conditions"] = conditions
    monkeypatch.setattr(state, "evaluation", lambda: results)
    at = open_page(**STORY, section="measured")
    assert not at.exception
    table = at.dataframe[0].value
    assert len(table) == 2 and list(table["recall@3"]) == [0.9, 0.9]
    assert table["hop-weight hit rate (MemN2N)"].notna().all()
    assert set(table["attention hit rate, top k (chat)"]) == {"–"}, "missing: a dash"
    assert "n = 20 questions per task, k = 3, seed 0; SmolLM2" in shown(at)
    replies = at.dataframe[1].value
    assert list(replies["reply, no context"]) == ["Paris", "Paris"]


@pytest.mark.parametrize(
    "params, question, words",
    [
        ({}, "   ", "Type a question"),
        ({"floor": "0.99"}, "What colour is the sky?", "reaches the similarity floor"),
        ({"k": "99"}, None, "“k”"),
        ({"store": "own", "text": "Mary went home."}, "Where is Mary?", "all 1 are ranked"),
    ],
    ids=["empty question", "nothing over the floor", "k out of range", "k over the store"],
)
def test_bad_input_is_a_short_message(params, question, words):
    at = open_page(**(STORY | {"tokens": "2"} | params))
    if question is not None:
        ask(at, question)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert words in " ".join(i.value for i in at.info), shown(at)


def test_a_story_over_the_prompt_limit_says_what_was_left_out():
    story = "\n".join(f"Mary went to the kitchen number {i} of the big house." for i in range(40))
    at = open_page(store="own", text=story, question="Where is Mary?", context="story", tokens="2")
    assert not at.exception, [e.value for e in at.exception]
    warned = " ".join(w.value for w in at.warning)
    # The earliest sentences are dropped (MemN2N's memory keeps the latest ones too).
    assert "did not fit in the prompt" in warned and "babi\\-0," in warned, warned
    assert f"at most {chat_lib.MAX_PROMPT_TOKENS} tokens" in warned, warned  # from the Trace


def test_hostile_text_is_escaped_everywhere():
    story = "Mary went to the <b>kitchen</b>.\nJohn took the <script>alert(1)</script> milk."
    question = "Where is <img src=x onerror=alert(1)> Mary?"
    at = open_page(store="own", text=story, question=question, tokens="3")
    assert not at.exception, [e.value for e in at.exception]
    listed = passages_html(at)
    assert "&lt;b&gt;kitchen&lt;/b&gt;" in listed and "<b>kitchen" not in listed
    assert "<script>" not in listed
    assert "<img" not in shown(at).replace("\\<img", "")
    spec = specs(at)
    assert "<b>kitchen" not in spec and "<script>" not in spec


def test_the_page_in_chinese_every_section():
    at = open_page(**STORY, lang="zh")
    assert not at.exception
    assert at.title[0].value == "检索"
    seen = interface_strings(at)
    for section in ("addressing", "side-by-side", "measured"):
        at.segmented_control(key="ret-section").set_value(section).run()
        assert not at.exception, (section, [e.value for e in at.exception])
        seen += interface_strings(at)
    left = sorted({(kind, text) for kind, text in seen if english(text)})
    assert not left, left


def test_a_copied_link_opens_the_same_view():
    link = {
        "store": "text",
        "question": "Who is Mr. Darcy's friend?",
        "k": "2",
        "floor": "0.1",
        "context": "retrieved",
        "tokens": "3",
        "section": "reading",
        "layer": "5",
        "head": "1",
        "share": "1",
    }
    at = open_page(**link)
    assert not at.exception
    assert not [i.value for i in at.info if "could not be used" in i.value]
    for key, value in link.items():
        assert at.query_params[key] in (value, [value]), key
    assert "L5, H1" in specs(at)


def test_without_the_model_the_page_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(chat_lib, "available", lambda *a, **k: False)
    at = open_page()
    assert not at.exception
    assert "bash scripts/setup.sh" in " ".join(i.value for i in at.info)
    assert len(at.get("plotly_chart")) == 0


def test_side_by_side_exports_both_readers(downloads):
    """The side-by-side view's zip holds MemN2N's hops and the chat model's reading."""
    import io
    import zipfile

    from engine.trace import Trace

    made = downloads
    at = open_page(section="side-by-side", tokens="2")
    assert not at.exception, [e.value for e in at.exception]
    with zipfile.ZipFile(io.BytesIO(made["retrieval-side-by-side-view.zip"]())) as z:
        names = z.namelist()
        memn2n = [n for n in names if n.startswith("trace-memn2n") and n.endswith(".json")]
        assert len(memn2n) == 1 and "trace-chat-story.npz" in names, names
        hops = Trace.from_json(z.read(memn2n[0]))
    assert hops.model.startswith("memn2n") and hops.maps, "MemN2N's hops are in the export"


def test_one_minilm_per_process():
    """Retrieval and Alignment embed with the model cache's MiniLM, the Transformer page's
    card: a server holds one copy (issue 28), and the engine caches none."""
    from state import minilm, models

    from engine.analysis import retrieval as rag

    assert minilm.embedder().model is models.loaded(minilm.CARD)
    assert rag.embedder(models.loaded(minilm.CARD)).model is models.loaded(minilm.CARD)
    assert not hasattr(rag.embedder, "cache_info") and not hasattr(rag.text_store, "cache_info")


def test_a_question_without_an_english_word_is_warned_about():
    """MiniLM ranks a Chinese question's passages as confidently as an English one's."""
    at = open_page(**(STORY | {"tokens": "2"}))
    ask(at, "约翰在哪里？")
    assert not at.exception, [e.value for e in at.exception]
    assert any("no English word" in w.value for w in at.warning), shown(at)
    ask(at, "Where is John?")
    assert not any("no English word" in w.value for w in at.warning)


def test_the_addressing_figure_measures_its_labels_and_holds_its_weights():
    """The passages' labels get the margin their text takes and the weight column the room
    its numbers and name take: ten pixels a character left the column 30 px at 1024 px with
    the sidebar open, "0.404" over its edges and "weight" on the cosine axis's "0"."""
    from views.retrieval import GAP_PX, addressing_figure

    labels = [f"{i}. John went back to the bedroom." for i in range(1, 7)]
    weights, scores = np.linspace(0, 0.4, 6), np.linspace(0.1, 0.6, 6)
    fig = addressing_figure(labels, weights, scores, [True] * 6, 0.0, "Addressing").to_dict()
    layout = fig["layout"]
    words = label_px(labels, layout["yaxis"]["tickfont"]["size"])
    assert words + 8 <= layout["margin"]["l"] <= words + 24  # no more than the words need
    plot = NARROW_PX - layout["margin"]["l"] - layout["margin"]["r"]
    column = np.diff(layout["xaxis"]["domain"])[0] * plot
    assert column >= label_px(["0.000", "weight"], 16)
    assert (layout["xaxis2"]["domain"][0] - layout["xaxis"]["domain"][1]) * plot >= GAP_PX - 1
