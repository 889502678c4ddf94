"""Head types with the definitions of TransformerLens's ``head_detector``
(``transformer_lens/head_detector.py``; Elhage et al. 2021, Olsson et al. 2022).

Each head type is a 0/1 detection pattern M over (query i, key j), lower triangular:

- previous token:  M[i, j] = 1 iff j = i − 1;
- duplicate token: M[i, j] = 1 iff j < i and t_j = t_i (an earlier copy of the query's token);
- induction:       M[i, j] = 1 iff 1 ≤ j < i and t_{j−1} = t_i (the token *after* an earlier
  copy of the query's token: the head that completes "… A B … A" with B).

The "mul" score of a head with weights α[i, j] is the share of its attention that lands
on the predicted cells, with the first column (BOS) zeroed first, because heads park
attention there whatever their type (see :mod:`engine.analysis.sinks`):

    score = Σ_ij α'[i, j] · M[i, j] / Σ_ij α'[i, j],   α' = α with α'[:, 0] = 0.

1.0 means every bit of attention outside BOS is where the type predicts.  The scores are
measured on repeated random tokens [BOS, r_1 … r_n, r_1 … r_n]: in the second copy a
previous-token head looks at i − 1, a duplicate-token head at i − n and an induction head
at i − n + 1, and nothing in the text itself can explain the pattern.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from engine.analysis.forward import self_attention
from engine.models import chat as chat_lib
from engine.params import Param
from engine.trace import AttentionMap

HEAD_TYPES = ("previous", "duplicate", "induction")
RANDOM_TOKENS = 50  # |r| of the random sequence [BOS, r, r]: TransformerLens's detector
PROMPT_TOKENS = 24  # |r| when r is the reader's prompt: its map stays readable on a page
# What detect_heads may be asked (checked first: n sets the maps' T = 2n + 1, so an
# unbounded n is L·H·T² floats of memory; a seed that is not a number failed in numpy).
DETECT = (
    Param("seed", "Seed", 0, 0, 2**32 - 1),
    Param("random_tokens", "Random tokens", RANDOM_TOKENS, 1, 256),
    Param("sequences", "Sequences", 1, 1, 16),
)


def previous_token_mask(T: int) -> np.ndarray:
    """``[T, T]`` with ones on the first sub-diagonal: M[i, i − 1] = 1."""
    return np.eye(T, k=-1, dtype=np.float32)


def duplicate_token_mask(tokens: Sequence[int]) -> np.ndarray:
    """``[T, T]``: M[i, j] = 1 iff j < i and tokens[j] == tokens[i]."""
    t = np.asarray(tokens)
    return np.tril(t[:, None] == t[None, :], k=-1).astype(np.float32)


def induction_mask(tokens: Sequence[int]) -> np.ndarray:
    """``[T, T]``: the duplicate mask shifted one key to the right, M[i, j] = D[i, j − 1],
    kept lower triangular (j < i; j = i would be the query attending to itself)."""
    dup = duplicate_token_mask(tokens)
    shifted = np.zeros_like(dup)
    shifted[:, 1:] = dup[:, :-1]
    return np.tril(shifted, k=-1)


def masks(tokens: Sequence[int]) -> dict[str, np.ndarray]:
    """The three detection patterns for one token sequence, keyed by :data:`HEAD_TYPES`."""
    return {
        "previous": previous_token_mask(len(tokens)),
        "duplicate": duplicate_token_mask(tokens),
        "induction": induction_mask(tokens),
    }


def copying_row(weights: np.ndarray, tokens: Sequence) -> tuple[int, int, float] | None:
    """Where a head really does induction on ``tokens``: (row i, its one induction key j,
    α[i, j]) for the query whose weight on its induction key is the largest among the
    queries whose most-attended key *is* that key; None where no query's does.

    Only queries with exactly one induction key count (a token seen once before), so the
    question "which token does this head copy?" has one right answer, measured, not
    assumed: a class asked about this row and reasoning correctly is told it is right.
    """
    w = np.asarray(weights)
    m = induction_mask(tokens)
    best = None
    for i in np.flatnonzero(m.sum(axis=1) == 1):
        j = int(np.flatnonzero(m[i])[0])
        if int(np.argmax(w[i])) == j and (best is None or w[i, j] > best[2]):
            best = (int(i), j, float(w[i, j]))
    return best


def head_score(weights: np.ndarray, mask: np.ndarray, *, exclude_bos: bool = True) -> float:
    """The "mul" score of one head: mass on the cells of ``mask`` / total mass."""
    return float(
        head_scores_for(np.asarray(weights)[None, None], mask, exclude_bos=exclude_bos)[0, 0]
    )


def head_scores_for(
    weights: np.ndarray, mask: np.ndarray, *, exclude_bos: bool = True
) -> np.ndarray:
    """``[L, H, T, T]`` weights and one ``[T, T]`` pattern → ``[L, H]`` "mul" scores."""
    w = np.asarray(weights, dtype=np.float64)
    if w.shape[-2:] != mask.shape or mask.shape[0] != mask.shape[1]:
        raise ValueError(f"weights {w.shape} and mask {mask.shape} must share one [T, T]")
    if exclude_bos:
        w = w.copy()
        w[..., 0] = 0.0
    total = w.sum(axis=(-2, -1))
    hit = (w * mask).sum(axis=(-2, -1))
    return np.divide(hit, total, out=np.zeros_like(hit), where=total > 0).astype(np.float32)


def head_scores(
    weights: np.ndarray, tokens: Sequence[int], *, exclude_bos: bool = True
) -> dict[str, np.ndarray]:
    """``[L, H, T, T]`` self-attention over ``tokens`` → ``{type: [L, H]}`` for every type."""
    return {
        name: head_scores_for(weights, m, exclude_bos=exclude_bos)
        for name, m in masks(tokens).items()
    }


def repeated_random_tokens(
    vocab_size: int,
    n: int,
    repeats: int = 2,
    seed: int = 0,
    bos_id: int | None = None,
    exclude: Iterable[int] = (),
) -> list[int]:
    """[BOS?] + r × ``repeats``, r = ``n`` distinct token ids drawn uniformly from the
    vocabulary without ``exclude`` (special tokens), so every duplicate is a planted one."""
    banned = set(exclude)
    pool = np.array([i for i in range(vocab_size) if i not in banned])
    if not 1 <= n <= len(pool) or repeats < 1:
        raise ValueError(f"n must be in [1, {len(pool)}] and repeats ≥ 1; got {n}, {repeats}")
    r = np.random.default_rng(seed).choice(pool, size=n, replace=False).tolist()
    return ([] if bos_id is None else [int(bos_id)]) + r * repeats


def detect_heads(chat, seed: int = 0, n: int = RANDOM_TOKENS, *, sequences: int = 1) -> dict:
    """Scores of every layer × head on ``sequences`` random sequences [BOS, r, r] (|r| = n)
    through the real model, averaged over the sequences as TransformerLens does for a list.

    BOS is the tokenizer's BOS token (SmolLM2: ``<|im_start|>``, the token every chat
    starts with); r never holds a special token. Returns ``previous``, ``duplicate``,
    ``induction`` (float32 ``[L, H]`` in [0, 1]), ``tokens`` (the first sequence's ids),
    ``seed``, ``n``, ``sequences``.
    """
    seed, n, sequences = (p.check(v) for p, v in zip(DETECT, (seed, n, sequences), strict=True))
    tok = chat.tokenizer
    special = set(tok.all_special_ids) | set(getattr(chat, "special_ids", ()))
    seqs = [
        repeated_random_tokens(len(tok), n, seed=seed + i, bos_id=_bos(tok), exclude=special)
        for i in range(sequences)
    ]
    weights = self_attention(chat, seqs)  # (B, L, H, T, T)
    per_seq = [head_scores(w, s) for w, s in zip(weights, seqs, strict=True)]
    out = {name: np.mean([p[name] for p in per_seq], axis=0) for name in HEAD_TYPES}
    return {**out, "tokens": seqs[0], "seed": seed, "n": n, "sequences": sequences}


def prompt_twice(chat, prompt: str, limit: int = PROMPT_TOKENS) -> tuple[AttentionMap, int]:
    """The prompt's first ``limit`` tokens written twice after BOS, as :func:`detect_heads`
    writes random ones: (every head's map on it, BOS hidden and each row renormalised over
    the keys left; n, the tokens of one copy). The page asks a head found on random tokens
    whether it does the same on the reader's words."""
    ids = chat_lib.encode(chat, prompt, template=False)[:limit]
    seq = [_bos(chat.tokenizer), *ids, *ids]
    labels = chat_lib.token_labels(chat, seq)
    amap = AttentionMap(self_attention(chat, seq), labels, labels, "self")
    return amap.hide_sinks(labels[:1]), len(ids)


def _bos(tok) -> int:
    """The tokenizer's BOS (SmolLM2: ``<|im_start|>``, the token every chat starts with)."""
    bos = tok.bos_token_id
    return bos if bos is not None else tok.convert_tokens_to_ids("<|im_start|>")
