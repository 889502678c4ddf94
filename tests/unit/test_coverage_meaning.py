"""engine.data.coverage's replacements by meaning (all-MiniLM-L6-v2): in the grammar, of the
typed word's part of speech, punctuation read as the grammar writes it, and cheap."""

import time

import numpy as np
import pytest
import torch

from engine.analysis import grammar_meanings, retrieval
from engine.data import coverage as cv
from engine.data import enfr
from engine.text import tokenize


@pytest.fixture(scope="module")
def meanings():
    torch.set_num_threads(1)
    return grammar_meanings.meanings(retrieval.embedder())


def suggested(text: str, word: str, meanings) -> cv.Word:
    c = cv.coverage(text, meanings=lambda: meanings)
    return next(w for w in c.words if w.text == word)


def head(s: cv.Suggestion) -> str:
    """The grammar word of a suggestion ("the cup" → "cup")."""
    return s.text.split()[-1]


@pytest.mark.parametrize(
    "text, word",
    [
        ("She drinks a cup of tea every morning.", "tea"),
        ("The teacher likes coffee.", "coffee"),
        ("The pupils like juice.", "juice"),
        ("My brother doesn't like fish.", "fish"),
        ("Anna wrote a poem about the sea.", "sea"),
    ],
)
def test_everyday_nouns_map_to_a_grammar_noun(text, word, meanings):
    w = suggested(text, word, meanings)
    first = w.suggestions[0]
    assert first.how == "meaning" and first.role in ("thing", "things"), first
    assert head(first) in cv.NOUNS_SG or head(first) in cv.NOUNS_PL


def test_tea_is_no_longer_a_name_or_a_number(meanings):
    """The issue's example: "tea" was offered "eva", "men" and "ten" by spelling."""
    w = suggested("She drinks a cup of tea every morning.", "tea", meanings)
    words = {head(s) for s in w.suggestions}
    assert not words & (cv.NAMES | set(enfr.NUMBERS) | {"men", "ten"})


def test_every_meaning_suggestion_is_in_the_grammar_and_of_an_admitted_role(meanings):
    """In-vocabulary, and in a role the typed word's form admits ("drinks": plural nouns
    or third-person verbs; "played": pasts, participles, adjectives)."""
    tables = cv.role_tables() | cv.TIME_ROLES
    texts = [
        "She drinks a cup of tea every morning.",
        "The children played in the garden yesterday.",
        "The farmer sold three horses.",
        "The girl who found the wallet called the police.",
        "Tom bought a new bicycle.",
        "The soup is too hot.",
    ]
    for text in texts:
        c = cv.coverage(text, meanings=lambda: meanings)
        typed = tokenize(text)
        for i, w in enumerate(c.words):
            for s in w.suggestions:
                assert all(t in cv.known_words() for t in s.text.split()), (w.text, s)
                if s.how != "meaning":
                    continue
                proper = i > 0 and typed[i][:1].isupper()
                assert s.role in cv._roles(w.text, proper), (w.text, s)
                assert head(s) in tables[s.role], (w.text, s)


def test_an_inflected_word_keeps_its_form(meanings):
    drinks = suggested("She drinks a cup of tea.", "drinks", meanings)
    assert all(s.role in ("people", "things", "verb-3sg") for s in drinks.suggestions if s.role)
    sold = suggested("The farmer sold three horses.", "sold", meanings)
    assert {s.role for s in sold.suggestions if s.role} <= {"verb-pp", "adjective"}


def test_a_capitalised_name_is_replaced_by_a_name(meanings):
    w = suggested("The judge thanked Tom.", "tom", meanings)
    assert w.suggestions[0].text in cv.NAMES


def test_spelling_only_for_words_the_encoder_does_not_know(meanings):
    """A typo ("minster", not an English word to MiniLM's tokenizer) finds its word first;
    a real word near a grammar word in spelling ("tea" / "ten") is not offered it."""
    typo = suggested("the minster signed the treaty .", "minster", meanings)
    assert (typo.suggestions[0].text, typo.suggestions[0].how) == ("minister", "spelling")
    tea = suggested("the teacher likes tea .", "tea", meanings)
    assert all(s.how != "spelling" for s in tea.suggestions)


@pytest.mark.parametrize("meaning", [False, True])
def test_punctuation_is_never_an_unknown_word(meaning, meanings):
    m = (lambda: meanings) if meaning else None
    c = cv.coverage("The teacher likes the book?", meanings=m)
    assert c.unknown == [] and c.covered
    assert c.replaced()[-1] == "." and c.complete
    c = cv.coverage("Where is the station? “Here!” (she said); yes: no…", meanings=m)
    assert not {"?", "!", "“", "”", "(", ")", ";", ":", "…"} & set(c.unknown)
    assert all(t in cv.known_words() for t in c.replaced() if not t.isalpha())


def test_one_click_covers_sentences_the_spelling_search_did_not(meanings):
    """Sentences whose one click reads fully by meaning: bench/coverage.py measures the share."""
    for text in ("My brother doesn't like fish.", "Anna wrote a poem about the sea."):
        c = cv.coverage(text, meanings=lambda: meanings)
        assert c.complete
        after = cv.coverage(cv.detokenize(c.replaced()))
        assert after.covered and not after.unknown, cv.detokenize(c.replaced())


def test_a_text_of_100_unknown_words_answers_in_under_a_second(meanings):
    """The gate's limit of unknown words: only the first SUGGESTED are embedded and ranked."""
    words = [f"zq{chr(97 + i // 26)}{chr(97 + i % 26)}ly" for i in range(cv.MAX_TOKENS)]
    start = time.process_time()
    c = cv.coverage(" ".join(words), meanings=lambda: meanings)
    assert time.process_time() - start < 1.0
    assert sum(bool(w.suggestions) for w in c.words) == cv.SUGGESTED
    start = time.process_time()
    cv.coverage("q" * 100_000, meanings=lambda: meanings)  # far longer than any word: no embedding
    assert time.process_time() - start < 1.0


def test_meanings_load_only_when_a_word_is_unknown():
    def refuse():
        raise AssertionError("the encoder was asked for a sentence of known words")

    assert cv.coverage("The teacher likes the book?", meanings=refuse).covered


def test_meanings_are_unit_vectors_of_every_grammar_word(meanings):
    assert meanings.vectors.shape[0] == len(cv.meaning_words())
    assert np.allclose(np.linalg.norm(meanings.vectors, axis=1), 1, atol=1e-4)
    assert set(cv.meaning_words()) >= {w for w in enfr.english_words() if w.isalpha()}
