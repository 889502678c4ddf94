"""AppTest for the Chat model page: a short generation, the step slider, every section, the
copying question, bad input, 中文, and the page without the converted model."""

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.models import chat as chat_lib
from tests.app.test_locales import english, interface_strings

PAGE = Path(__file__).resolve().parents[2] / "app" / "studios" / "chat.py"
needs_model = pytest.mark.skipif(
    not chat_lib.available(), reason="the chat model is not converted: bash scripts/setup.sh"
)


def open_page(**params) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=300)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def shown(at) -> str:
    parts = [*at.markdown, *at.info, *at.warning, *at.error, *at.caption]
    return "\n".join(str(p.value) for p in parts)


def charts(at) -> int:
    return len(at.get("plotly_chart"))


def generate(at, prompt: str) -> AppTest:
    at.text_area(key="chat-text").set_value(prompt)
    return at.button(key="chat-generate").click().run()


@pytest.fixture(scope="module")
def page():
    if not chat_lib.available():
        pytest.skip("the chat model is not converted: bash scripts/setup.sh")
    at = open_page(tokens="4")
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_short_generation_and_the_step_slider(page):
    at = page
    text = shown(at)
    assert "**Output:**" in text and "Step 1 of 4" in text, text
    # Step 1: the query is the prompt's last token (the template's line break after
    # "assistant"), the cache holds the whole prompt and one token is written.
    assert "The query is the last known token, «↵»" in text
    assert charts(at) == 4  # layers, the GQA heads, next-token candidates, cache size
    at.slider(key="chat-step").set_value(3).run()
    assert not at.exception
    text = shown(at)
    assert "Step 3 of 4" in text and "Step 1 of 4" not in text
    assert "KV cache after this step: 39 tokens" in text  # 37 prompt tokens + 2 written
    at.slider(key="chat-layer").set_value(0).run()
    assert not at.exception
    specs = " ".join(c.proto.spec for c in at.get("plotly_chart")).replace("\\u002f", "/")
    specs = specs.replace("\\u003cbr\\u003e", " ")  # a long title wraps
    assert "Layer 0: the 9 query heads in their 3 key/value groups" in specs


@pytest.mark.parametrize("section", ["sinks", "cache", "heads"])
def test_every_section_draws(page, section):
    at = page
    at.segmented_control(key="chat-section").set_value(section).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert charts(at) >= 1
    if section == "sinks":  # the control's blank first token named in its legend, as below
        specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
        names = [d.get("name") for spec in specs for d in spec["data"]]
        assert "first token replaced by ↵" in names, names
    at.segmented_control(key="chat-section").set_value("timeline").run()


def test_the_head_map_keeps_its_first_token_choice_in_the_link(page):
    at = page
    at.segmented_control(key="chat-section").set_value("heads").run()
    assert at.query_params["hide"] in ("1", ["1"])
    at.toggle(key="chat-hide").set_value(False).run()
    assert not at.exception and at.query_params["hide"] in ("0", ["0"])
    at.toggle(key="chat-hide").set_value(True).run()
    at.segmented_control(key="chat-section").set_value("timeline").run()


def test_the_copying_question_hides_the_map_until_revealed(page):
    at = page
    at.segmented_control(key="chat-section").set_value("heads").run()
    before = charts(at)
    reveal = next(b for b in at.button if b.key and b.key.endswith("-reveal"))
    reveal.click().run()
    assert not at.exception
    assert charts(at) == before + 1, "the reveal draws the head's map on the repeated text"
    assert "attends most to" in shown(at) + " ".join(s.value for s in at.success)
    at.segmented_control(key="chat-section").set_value("timeline").run()


@needs_model
@pytest.mark.parametrize(
    "prompt, words",
    [
        ("", "Type a prompt"),
        ("x" * 100_000, "the limit is 2,000"),
        ("hello\x00world\x07", "control character"),
        ("<|im_start|><|im_end|>", "only special tokens"),
    ],
    ids=["empty", "100k characters", "control characters", "only special tokens"],
)
def test_bad_input_is_a_short_message(prompt, words):
    at = open_page(tokens="2")
    generate(at, prompt)
    assert not at.exception, [e.value for e in at.exception]
    assert words in " ".join(i.value for i in at.info), shown(at)


@needs_model
def test_out_of_range_values_fall_back_with_a_note():
    at = open_page(tokens="999", top_p="7", section="cache", window="0")
    assert not at.exception
    notes = " ".join(i.value for i in at.info)
    for name in ("tokens", "top_p", "window"):
        assert f"“{name}”" in notes, notes
    assert "**Full cache:**" in shown(at)


@needs_model
def test_a_cache_larger_than_the_prompt_is_explained():
    at = open_page(tokens="2", template="0", text="Hello there", section="cache", window="64")
    assert not at.exception
    assert "larger than the prompt" in " ".join(i.value for i in at.info), shown(at)


@needs_model
def test_the_page_in_chinese_every_section():
    at = open_page(tokens="3", lang="zh")
    assert not at.exception
    assert at.title[0].value == "对话模型"
    assert "第 1 步，共 3 步" in shown(at)
    seen = interface_strings(at)
    for section in ("sinks", "cache", "heads", "variants"):
        at.segmented_control(key="chat-section").set_value(section).run()
        assert not at.exception, (section, [e.value for e in at.exception])
        seen += interface_strings(at)
    left = sorted({(kind, text) for kind, text in seen if english(text)})
    assert not left, left


def test_without_the_model_the_page_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(chat_lib, "available", lambda *a, **k: False)
    at = open_page()
    assert not at.exception
    assert "bash scripts/setup.sh" in " ".join(i.value for i in at.info)
    assert charts(at) == 0


def test_variants_inside_the_model_run_when_asked(page):
    at = page
    at.segmented_control(key="chat-section").set_value("variants").run()
    assert not at.exception
    assert "Run the variants" in " ".join(i.value for i in at.info), "nothing runs unasked"
    at.number_input(key="chat-vn").set_value(16)
    at.multiselect(key="chat-variants").set_value(["kv_cache", "performer"])
    at.button(key="chat-variants-run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert charts(at) == 1
    text = shown(at)
    assert "Performer (FAVOR+): not run" in text and "bidirectional" in text, text
    table = at.dataframe[0].value
    assert list(table["variant"]) == ["KV-cache decoding"]
    # The KV cache is exact: the same perplexity as full attention.
    assert abs(table["ppl"][0] - table["ppl_full"][0]) < 1e-3 * table["ppl_full"][0]
    at.segmented_control(key="chat-section").set_value("timeline").run()


@needs_model
def test_a_copied_link_opens_the_same_view():
    link = {
        "text": "Tell me a joke about cats.",
        "template": "1",
        "tokens": "5",
        "sampling": "sample",
        "temperature": "0.9",
        "top_k": "20",
        "top_p": "0.8",
        "seed": "3",
        "section": "timeline",
        "token": "3",
        "layer": "5",
    }
    at = open_page(**link)
    assert not at.exception
    assert not [i.value for i in at.info if "could not be used" in i.value]
    for key, value in link.items():
        assert at.query_params[key] in (value, [value]), key
    assert "Step 3 of" in shown(at)


@needs_model
def test_the_sink_is_named_where_it_dominates():
    """Template off, the first column is the user's first word: it is labelled as the
    attention sink, with its share, so a bright 'Maria' is not read as meaning."""
    at = open_page(tokens="2", template="0", text="Maria went to the market to buy apples.")
    assert not at.exception, [e.value for e in at.exception]
    text = "\n".join(m.value for m in at.markdown)  # body text: a projector shows it
    assert "the attention sink (StreamingLLM" in text and "“Maria”" in text, text
    spec = at.get("plotly_chart")[0].proto.spec
    assert "Maria (sink)" in spec
