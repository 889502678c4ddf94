"""Ways to read many heads at once, each a method of AttentionMap that gives a new map.

- head averaging: Ā_l = (1/H) Σ_h A_{l,h}
- attention rollout (Abnar & Zuidema 2020): with the residual stream counted as half
  of every layer, Ã_l = ½ Ā_l + ½ I (rows renormalised) and R_l = Ã_l R_{l-1}, R_0 = I;
  row i of R_l says how much of token i's layer-l state comes from each input token.
- word-piece merging (Clark et al. 2019, "What does BERT look at?"): attention *to* a
  word is the sum over its pieces, attention *from* a word the mean over its pieces, so
  every row still sums to 1.
- sink hiding: drop [CLS]/[SEP]-like tokens, where heads park attention as a no-op
  (Clark et al. 2019), and renormalise each row over the keys that remain.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Self

import numpy as np

from engine.errors import InputError
from engine.messages import Message, joined
from engine.params import Param

# SentencePiece and byte-level BPE mark the start of a word; a byte-level label made
# readable (engine.models.token_text) starts with the space itself.
BPE_WORD_START = ("▁", "Ġ", " ")
PART = re.compile(r"^(.+) (\d+)/(\d+)$")  # token j of n holding one character: "注 1/2"
WORDPIECE_CONTINUE = "##"
RESIDUAL = Param("residual", "Residual weight", 0.5, 0.0, 1.0)


class HeadReadings:
    """The readings of an :class:`engine.trace.AttentionMap` (its base class, so a page
    transforms the map it holds, and this module never imports the map back)."""

    def _derived(self, weights: np.ndarray, note: str, **changes) -> Self:
        note = joined([self.note, note]) if self.note else note
        return replace(self, weights=weights, note=note, **changes)

    def head_average(self) -> Self:
        """``[L, H, Q, K]`` → ``[L, 1, Q, K]``: the mean over heads of each layer."""
        mean = self.weights.mean(axis=1, keepdims=True)
        return self._derived(mean, Message("note.head_mean"), head_labels=("mean",))

    def rollout(self, residual: float = 0.5) -> Self:
        """``[L, H, T, T]`` self-attention → ``[L, 1, T, T]`` cumulative rollout R_1 … R_L.

        ``residual`` is the weight of the skip connection, 0 … 1 (Abnar & Zuidema: 0.5);
        outside it the rows are no longer a mixture and the rollout no longer a flow."""
        residual = RESIDUAL.check(residual)
        L, _, Q, K = self.shape
        if Q != K or self.kind != "self":
            raise ValueError("rollout needs self-attention (queries and keys are the same tokens)")
        eye = np.eye(Q)
        R = eye
        out = np.empty((L, 1, Q, K), dtype=np.float32)
        for layer in range(L):
            A = residual * eye + (1 - residual) * self.weights[layer].mean(axis=0)
            A = A / A.sum(axis=-1, keepdims=True)
            R = A @ R
            out[layer, 0] = R
        return self._derived(
            out,
            Message("note.rollout", residual=f"{residual:g}"),
            head_labels=("rollout",),
            layer_labels=tuple(f"R{i + 1}" for i in range(L)),
            exact=False,
        )

    def merge_word_pieces(self, keep: Iterable[str] = ()) -> Self:
        """Rows: mean over a word's pieces; columns: sum over them. Rows still sum to 1."""
        keep = tuple(keep)
        qg, ql = word_groups(self.query_labels, keep)
        kg, kl = word_groups(self.key_labels, keep)
        if len(qg) == self.shape[2] and len(kg) == self.shape[3]:
            return self
        Mq = _pool_matrix(qg, self.shape[2], mean=True)  # (Q', Q)
        Mk = _pool_matrix(kg, self.shape[3], mean=False)  # (K', K)
        w = np.einsum("aq,lhqk,bk->lhab", Mq, self.weights.astype(np.float64), Mk)
        return self._derived(
            w.astype(np.float32),
            Message("note.word_pieces"),
            query_labels=ql,
            key_labels=kl,
        )

    def hide_sinks(self, sinks: Iterable[str]) -> Self:
        """Drop sink tokens from rows and columns; renormalise each row over the keys left."""
        sinks = set(sinks)
        qi = [i for i, t in enumerate(self.query_labels) if t not in sinks]
        ki = [i for i, t in enumerate(self.key_labels) if t not in sinks]
        if len(qi) == self.shape[2] and len(ki) == self.shape[3]:
            return self
        if not qi or not ki:  # a text of only [CLS]/[SEP] (typed, or the tokenizer's own)
            raise InputError("rollout.nothing_left")
        w = self.weights[:, :, qi][:, :, :, ki].astype(np.float64)
        total = w.sum(axis=-1, keepdims=True)
        w = np.divide(w, total, out=np.zeros_like(w), where=total > 0)
        return self._derived(
            w.astype(np.float32),
            Message("note.sinks_hidden"),
            query_labels=[self.query_labels[i] for i in qi],
            key_labels=[self.key_labels[i] for i in ki],
        )


def word_groups(
    tokens: Sequence[str], keep: Iterable[str] = ()
) -> tuple[list[list[int]], list[str]]:
    """Indices of the pieces of each word, and the word labels.

    WordPiece marks continuations (``##ing``); SentencePiece / byte-level BPE mark word
    starts (``▁the``, ``Ġthe``, or readable, `` the``), and the tokens of one character
    split across several ("注 1/2", "注 2/2") are that character once. Tokens in ``keep``
    (special tokens) stay alone.
    """
    keep = set(keep)
    bpe = any(t.startswith(BPE_WORD_START) for t in tokens)
    groups: list[list[int]] = []
    labels: list[str] = []
    for i, t in enumerate(tokens):
        part = PART.match(t) if bpe else None
        if part and part[2] != "1":  # the rest of a character its first part began
            cont, piece = True, ""
        elif bpe:
            text = part[1] if part else t
            cont = not text.startswith(BPE_WORD_START)
            piece = text.lstrip("".join(BPE_WORD_START))
        else:
            cont = t.startswith(WORDPIECE_CONTINUE)
            piece = t[len(WORDPIECE_CONTINUE) :] if cont else t
        if cont and groups and t not in keep and tokens[groups[-1][-1]] not in keep:
            groups[-1].append(i)
            labels[-1] += piece
        else:
            groups.append([i])
            labels.append(t if t in keep else piece or t)
    return groups, labels


def _pool_matrix(groups: list[list[int]], n: int, *, mean: bool) -> np.ndarray:
    """``[len(groups), n]``: row g has 1 (sum) or 1/|g| (mean) on the pieces of word g."""
    M = np.zeros((len(groups), n), dtype=np.float64)
    for g, idx in enumerate(groups):
        M[g, idx] = 1.0 / len(idx) if mean else 1.0
    return M
