"""End-To-End Memory Networks (Sukhbaatar, Szlam, Weston & Fergus, NeurIPS 2015).

Each sentence x_i of the story is written to memory twice (§2.1):

    m_i = Σ_j l_j ∘ A x_ij + T_A(i)        input memory  (position encoding l_j, §4.1)
    c_i = Σ_j l_j ∘ C x_ij + T_C(i)        output memory (temporal encoding T, §4.1)
    u   = Σ_j l_j ∘ B q_j                  the question

and each hop k = 1 … K reads it with attention:

    p_i     = softmax(u^kᵀ m_i^k)          (removed while *linear start* trains, §4.2)
    o^k     = Σ_i p_i c_i^k
    u^{k+1} = u^k + o^k                    (H u^k + o^k with layer-wise tying, §2.2)
    â       = softmax(W (o^K + u^K))

Position encoding: l_kj = (1 − j/J) − (k/d)(1 − 2j/J) for word j of J, dimension k of d.
Temporal index i counts back from the most recent sentence (0 = latest), and training
may leave random gaps in it: the paper's *random noise* of empty memories (§4.1).

Weight tying (§2.2). Adjacent: A^{k+1} = C^k, B = A^1, Wᵀ = C^K (so K + 1 embedding
tables). Layer-wise: one A and one C for every hop, a separate B and W, and the linear
map H. Here W scores the *answer candidates* (the answer words seen in training), not
the whole vocabulary: the same rows of Wᵀ = C^K, only the ones that can be answers.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from engine import checkpoints
from engine.attention import masked_softmax
from engine.data.babi import Sample, words
from engine.data.babi_encode import encode, times_and_mask
from engine.data.vocab import Vocab
from engine.errors import InputError
from engine.messages import Message
from engine.trace import AttentionMap, Trace

TYINGS = ("adjacent", "layerwise")


@dataclass(frozen=True)
class MemN2NConfig:
    vocab_size: int
    answers: tuple[int, ...]  # vocabulary ids of the answer candidates
    d: int = 50
    hops: int = 3
    memory: int = 50
    tying: str = "adjacent"
    position_encoding: bool = True
    temporal: bool = True

    def __post_init__(self) -> None:
        assert self.tying in TYINGS, f"tying must be one of {TYINGS}, got {self.tying!r}"
        assert self.hops >= 1, "at least one hop"
        object.__setattr__(self, "answers", tuple(int(a) for a in self.answers))

    def to_json(self) -> dict:
        return {**asdict(self), "answers": list(self.answers)}


def position_encoding(lengths: torch.Tensor, n_words: int, d: int) -> torch.Tensor:
    """l_kj = (1 − j/J) − (k/d)(1 − 2j/J), zero past each sentence's J words.

    lengths: (...,) number of words J per sentence → (..., n_words, d).
    """
    j = torch.arange(1, n_words + 1, dtype=torch.float32)  # (n_words,)
    k = torch.arange(1, d + 1, dtype=torch.float32)  # (d,)
    J = lengths.clamp(min=1).to(torch.float32)[..., None, None]  # (..., 1, 1)
    jj = j[:, None]  # (n_words, 1)
    l = (1 - jj / J) - (k / d) * (1 - 2 * jj / J)  # (..., n_words, d)
    return l * (jj <= J)


class MemN2N(nn.Module):
    """The network, and once loaded (:meth:`from_pretrained`) its vocabulary, answer
    candidates and checkpoint meta too, as fairseq's encoder holds its dictionary: no wrapper
    type sits between the module and its card (docs/ARCHITECTURE.md)."""

    def __init__(
        self,
        cfg: MemN2NConfig,
        vocab: Vocab | None = None,
        candidates: tuple[str, ...] = (),
        meta: dict | None = None,
        name: str = "",
    ):
        super().__init__()
        self.cfg = cfg
        self.vocab, self.candidates, self.meta, self.name = vocab, candidates, meta or {}, name
        n_tables = cfg.hops + 1 if cfg.tying == "adjacent" else 3  # A, C (+ B) layer-wise
        self.E = nn.ModuleList(
            nn.Embedding(cfg.vocab_size, cfg.d, padding_idx=0) for _ in range(n_tables)
        )
        self.T = nn.ParameterList(
            nn.Parameter(torch.empty(cfg.memory, cfg.d))
            for _ in range(n_tables - (cfg.tying == "layerwise"))
        )
        if cfg.tying == "layerwise":
            self.H = nn.Linear(cfg.d, cfg.d, bias=False)
            self.W = nn.Linear(cfg.d, len(cfg.answers), bias=False)
        self.register_buffer("answer_ids", torch.tensor(cfg.answers), persistent=False)
        for p in self.parameters():  # the paper: Gaussian, σ = 0.1
            nn.init.normal_(p, std=0.1)
        for e in self.E:
            e.weight.data[0].zero_()

    @classmethod
    def from_pretrained(cls, name: str, directory=None) -> MemN2N:
        """A shipped checkpoint in eval mode, with its vocabulary and answer candidates."""
        state, meta = checkpoints.load(name, directory)
        cfg = MemN2NConfig(**{**meta["config"], "answers": tuple(meta["config"]["answers"])})
        model = cls(cfg, Vocab.from_json(meta["vocab"]), tuple(meta["candidates"]), meta, name)
        model.load_state_dict({k: v.float() for k, v in state.items()})
        return model.eval()

    @torch.no_grad()
    def memories(self, samples: list[Sample]) -> list[np.ndarray]:
        """The first hop's input memories m_i of each sample's story (n_kept_i, d), in one
        batch: the vectors a Trace carries (``vectors["memory"]``), for many stories."""
        enc = encode(samples, self.vocab, self.candidates, self.cfg.memory)
        story, n_facts = torch.from_numpy(enc.story), torch.from_numpy(enc.n_facts)
        times, mask = times_and_mask(n_facts, story.shape[1])
        _, _, m = self(story, times, mask, torch.from_numpy(enc.query))
        return [m[i, : int(n)].numpy() for i, n in enumerate(enc.n_facts)]

    # Which table plays A^k, C^k, B for each tying scheme (k counts from 0 here).
    def _A(self, k: int) -> int:
        return k if self.cfg.tying == "adjacent" else 0

    def _C(self, k: int) -> int:
        return k + 1 if self.cfg.tying == "adjacent" else 1

    def _B(self) -> int:
        return 0 if self.cfg.tying == "adjacent" else 2

    def _pe(self, ids: torch.Tensor) -> torch.Tensor | None:
        """l for every word of ids (..., J) → (..., J, d); None when PE is off (bag of words)."""
        if not self.cfg.position_encoding:
            return None
        return position_encoding((ids != 0).sum(-1), ids.shape[-1], self.cfg.d)

    def _embed(self, table: int, ids: torch.Tensor, l: torch.Tensor | None) -> torch.Tensor:
        """Σ_j l_j ∘ E x_j over words; ids (..., J) → (..., d)."""
        e = self.E[table](ids)  # (..., J, d)
        return (e if l is None else e * l).sum(-2)

    def _memory(self, table: int, story: torch.Tensor, l, times: torch.Tensor) -> torch.Tensor:
        m = self._embed(table, story, l)  # (B, M, d)
        if self.cfg.temporal:
            t = table if self.cfg.tying == "adjacent" else table % 2
            m = m + self.T[t][times]  # T(i): (B, M, d)
        return m

    def forward(
        self,
        story: torch.Tensor,
        times: torch.Tensor,
        mask: torch.Tensor,
        query: torch.Tensor,
        *,
        linear: bool = False,
    ):
        """story (B, M, J) word ids, times (B, M) temporal indices, mask (B, M) True where
        a sentence is, query (B, Jq).

        Returns logits over the answer candidates (B, n_answers), the attention p per
        hop (B, K, M) and the first hop's input memories m_i (B, M, d).
        """
        u = self._embed(self._B(), query, self._pe(query))  # (B, d)
        l = self._pe(story)  # (B, M, J, d), shared by every table
        ps, first_m = [], None
        c_prev = None
        for k in range(self.cfg.hops):
            # Adjacent tying: A^{k+1} = C^k, so this hop's m is the last hop's c.
            m = (
                c_prev
                if c_prev is not None and self.cfg.tying == "adjacent"
                else self._memory(self._A(k), story, l, times)
            )  # (B, M, d)
            c = self._memory(self._C(k), story, l, times)  # (B, M, d)
            first_m = m if first_m is None else first_m
            scores = torch.einsum("bmd,bd->bm", m, u)  # u^kᵀ m_i
            p = scores * mask if linear else masked_softmax(scores, mask)  # (B, M)
            o = torch.einsum("bm,bmd->bd", p, c)  # o^k = Σ_i p_i c_i
            ps.append(p)
            c_prev = c
            if k < self.cfg.hops - 1:
                u = (self.H(u) if self.cfg.tying == "layerwise" else u) + o  # u^{k+1}
        z = o + u  # o^K + u^K
        if self.cfg.tying == "layerwise":
            logits = self.W(z)
        else:  # Wᵀ = C^K: the candidates' rows of the last output table
            logits = z @ self.E[self.cfg.hops].weight[self.answer_ids].T  # (B, n_answers)
        return logits, torch.stack(ps, 1), first_m


# -- a trained model answering one story ---------------------------------------------
def checkpoint_name(task: int | str) -> str:
    """``memn2n-task<N>`` for a task's own model, ``memn2n-joint`` for the joint one."""
    return "memn2n-joint" if task == "joint" else f"memn2n-task{int(task)}"


def load(name: str = "memn2n-joint", directory=None) -> MemN2N:
    return MemN2N.from_pretrained(name, directory)


def answer(reader: MemN2N, sample: Sample) -> Trace:
    """Answer one question and return a Trace.

    maps["memory"]: p per hop, [hops, 1, 1, n_sentences] (query = the question, keys =
    the kept sentences); vectors["memory"]: the first hop's m_i, (n_sentences, d);
    outputs: the answer, every candidate's probability, and what the model ignored
    (unknown words, sentences beyond the memory).
    """
    t0 = time.perf_counter()
    cfg = reader.cfg
    unknown = reader.vocab.unknown([w for x in (*sample.story, sample.question) for w in words(x)])
    kept = sample.story[-cfg.memory :]
    if not kept:
        raise InputError("memn2n.no_facts")
    if not [w for w in words(sample.question) if w in reader.vocab]:
        raise InputError("memn2n.unknown_question", words=", ".join(unknown[:8]))
    enc = encode([sample], reader.vocab, reader.candidates, cfg.memory)
    story, query = torch.from_numpy(enc.story), torch.from_numpy(enc.query)
    times, mask = times_and_mask(torch.from_numpy(enc.n_facts), story.shape[1])
    with torch.no_grad():
        logits, p, m = reader(story, times, mask, query)
    probs = torch.softmax(logits[0], -1)
    t_forward = time.perf_counter() - t0
    weights = p[0].numpy()[:, None, None, :]  # (hops, 1, 1, n_sentences)
    support = [int(i) for i in np.flatnonzero(enc.support[0])]
    amap = AttentionMap(
        weights=weights,
        query_labels=(sample.question,),
        key_labels=kept,
        kind="memory",
        layer_labels=tuple(f"hop {k + 1}" for k in range(cfg.hops)),
        note=Message("note.memory_hops"),
    )
    best = int(probs.argmax())
    outputs = {
        "answer": reader.candidates[best],
        "probability": float(probs[best]),
        "candidates": list(reader.candidates),
        "probabilities": [float(x) for x in probs],
        "expected": sample.answer,
        "support": support,
        "unknown_words": unknown,
        "dropped_sentences": int(enc.dropped[0]),
    }
    return Trace(
        model=reader.name or "memn2n",
        task=f"babi-{sample.task}" if sample.task else "babi",
        inputs={"story": list(sample.story), "question": sample.question},
        outputs=outputs,
        maps={"memory": amap},
        vectors={"memory": m[0].numpy().astype(np.float32)},
        timings={"forward_ms": 1000 * t_forward},
    )
