"""engine.data.coverage: what the en→fr grammar model knows, and the nearest sentence it reads."""

import pytest

from engine.data import coverage as cv
from engine.data import enfr


def test_every_grammar_sentence_is_known_and_covered():
    """The recogniser accepts what the grammar generates (a sample, and the shipped examples)."""
    pairs = [enfr.sample(seed) for seed in range(150)] + list(enfr.EXAMPLES.values())
    for pair in pairs:
        c = cv.coverage(" ".join(pair.src))
        assert c.covered and not c.unknown, " ".join(pair.src[: c.read + 1])
        assert c.read == len(pair.src)


@pytest.mark.parametrize(
    "text, read",
    [
        ("the ministers signs the treaty .", 2),  # number agreement
        ("the minister signed the treaty tomorrow .", 5),  # a past verb, a future time
        ("the treaty signed the minister .", 2),  # things are not active subjects here
        ("the exam was difficult .", 3),  # no copula + adjective in the grammar
    ],
)
def test_known_words_outside_the_grammar_are_not_covered(text, read):
    c = cv.coverage(text)
    assert not c.unknown and not c.covered
    assert c.read == read


def test_unknown_word_is_marked_and_replaced_by_a_word_in_its_role():
    c = cv.coverage("The zorblax signed the treaty.")
    assert c.unknown == ["zorblax"] and not c.covered
    zorblax = c.words[1]
    assert not zorblax.known and zorblax.suggestions
    assert all(w in cv.known_words() for s in zorblax.suggestions for w in s.text.split())
    assert cv.coverage(cv.detokenize(c.replaced())).covered


@pytest.mark.parametrize(
    "text, word, first, how",
    [
        ("The minister didn't sign the treaty.", "didn't", "did not", "synonym"),
        ("the minster signed the treaty .", "minster", "minister", "spelling"),
        ("the kids like the book .", "kids", "children", "synonym"),
        ("the teacher wrote the letter .", "wrote", "drafted", "synonym"),
        ("she likes the book .", "she", "the teacher", "synonym"),
        ("the teacher explained the lesson again .", "again", "", "remove"),
        ("Tom signed the treaty and the judge thanked Tom .", "tom", "bob", "role"),
    ],
)
def test_replacement_methods(text, word, first, how):
    c = cv.coverage(text)
    found = next(w for w in c.words if w.text == word)
    assert (found.suggestions[0].text, found.suggestions[0].how) == (first, how)
    assert cv.coverage(cv.detokenize(c.replaced())).covered


def test_synonyms_point_into_the_grammar_with_the_same_part_of_speech():
    tables = {"verb": enfr.VERBS, "noun": cv.NOUNS_SG, "adjective": enfr.ADJECTIVES}
    for part, synonyms in cv.SYNONYMS.items():
        for typed, target in synonyms.items():
            assert target in tables[part], (part, typed, target)
            assert typed not in tables[part], f"{typed} is already a grammar {part}"
    rewrites = [w for texts in cv.REWRITES.values() for text in texts for w in text.split()]
    assert all(w in cv.known_words() for w in rewrites)
    assert not cv.REMOVABLE & cv.known_words()


def test_distance_counts_a_transposition_as_one_edit():
    assert cv.distance("teh", "the") == 1
    assert cv.distance("minster", "minister") == 1
    assert cv.distance("", "abc") == 3 and cv.distance("abc", "abc") == 0


def test_patterns_are_covered_and_use_their_own_construction():
    for p in cv.patterns():
        c = cv.coverage(" ".join(p.example.src))
        assert c.covered and p.id in c.patterns, p.id
    assert [p.id for p in cv.patterns()] == list(cv.PATTERNS)


def test_vocabulary_lists_every_grammar_word_with_its_french():
    entries = cv.vocabulary()
    listed = {e.en for e in entries} | {f for e in entries for f in e.forms.split(", ") if f}
    missing = enfr.english_words() - listed
    assert not missing, sorted(missing)[:10]
    assert all(e.fr for e in entries)
    assert next(e for e in entries if e.en == "treaty").fr.startswith("traité")


def test_empty_and_punctuation_only_input():
    assert cv.coverage("").words == () and not cv.coverage("").covered
    c = cv.coverage("?!")  # punctuation is read as the grammar's, never an unknown word
    assert not c.covered and c.unknown == [] and c.replaced() == (".", ".")


def test_a_capitalised_word_inside_a_sentence_is_replaced_by_a_name_or_a_city():
    c = cv.coverage("The judge thanked Zorro.")
    zorro = c.words[3]
    assert zorro.suggestions[0].text in cv.NAMES | set(enfr.CITIES)
    assert cv.coverage(cv.detokenize(c.replaced())).covered


def test_dropped_punctuation_keeps_the_place_where_the_reading_stops():
    """Quotes are read as nothing, yet ``read`` still counts typed tokens: the page names the
    typed word where the grammar's rules stop."""
    c = cv.coverage('The exam was "difficult".')
    assert not c.unknown and not c.covered
    assert c.tokens[c.read] == "difficult"
    assert c.replaced() == ("the", "exam", "was", "difficult", ".")
