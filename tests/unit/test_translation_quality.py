import numpy as np
import pytest

from engine import translation_quality


def test_bleu_perfect_and_zero():
    refs = [["le", "chat", "est", "noir", "ce", "soir"]]
    assert translation_quality.bleu(refs, refs) == pytest.approx(100.0)
    assert translation_quality.bleu([["x", "y", "z", "w"]], refs) == pytest.approx(0.0)
    with pytest.raises(ValueError):
        translation_quality.bleu([["a"]], [])


def test_exact_match():
    assert translation_quality.exact_match([["a"], ["b"]], [["a"], ["c"]]) == 0.5


def test_aer_definition():
    sure, possible = {(0, 0), (1, 1)}, {(0, 0), (1, 1), (2, 1)}
    assert translation_quality.aer([(sure, sure, possible)]) == 0.0
    # a possible link is not an error; a link outside P is
    assert translation_quality.aer([({(0, 0), (1, 1), (2, 1)}, sure, possible)]) == 0.0
    assert translation_quality.aer([({(0, 0), (2, 2)}, sure, possible)]) == pytest.approx(1 - 2 / 4)
    assert translation_quality.aer([(set(), sure, possible)]) == 1.0


def test_aer_is_pooled_over_the_corpus():
    a = ({(0, 0)}, {(0, 0)}, set())
    b = ({(1, 0)}, {(0, 0), (1, 1), (2, 2)}, set())
    assert translation_quality.aer([a, b]) == pytest.approx(1 - (1 + 1) / (2 + 4))


def test_argmax_links_reads_rows_as_targets():
    alpha = np.array([[0.1, 0.9], [0.8, 0.2], [0.5, 0.5]])
    assert translation_quality.argmax_links(alpha) == {(1, 0), (0, 1), (0, 2)}


def test_link_kinds_names_anticipation():
    alpha = np.array([[0.2, 0.8], [0.1, 0.9], [0.9, 0.1]])  # rows: le, chat, noir
    sure, possible = {(0, 0), (1, 1)}, {(1, 0)}
    assert translation_quality.link_kinds(alpha, sure, possible) == ["possible", "sure", "outside"]
