"""The deck parser: every field validated, every bad deck named by file and line, every
number a deck states read from the model cards' results."""

import pytest
from kit import decks
from kit.decks import DeckError, parse, parse_view

from engine.models import registry


def card_results(name: str) -> dict | None:
    """What the shipped model's card measured, as the Lessons page reads it."""
    return next((c.results() for c in registry.cards() if c.name == name), None)


def no_results(name: str) -> None:
    """A deck with no placeholder never asks."""
    raise AssertionError(f"asked for {name}'s results")


GOOD = """\
title = "A deck"
summary = "Two steps."

[[steps]]
title = "One"
explain = "Why."
question = "What?"
view = "alignment?model=nmt-enfr-additive&text=The+minister+did+not+sign+the+treaty."
predict = "pas"

[[steps]]
title = "Two"
explain = "Why."
question = "What?"
view = "memory?model=memn2n-task2&task=2&story=0"
predict = 3
"""


def broken(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new, 1)


def test_a_good_deck_parses():
    deck = parse(GOOD, "mine.zh.toml", no_results)
    assert (deck.name, deck.lang, deck.title, len(deck.steps)) == ("mine", "zh", "A deck", 2)
    first, second = deck.steps
    assert first.view.page == "alignment" and first.view.params["text"].endswith("treaty.")
    assert first.predict == "pas" and second.predict == 3
    assert parse_view(first.view.link()) == first.view  # a link round-trips


@pytest.mark.parametrize(
    "text, line, words",
    [
        (broken('title = "One"', 'title = "One'), 5, "not valid TOML"),
        (broken('summary = "Two steps."', 'subtitle = "x"'), 2, "subtitle: unknown key"),
        (broken('question = "What?"\nview = "alignment', 'view = "alignment'), 4, "question"),
        (broken("predict = 3", "predict = 4"), 16, "step 2, predict"),
        (broken("predict = 3", 'predict = "3"'), 16, "hop number"),
        (broken('predict = "pas"', "predict = 2"), 9, "target word"),
        (broken("memory?model", "memroy?model"), 15, "unknown page 'memroy'"),
        (broken("&task=2", "&task=two"), 15, "task='two' should be a whole number"),
        (broken("&story=0", "&stroy=0"), 15, "memory has no parameter 'stroy'"),
        (broken("&text=The+minister+did+not+sign+the+treaty.", ""), 8, "need text"),
        (broken('explain = "Why."', 'explain = ""'), 6, "step 1, explain: missing"),
        (broken('title = "Two"', "title = 2"), 12, "step 2, title: missing or not text"),
        (broken('explain = "Why."', 'explain = "' + "x" * 1600 + '"'), 6, "longer than"),
        ('title = "x"\n', 1, "at least one [[steps]]"),
    ],
)
def test_a_bad_deck_names_its_file_and_line(text, line, words):
    with pytest.raises(DeckError) as err:
        parse(text, "mine.en.toml", no_results)
    message = str(err.value)
    assert message.startswith(f"mine.en.toml, line {line}"), message
    assert words in message, message


def test_too_big_or_not_utf8_is_refused_before_parsing():
    with pytest.raises(DeckError, match="over the 64,000 limit"):
        parse(b"#" * (decks.MAX_BYTES + 1), "big.toml", no_results)
    with pytest.raises(DeckError, match="not UTF-8"):
        parse(b"title = '\xff'", "latin.toml", no_results)


def test_a_copied_full_url_is_a_view():
    view = parse_view("http://localhost:8501/transformer?model=m&text=a+b&head=3&lang=zh&step=2")
    assert view.page == "transformer" and view.params == {"model": "m", "text": "a b", "head": "3"}


def test_shipped_decks_parse_in_both_languages_with_the_same_views():
    shipped = decks.shipped()
    assert set(shipped) >= {"bahdanau", "memory", "transformer", "variants"}
    for name, files in shipped.items():
        assert set(files) == {"en", "zh"}, name
        en, zh = (decks.load(name, lang, card_results) for lang in ("en", "zh"))
        assert [s.view for s in en.steps] == [s.view for s in zh.steps], name
        assert [s.predict for s in en.steps] == [s.predict for s in zh.steps], name


def test_a_shipped_decks_word_to_predict_is_one_the_model_writes():
    """A step asks the class about a target word: the model must write it. Retrained, the
    attention model translated the long sentence right, and its step still told the class
    it wrote « garage »; the guess box fell back to the first word, « la »."""
    for name in decks.shipped():
        for step in decks.load(name, "en", card_results).steps:
            page, params = step.view.page, step.view.params
            if page not in ("alignment", "transformer") or step.predict is None:
                continue
            trace = registry.get(params["model"]).trace(params["text"])
            kind = "alignment" if page == "alignment" else params.get("attention", "cross")
            assert step.predict in trace.maps[kind].query_labels, (name, step.title)


def test_shipped_decks_write_their_formulas_as_math():
    """Sub- and superscripts stand inside $…$ (Streamlit renders it with KaTeX): the
    Transformer deck showed "sin(pos/10000^{2i/d})" to the class as typed."""
    import re

    for name, files in decks.shipped().items():
        for lang in files:
            for step in decks.load(name, lang, card_results).steps:
                prose = re.sub(r"\$[^$]*\$", "", step.explain)
                assert not re.search(r"\^\{|_\{|\w_[a-z]{1,2}\b", prose), (name, lang, prose)


# ---- numbers read from the results, not typed ------------------------------------------

MEASURED = 'explain = "Why."'


def test_a_placeholder_reads_the_cards_measured_value():
    text = broken(
        MEASURED,
        'explain = "BLEU {result:nmt-enfr-additive:bleu:.1f}, '
        'n = {result:nmt-enfr-additive:n_test:,}."',
    )
    measured = card_results("nmt-enfr-additive")
    assert measured is not None, "the shipped additive model has an evaluation"
    deck = parse(text, "mine.en.toml", card_results)
    assert deck.steps[0].explain == f"BLEU {measured['bleu']:.1f}, n = {measured['n_test']:,}."
    nested = broken(MEASURED, 'explain = "{result:nmt-enfr-none:bleu_by_length.41-50.bleu}"')
    by_length = card_results("nmt-enfr-none")["bleu_by_length"]["41-50"]["bleu"]
    assert parse(nested, "mine.en.toml", card_results).steps[0].explain == str(by_length)
    braces = broken(MEASURED, 'explain = "$\\\\frac{a}{b}$"')  # other braces are left alone
    assert parse(braces, "mine.en.toml", no_results).steps[0].explain == "$\\frac{a}{b}$"


@pytest.mark.parametrize(
    "placeholder, words",
    [
        (
            "{result:nmt-enfr-nothing:bleu}",
            "no measured results for a model named 'nmt-enfr-nothing'",
        ),
        ("{result:nmt-enfr-additive:blue}", "nmt-enfr-additive's results have no 'blue'"),
        ("{result:nmt-enfr-additive:bleu_by_length}", "'bleu_by_length' is not a number"),
        ("{result:nmt-enfr-additive:bleu:.1q}", "'.1q' is not a number format"),
    ],
)
def test_a_deck_naming_a_missing_result_fails_with_its_line(placeholder, words):
    text = broken(MEASURED, f'explain = "BLEU {placeholder}."')
    with pytest.raises(DeckError) as err:
        parse(text, "mine.en.toml", card_results)
    message = str(err.value)
    assert message.startswith("mine.en.toml, line 6: step 1, explain: " + placeholder), message
    assert words in message, message
