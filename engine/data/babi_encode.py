"""bAbI samples → padded id arrays for a memory network.

A story keeps its latest ``memory`` sentences (the paper's memory size, 50). Temporal
indices count back from the newest sentence (0 = latest), which is what the temporal
encoding T(i) is indexed by; :func:`noisy_times` spreads them with random gaps, the
paper's "random noise" of empty memories (Sukhbaatar et al. 2015, §4.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from engine.data.babi import Sample, words
from engine.data.vocab import PAD_ID, Vocab


@dataclass
class Encoded:
    """Arrays for N samples: story (N, M, J), n_facts (N,), query (N, Jq), answer (N,),
    support (N, M) bool over the kept sentences, dropped (N,) sentences cut for memory."""

    story: np.ndarray
    n_facts: np.ndarray
    query: np.ndarray
    answer: np.ndarray
    support: np.ndarray
    dropped: np.ndarray

    def __len__(self) -> int:
        return len(self.answer)


def _ids(tokens: Sequence[str], vocab: Vocab) -> list[int]:
    return [vocab.stoi[t] for t in tokens if t in vocab.stoi]


def encode(
    samples: Sequence[Sample],
    vocab: Vocab,
    answers: Sequence[str],
    memory: int,
    memo: dict[str, list[int]] | None = None,
) -> Encoded:
    """Pad every story to the longest kept one; unknown words are left out. ``memo`` keeps
    each sentence's ids for the next call with the same vocabulary (a training run encodes
    its stories again every epoch)."""
    answer_index = {a: i for i, a in enumerate(answers)}
    memo = {} if memo is None else memo

    def ids(text: str) -> list[int]:
        if text not in memo:
            memo[text] = _ids(words(text), vocab)
        return memo[text]

    stories, queries = [], []
    for s in samples:
        stories.append([ids(x) for x in s.story[-memory:]])
        queries.append(ids(s.question))
    N = len(samples)
    M = max(1, max((len(st) for st in stories), default=1))
    J = max(1, max((len(x) for st in stories for x in st), default=1))
    Jq = max(1, max((len(q) for q in queries), default=1))
    story = np.full((N, M, J), PAD_ID, dtype=np.int64)
    query = np.full((N, Jq), PAD_ID, dtype=np.int64)
    support = np.zeros((N, M), dtype=bool)
    n_facts = np.array([len(st) for st in stories], dtype=np.int64)
    dropped = np.array([max(0, len(s.story) - memory) for s in samples], dtype=np.int64)
    for n, (st, q, s) in enumerate(zip(stories, queries, samples, strict=True)):
        for i, x in enumerate(st):
            story[n, i, : len(x)] = x
        query[n, : len(q)] = q
        for i in s.support:
            if i - dropped[n] >= 0:
                support[n, i - dropped[n]] = True
    answer = np.array([answer_index.get(s.answer, -1) for s in samples], dtype=np.int64)
    return Encoded(story, n_facts, query, answer, support, dropped)


def times_and_mask(n_facts: torch.Tensor, M: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Temporal index i (0 = newest) and the mask of real sentences, both (B, M)."""
    pos = torch.arange(M)[None, :]  # (1, M)
    mask = pos < n_facts[:, None]
    times = (n_facts[:, None] - 1 - pos).clamp(min=0)
    return times, mask


def noisy_times(
    n_facts: torch.Tensor, M: int, memory: int, rate: float, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Like :func:`times_and_mask`, with up to ⌈rate·n⌉ empty memories slipped in at random.

    Each story of n sentences takes n of n + gaps slots (gaps uniform in 0 … ⌈rate·n⌉),
    keeping order, so the temporal indices skip where the empty memories would be.
    """
    times, mask = times_and_mask(n_facts, M)
    for b, n in enumerate(n_facts.tolist()):
        gaps = int(torch.randint(0, int(np.ceil(rate * n)) + 1, (1,), generator=generator))
        slots = min(n + gaps, memory)
        if slots > n:
            keep = torch.randperm(slots, generator=generator)[:n].sort().values  # ascending
            times[b, :n] = slots - 1 - keep
    return times, mask
