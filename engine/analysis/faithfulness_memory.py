"""MemN2N: each hop's weights p_i beside removing each fact from memory.

Removing fact i masks its memory slot at every hop (p_i = 0, the other facts keep their
temporal indices T(i)), as if the sentence had never been written to memory. The output
is the model's own answer â (its argmax with every fact); Δ_i = log p(â | all facts) −
log p(â | all but fact i), and whether the argmax changes without fact i.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.analysis import faithfulness as F
from engine.data.babi import Sample
from engine.data.babi_encode import encode, times_and_mask


@dataclass(frozen=True)
class FactRemoval:
    """One question: ``hops`` p ``[K, n]`` over its n kept facts, ``delta`` Δ_i ``[n]``,
    ``answer_without`` the answer's index with fact i removed ``[n]``, ``answer`` â's
    index, ``support`` the supporting facts' indices among the kept ones."""

    hops: np.ndarray
    delta: np.ndarray
    answer_without: np.ndarray
    answer: int
    support: tuple[int, ...]

    def changes(self) -> np.ndarray:
        """Facts whose removal changes the answer ``[n]`` (bool)."""
        return self.answer_without != self.answer

    def agreement(self) -> list[F.Agreement]:
        """Each hop's p against Δ."""
        return [F.agreement(p, self.delta) for p in self.hops]


def remove_each(reader, sample: Sample) -> FactRemoval:
    """Every fact of ``sample`` removed in turn, in one batch of n + 1 copies."""
    enc = encode([sample], reader.vocab, reader.candidates, reader.cfg.memory)
    n = int(enc.n_facts[0])
    story = torch.from_numpy(enc.story)  # (1, M, J)
    times, mask = times_and_mask(torch.from_numpy(enc.n_facts), story.shape[1])
    query = torch.from_numpy(enc.query)
    last: dict = {}

    def score(keep: torch.Tensor) -> torch.Tensor:  # keep (n + 1, n) → log p(â) (n + 1,)
        B = keep.shape[0]
        m = mask.expand(B, -1).clone()
        m[:, :n] &= keep
        logits, p, _ = reader(story.expand(B, -1, -1), times.expand(B, -1), m, query.expand(B, -1))
        lp = torch.log_softmax(logits, -1)  # (B, n_answers)
        a = int(lp[0].argmax())
        last.update(p=p[0, :, :n], answer=a, without=lp[1:].argmax(-1))
        return lp[:, a]

    delta = F.occlusion(score, n)
    return FactRemoval(
        hops=last["p"].numpy(),
        delta=delta,
        answer_without=last["without"].numpy(),
        answer=last["answer"],
        support=tuple(int(i) for i in np.flatnonzero(enc.support[0])),
    )
