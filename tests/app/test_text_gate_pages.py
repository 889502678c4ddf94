"""Every page's text box through AppTest: a count in the model's unit before the press, one
gate before any work, and the cut offered as a button, with the controls below kept."""

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.models import chat as chat_lib

APP = Path(__file__).resolve().parents[2] / "app"


def captions(at) -> str:
    return "\n".join(c.value for c in at.caption)


def infos(at) -> str:
    return "\n".join(i.value for i in at.info)


@pytest.fixture
def alignment(page):
    return page("alignment")


def test_alignment_states_its_count_before_the_press(alignment):
    assert "/ 50 words and marks" in captions(alignment)
    assert "counted when you press" in captions(alignment)


def test_alignment_refuses_a_100k_character_paste_in_under_a_second(alignment):
    start = time.process_time()
    alignment.text_area[0].set_value("q" * 100_000).run()
    assert time.process_time() - start < 1.0
    assert not alignment.exception
    assert "100,000 characters; the limit is 2,000" in infos(alignment)
    assert "– / 50 words and marks · 100,000 / 2,000 characters" in captions(alignment)
    assert alignment.slider(key="nmt-beam").value  # the controls stay
    assert not alignment.get("plotly_chart")  # nothing ran on it


def test_alignment_offers_the_cut_that_the_model_takes(alignment):
    alignment.text_area[0].set_value("the minister signed the treaty . " * 12).run()
    assert "72 words and marks; the limit here is 50" in infos(alignment)
    cut = alignment.button(key="nmt-text-en-fr-cut")
    assert cut.label == "Use the first 50 words and marks"
    cut.click().run()
    assert not alignment.exception
    assert len(alignment.text_area[0].value.split()) == 50
    assert "50 / 50 words and marks" in captions(alignment)
    assert alignment.get("plotly_chart")  # the translation ran on the cut


def test_alignment_a_long_pasted_word_runs_no_suggestion_search(alignment):
    start = time.process_time()
    alignment.text_area[0].set_value("the " + "z" * 1_900 + " signed the treaty .").run()
    assert time.process_time() - start < 2.0
    assert not alignment.exception


def test_basics_counts_words_and_offers_the_cut(page):
    at = page("basics")
    assert "/ 256 words and marks" in captions(at)
    at.text_area(key="basics_text").set_value("word " * 300).run()
    assert not at.exception and "300 words and marks; the limit here is 256" in infos(at)
    assert at.selectbox(key="basics_heads").value  # the controls stay
    at.button(key="basics_text-cut").click().run()
    assert not at.exception
    assert at.text_area(key="basics_text").value == " ".join(["word"] * 256)
    assert "256 / 256 words and marks" in captions(at)


def test_minilm_counts_subword_tokens_with_its_special_tokens(page):
    at = page("transformer")
    at.radio(key="family").set_value("pretrained").run()
    box = next(t for t in at.text_input if t.label == "Input")
    box.set_value("The unbelievably quick fox.").run()
    assert not at.exception
    assert "/ 256 subword tokens (2 of them added by the model" in captions(at)
    box = next(t for t in at.text_input if t.label == "Input")
    box.set_value("word " * 300).run()
    cut = next(b for b in at.button if b.label.startswith("Use the first"))
    assert cut.label == "Use the first 254 subword tokens"
    cut.click().run()
    assert not at.exception
    assert "256 / 256 subword tokens" in captions(at)


def test_compare_counts_against_the_tightest_card(page):
    at = page("compare")
    assert "words and marks" in captions(at) or "characters" in captions(at)
    at.text_area[0].set_value("x" * 100_000).run()
    assert not at.exception and "100,000 characters; the limit is" in infos(at)
    assert not at.get("plotly_chart")


def test_variants_minilm_text_over_its_limit_keeps_the_picker_and_offers_the_cut(page):
    at = page("variants")
    at.radio(key="var-source").set_value("minilm").run()
    assert "/ 64 subword tokens" in captions(at)
    at.text_area(key="var-mtext").set_value("word " * 100).run()
    assert not at.exception and "102 subword tokens; the limit here is 64" in infos(at)
    assert at.multiselect(key="var-picked").value  # the controls below the box stay
    at.button(key="var-mtext-cut").click().run()
    assert not at.exception
    assert "64 / 64 subword tokens" in captions(at)


needs_chat = pytest.mark.skipif(not chat_lib.available(), reason="the chat model is not converted")


@needs_chat
def test_chat_prompt_is_counted_in_tokens_with_the_template_and_cut_to_fit():
    at = AppTest.from_file(str(APP / "studios" / "chat.py"), default_timeout=300)
    at.query_params["tokens"] = "2"
    at.run()
    assert "(up to 256 tokens" in at.text_area(key="chat-text").label
    assert "/ 256 subword tokens (30 of them added by the model" in captions(at)
    start = time.process_time()
    at.text_area(key="chat-text").set_value("x" * 100_000)
    at.button(key="chat-generate").click().run()
    assert time.process_time() - start < 1.0
    assert not at.exception and "the limit is 2,000" in infos(at)
    at.text_area(key="chat-text").set_value("word " * 300)
    at.button(key="chat-generate").click().run()
    assert "331 subword tokens; the limit here is 256" in infos(at)
    assert at.number_input(key="chat-seed").value == 0  # the form stays
    at.button(key="chat-text-cut").click().run()
    assert not at.exception
    assert at.text_area(key="chat-text").value.split() == ["word"] * 226
    assert "256 / 256 subword tokens" in captions(at)


def test_memory_story_over_its_lines_keeps_the_model_picker(page):
    at = page("memory")
    at.radio(key="mem_source").set_value("own").run()
    assert "/ 1000 lines" in captions(at)
    at.text_area(key="mem_story").set_value("Mary went home.\n" * 1_200).run()
    assert not at.exception and "1201 lines; the limit here is 1000" in infos(at)
    assert at.selectbox(key="mem_model").value  # the controls stay
    at.button(key="mem_story-cut").click().run()
    assert not at.exception
    assert at.text_area(key="mem_story").value.count("\n") == 999


@needs_chat
def test_retrieval_question_and_own_story_are_gated_before_any_reading():
    at = AppTest.from_file(str(APP / "studios" / "retrieval.py"), default_timeout=300)
    at.query_params.update(store="own", tokens="2")
    at.run()
    assert "/ 1000 lines" in captions(at) and "/ 300 characters" in captions(at)
    box = next(w for w in at.text_input if w.key.startswith("ret-question-"))
    box.set_value("Where is Mary? " * 30)
    at.button(key="ret-ask").click().run()
    assert not at.exception and "450 characters; the limit is 300" in infos(at)
    assert at.number_input(key="ret-k").value  # the form stays
    at.text_area(key="ret-story-text").set_value("x" * 30_000).run()
    assert not at.exception and "30,000 characters; the limit is 20,000" in infos(at)
    assert at.button(key="ret-ask")  # the question's form is still drawn below the story
