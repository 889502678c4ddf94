"""Attention sinks (Xiao et al. 2023, "Efficient Streaming Language Models with Attention
Sinks", arXiv 2309.17453): how much attention each head parks on the first tokens.

For weights α[l, h, q, k] (rows sum to 1) and the text position p_q of each query row,
every measure is a mean over the query rows R = {q : p_q ≥ first}, so that no row counts
whose keys are *all* among the first tokens (a query at position 0 can only attend to
itself, which says nothing about sinks):

- mass on the first n tokens  m_n[l, h] = mean_{q∈R} Σ_{k<n} α[l, h, q, k]
  (``mass_first`` for n = ``first``, ``mass_first1`` for n = 1);
- local width                 w[l, h]   = mean_{q∈R} Σ_k α[l, h, q, k] · |p_q − k|,
  the attention-weighted distance from the query, in tokens;
- entropy                     H[l, h]   = mean_{q∈R} −Σ_k α[l, h, q, k] ln α[l, h, q, k],
  in nats (0: all weight on one key; ln(p_q + 1): uniform over a causal row).

The StreamingLLM figure ("attention to the first token by layer") is
``first_token_by_layer``: the mean over heads and query rows with p_q ≥ 1 of α[l, h, q, 0].
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine import gate
from engine.analysis.forward import self_attention
from engine.models import chat as chat_model


def query_positions_of(weights: np.ndarray, query_positions: Sequence[int] | None) -> np.ndarray:
    """The text position of each query row: given, or the last Q keys (a square
    self-attention map: row q is position q). A generation map ``[L, H, S, K]`` has its
    step-s query at position n_prompt − 1 + s and must pass that explicitly."""
    Q, K = weights.shape[-2:]
    if query_positions is None:
        return np.arange(K - Q, K)
    p = np.asarray(query_positions, dtype=np.int64)
    if p.shape != (Q,) or p.min(initial=0) < 0 or p.max(initial=0) >= K:
        raise ValueError(f"query_positions must be {Q} positions in [0, {K}); got {p.tolist()}")
    return p


def sink_profile(
    weights: np.ndarray,
    *,
    first: int = 4,
    exclude_self: bool = False,
    query_positions: Sequence[int] | None = None,
) -> dict:
    """``[L, H, Q, K]`` weights → the measures of the module docstring, each ``[L, H]``.

    ``exclude_self`` drops each query's weight on its own key and renormalises the row
    over the rest (a head that mostly looks at itself then shows where the remainder
    goes). Returns ``mass_first``, ``mass_first1``, ``local_width``, ``entropy`` (float32
    ``[L, H]``), ``first`` and ``n_queries`` (how many rows the means are over; when no row
    has p_q ≥ first, as in a prompt shorter than first + 1 tokens, every row is used).
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 4:
        raise ValueError(f"weights must be [L, H, Q, K]; got shape {w.shape}")
    K = w.shape[-1]
    first = gate.within(first, 1, K, "sinks.first", high=K, value=first)
    p = query_positions_of(w, query_positions)
    rows = p >= first
    if not rows.any():
        rows = np.ones_like(rows)
    w, p = w[:, :, rows], p[rows]
    if exclude_self:
        w = w.copy()
        w[:, :, np.arange(len(p)), p] = 0.0
        total = w.sum(-1, keepdims=True)
        w = np.divide(w, total, out=np.zeros_like(w), where=total > 0)
    distance = np.abs(p[:, None] - np.arange(K)[None, :])  # |p_q − k|, (Q, K)
    plogp = np.where(w > 0, w * np.log(np.where(w > 0, w, 1.0)), 0.0)
    return {
        "mass_first": w[..., :first].sum(-1).mean(-1).astype(np.float32),
        "mass_first1": w[..., 0].mean(-1).astype(np.float32),
        "local_width": (w * distance).sum(-1).mean(-1).astype(np.float32),
        "entropy": (-plogp.sum(-1)).mean(-1).astype(np.float32),
        "first": first,
        "n_queries": int(rows.sum()),
    }


def first_token_by_layer(
    weights: np.ndarray, *, query_positions: Sequence[int] | None = None
) -> np.ndarray:
    """``[L, H, Q, K]`` → ``[L]``: mean over heads and query rows (p_q ≥ 1) of α[l, h, q, 0]."""
    w = np.asarray(weights, dtype=np.float64)
    p = query_positions_of(w, query_positions)
    rows = p >= 1
    if not rows.any():
        raise ValueError("a map whose only query is the first token says nothing about sinks")
    return w[:, :, rows, 0].mean(axis=(1, 2)).astype(np.float32)


def sink_key_by_layer(weights: np.ndarray) -> np.ndarray:
    """``[L, H, T, T]`` self-attention → ``[L]``: the key that receives the most attention,
    averaged over heads and over the queries that can see it (rows q ≥ max(k, 1))."""
    w = np.asarray(weights, dtype=np.float64)
    T = w.shape[-1]
    received = w[:, :, 1:, :].mean(axis=1).sum(axis=1)  # (L, K): Σ over queries 1..T−1
    sees = np.minimum(T - np.arange(T), T - 1)  # queries q ≥ max(k, 1) that can see key k
    return (received / sees).argmax(-1)


def first_token_control(
    chat, prompt: str, replacement: str = "\n", *, template: bool = True
) -> dict:
    """The StreamingLLM control: is the sink the *first position* or the *first token's
    meaning*? The same tokens are run twice, once as encoded and once with the first token
    replaced by ``replacement`` (one token; StreamingLLM used "\\n"), and per layer the
    attention on position 0 and the key that receives the most attention are compared.
    If the sink stays on position 0 with a meaningless replacement, it is positional.

    Returns ``tokens`` (the original and replacement first tokens), ``original`` and
    ``replaced`` (``[L]`` first-token mass, :func:`first_token_by_layer`),
    ``sink_key_original`` and ``sink_key_replaced`` (``[L]``, :func:`sink_key_by_layer`),
    and ``moved`` (``[L]`` bool: the most-attended key is no longer the same position).
    """
    ids = chat_model.encode(chat, prompt, template=template)
    if len(ids) < 2:
        raise ValueError("the control needs at least two tokens")
    new = chat.tokenizer.encode(replacement, add_special_tokens=False)
    if len(new) != 1:
        raise ValueError(f"the replacement must be one token; {replacement!r} is {len(new)}")
    replaced = [new[0], *ids[1:]]
    both = self_attention(chat, [ids, replaced])  # (2, L, H, T, T)
    keys = [sink_key_by_layer(b) for b in both]
    return {
        "tokens": [chat.tokenizer.decode(ids[:1]), chat.tokenizer.decode(new)],
        "token_ids": [int(ids[0]), int(new[0])],
        "original": first_token_by_layer(both[0]),
        "replaced": first_token_by_layer(both[1]),
        "sink_key_original": keys[0],
        "sink_key_replaced": keys[1],
        "moved": keys[0] != keys[1],
        "n_tokens": len(ids),
    }
