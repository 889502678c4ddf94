import numpy as np
import pytest

from engine.data import enfr


@pytest.fixture(scope="module")
def small():
    return enfr.splits(seed=0, n_train=300, n_valid=50, n_test=100)


def test_figure_3a_sentence_and_its_gold():
    p = enfr.FIGURE_3A
    assert (
        " ".join(p.src) == "the agreement on the european economic area was signed in august 1992 ."
    )
    assert (
        enfr.detokenize_fr(p.tgt)
        == "L'accord sur la zone économique européenne a été signé en août 1992."
    )
    src, tgt = p.src, p.tgt
    link = {(src[i], tgt[j]) for i, j in p.sure}
    # the reordered block: european economic area → zone économique européenne
    assert {("area", "zone"), ("economic", "économique"), ("european", "européenne")} <= link
    assert {("was", "a"), ("was", "été"), ("signed", "signé"), ("the", "l'")} <= link
    # agreement: "européenne" needs the gender of "area" — a possible, not a sure, link
    assert (src.index("area"), tgt.index("européenne")) in p.possible - p.sure


def test_negation_is_discontinuous():
    p = enfr.EXAMPLES["negation"]
    assert enfr.detokenize_fr(p.tgt) == "Le ministre n'a pas signé le traité."
    nots = {p.tgt[j] for i, j in p.sure if p.src[i] == "not"}
    assert nots == {"n'", "pas"}


def test_long_example_has_agreement_after_que():
    p = enfr.EXAMPLES["long sentence"]
    assert len(p.src) >= 35
    assert "signée" in p.tgt and "approuvée" in p.tgt  # la loi que … a signée
    assert "fédéraux" in p.tgt and ("n'", "ont") in set(zip(p.tgt, p.tgt[1:], strict=False))


def test_links_are_in_range_and_possible_contains_sure(small):
    for split in small.values():
        for p in split:
            assert p.sure <= p.possible
            assert all(0 <= i < len(p.src) and 0 <= j < len(p.tgt) for i, j in p.possible)
            # every English content word is linked to something
            assert {i for i, _ in p.sure} >= {i for i, w in enumerate(p.src) if w in enfr.THINGS}


def test_splits_disjoint_deterministic_and_stratified(small):
    assert small == enfr.splits(seed=0, n_train=300, n_valid=50, n_test=100)
    train = {p.src for p in small["train"]}
    assert not train & {p.src for p in small["test"]}
    assert not train & {p.src for p in enfr.EXAMPLES.values()}
    per_bucket = [
        sum(enfr.bucket(len(p.src)) == k for p in small["test"])
        for k in range(len(enfr.LENGTH_BUCKETS))
    ]
    assert per_bucket == [20] * 5
    assert max(len(p.src) for p in small["test"]) >= 41


def test_vocabulary_is_large_and_elision_is_regular(small):
    assert len(enfr.english_words()) >= 1000
    for p in small["train"]:
        for a, b in zip(p.tgt, p.tgt[1:], strict=False):
            assert not (
                a in ("le", "la", "de", "ne", "que")
                and b[0] in "aeiouéh"
                and b not in ("onze", "huit")
            ), p.tgt
            assert (a, b) not in {("de", "le"), ("de", "les"), ("à", "le")}, p.tgt


def test_gold_lookup_and_tokenizer():
    toks = enfr.tokenize_en(
        "The agreement on the European Economic Area was signed in August 1992."
    )
    assert tuple(toks) == enfr.FIGURE_3A.src
    assert enfr.gold(toks[:-1]) == enfr.FIGURE_3A  # a missing final stop is forgiven
    assert enfr.gold(["hello", "world"]) is None
    drawn = enfr.sample(7)
    assert enfr.gold(drawn.src, [drawn]) == drawn


@pytest.mark.parametrize("n_test", [4, 7, 10])
def test_a_test_split_of_any_size_is_that_size(n_test):
    """A size that is not a multiple of the length buckets once never returned (the
    rounded-down quota could not reach n_test); the first buckets now take one more."""
    test = enfr.splits(0, n_train=0, n_valid=0, n_test=n_test)["test"]
    assert len(test) == n_test and len({p.src for p in test}) == n_test


def test_a_pair_scores_an_alignment_on_its_gold_links():
    """α whose argmax is the sure links scores AER 0; a row looking at a possible-only
    word (the determiner at its noun: anticipation) is named in ``ahead`` and costs the
    sure-only AER more than the one with possible links; an </s> row is cut."""
    pair = enfr.Pair(
        src=("the", "cat", "."),
        tgt=("le", "chat", "."),
        sure=frozenset({(0, 0), (1, 1), (2, 2)}),
        possible=frozenset({(0, 0), (1, 1), (2, 2), (1, 0)}),
    )
    eos = [[0.0, 0.0, 1.0]]
    right = pair.score(np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0, 0, 1.0], *eos]))
    assert right.alpha.shape == (3, 3) and right.aer == 0.0 and right.ahead == []
    ahead = pair.score(np.array([[0.1, 0.8, 0.1], [0.1, 0.8, 0.1], [0, 0, 1.0], *eos]))
    assert ahead.ahead == [("le", "cat")]
    assert ahead.aer == pytest.approx(1 - 5 / 6) and ahead.aer_sure == pytest.approx(1 - 4 / 6)
