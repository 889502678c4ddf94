"""engine.text: one count for typed text, cheapest check first, and the cut it offers."""

import time

import pytest

from engine.text import TextLimits, measure, tokenize, tokenizer_ends, word_ends


@pytest.mark.parametrize(
    "text", ["", "a", "  The cat, it sat.  ", "l'eau — d’accord?!\n\tyes", "猫坐在垫子上。cat"]
)
def test_word_ends_mark_the_end_of_each_token(text):
    tokens = tokenize(text)
    ends = word_ends(text)
    assert [text[e - len(tok) : e] for tok, e in zip(tokens, ends, strict=True)] == tokens


def test_chinese_is_a_token_per_character_as_bert_splits_it():
    """Written without spaces, "注意力是什么" was one word: a 2 × 2 map on the Basics page."""
    assert tokenize("注意力是什么？") == ["注", "意", "力", "是", "什", "么", "？"]
    assert tokenize("the 猫's mat") == ["the", "猫", "'", "s", "mat"]
    assert tokenize("日本語のテキスト, 한국어") == ["日", "本", "語", "のテキスト", ",", "한국어"]


def test_within_every_limit_counts_and_keeps_the_text():
    c = measure("the cat sat .", TextLimits(chars=100, tokens=5, lines=2))
    assert c.ok and (c.chars, c.lines, c.tokens) == (13, 1, 4) and c.cut == "the cat sat ."


def test_too_many_tokens_cuts_at_a_token_end():
    c = measure("one two three four five", TextLimits(chars=100, tokens=3))
    assert c.over == "tokens" and c.tokens == 5
    assert c.cut == "one two three" and c.cut_tokens == 3


def test_reserved_tokens_count_against_the_limit():
    c = measure("one two three", TextLimits(chars=100, tokens=4, reserved=2))
    assert c.over == "tokens" and c.tokens == 5 and c.cut == "one two" and c.cut_tokens == 4


def test_too_many_lines_keeps_the_first_lines():
    c = measure("a\nb\nc\nd", TextLimits(chars=100, lines=2))
    assert c.over == "lines" and c.cut == "a\nb"


def test_too_many_characters_is_found_first_and_no_word_is_split():
    c = measure("hello world again " * 10, TextLimits(chars=20, tokens=50))
    assert c.over == "chars" and c.tokens is None
    assert c.cut == "hello world again" and c.cut_tokens == 3  # not "… again he"


def test_a_pasted_book_is_counted_in_milliseconds():
    start = time.process_time()
    for paste in ("q" * 100_000, "word " * 200_000, "line\n" * 100_000):
        assert not measure(paste, TextLimits(chars=2_000, tokens=50, lines=20)).ok
    assert time.process_time() - start < 0.1


def test_tokenizer_ends_reads_offsets():
    class Fake:
        is_fast = True

        def __call__(self, text, add_special_tokens, return_offsets_mapping):
            assert not add_special_tokens and return_offsets_mapping
            return {"offset_mapping": [(0, 2), (2, 5), (6, 9)]}

    c = measure("abcde fgh", TextLimits(chars=50, tokens=2), tokenizer_ends(Fake()))
    assert c.over == "tokens" and c.cut == "abcde"
