"""Translation and alignment quality: sacreBLEU, exact match, Och & Ney's AER.

AER (Och & Ney 2003) of predicted links A against sure links S ⊆ possible links P:

    AER = 1 − (|A ∩ S| + |A ∩ P|) / (|A| + |S|)

summed over a corpus before dividing. Links are (source_index, target_index).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

Link = tuple[int, int]


def bleu(hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> float:
    """Corpus sacreBLEU (0–100) on already tokenised text (tokenize='none')."""
    import sacrebleu

    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    if not hypotheses:
        return 0.0
    hyp = [" ".join(h) for h in hypotheses]
    ref = [" ".join(r) for r in references]
    return float(sacrebleu.corpus_bleu(hyp, [ref], tokenize="none", force=True).score)


def exact_match(hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> float:
    if not references:
        return 0.0
    return sum(list(h) == list(r) for h, r in zip(hypotheses, references, strict=True)) / len(
        references
    )


def argmax_links(alpha: np.ndarray) -> set[Link]:
    """Hard alignment from soft α (T, K): each target word i to its most attended source word."""
    alpha = np.asarray(alpha)
    return {(int(j), i) for i, j in enumerate(alpha.argmax(axis=-1))}


def aer_counts(
    predicted: Iterable[Link], sure: Iterable[Link], possible: Iterable[Link]
) -> tuple[int, int, int, int]:
    """(|A ∩ S|, |A ∩ P|, |A|, |S|) for one sentence; P is taken as P ∪ S."""
    A, S = set(predicted), set(sure)
    P = set(possible) | S
    return len(A & S), len(A & P), len(A), len(S)


def aer(items: Iterable[tuple[Iterable[Link], Iterable[Link], Iterable[Link]]]) -> float:
    """Corpus AER over (predicted, sure, possible) triples."""
    a_s = a_p = n_a = n_s = 0
    for predicted, sure, possible in items:
        c = aer_counts(predicted, sure, possible)
        a_s, a_p, n_a, n_s = a_s + c[0], a_p + c[1], n_a + c[2], n_s + c[3]
    if n_a + n_s == 0:
        return 0.0
    return 1.0 - (a_s + a_p) / (n_a + n_s)


def link_kinds(alpha: np.ndarray, sure: Iterable[Link], possible: Iterable[Link]) -> list[str]:
    """For each target row of α, what its argmax source word is to the gold alignment:
    "sure", "possible" (only possible: e.g. a determiner looking at the noun whose gender
    it needs — anticipation) or "outside" (not a gold link)."""
    S, P = set(sure), set(possible) | set(sure)
    kinds = []
    for j, i in sorted(argmax_links(alpha), key=lambda link: link[1]):
        kinds.append("sure" if (j, i) in S else "possible" if (j, i) in P else "outside")
    return kinds
