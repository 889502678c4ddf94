"""Every page's text box through AppTest: a count in the model's unit before the press, one
gate before any work, and the cut offered as a button, with the controls below kept."""

import time

import pytest


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
