"""AttentionViz's joint query–key embedding of one head (Yeh et al. 2023).

Queries and keys are projected *together*, so a query lands near the keys it attends to.
Two changes make the geometry honest without touching the attention itself:

- translation: k'_j = k_j + (mean(Q) − mean(K)). For every query, q_i·k'_j = q_i·k_j +
  q_i·c adds the same constant to all of its scores, and softmax is shift-invariant.
- scaling: q' = q·s, k' = k/s with s = √(mean‖k‖ / mean‖q‖), so both clouds have the
  same mean norm; q'·k' = q·k exactly.

How well the 2-D picture keeps the attention is measured, not assumed: the Pearson
correlation between q_i·k_j and the embedded distance ‖y(q_i) − y(k_j)‖ over the pairs
the mask allows (a faithful map has a clearly negative one).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.masks import causal_mask, masked_softmax
from engine.projection import method_for, umap_2d


@dataclass(frozen=True)
class JointEmbedding:
    queries_2d: np.ndarray  # [Q, 2]
    keys_2d: np.ndarray  # [K, 2]
    dot: np.ndarray  # [Q, K] q_i · k_j (unscaled scores)
    distance: np.ndarray  # [Q, K] embedded distance
    correlation: float  # Pearson r(dot, distance) over allowed pairs
    method: str  # "umap", or "pca" for very few points


def normalise(q: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Translate and scale as AttentionViz does; q'·k' − q·k is the same for every key of a row."""
    q, k = np.asarray(q, np.float64), np.asarray(k, np.float64)
    k = k + (q.mean(axis=0) - k.mean(axis=0))
    s = np.sqrt(np.linalg.norm(k, axis=1).mean() / max(np.linalg.norm(q, axis=1).mean(), 1e-12))
    return q * s, k / s


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    x, y = x - x.mean(), y - y.mean()
    denom = np.sqrt((x * x).sum() * (y * y).sum())
    return float((x * y).sum() / denom) if denom > 0 else 0.0


def joint_embedding(
    q: np.ndarray, k: np.ndarray, *, mask: np.ndarray | None = None, seed: int = 0
) -> JointEmbedding:
    """q ``[Q, d]`` and k ``[K, d]`` of one head → 2-D positions and the faithfulness score.

    ``mask`` ``[Q, K]`` is True where attention is allowed (a causal decoder sees j ≤ i).
    """
    qn, kn = normalise(q, k)
    xy = umap_2d(np.concatenate([qn, kn]).astype(np.float32), seed=seed)
    yq, yk = xy[: len(q)], xy[len(q) :]
    dot = np.asarray(q, np.float64) @ np.asarray(k, np.float64).T
    dist = np.linalg.norm(yq[:, None, :] - yk[None, :, :], axis=-1)
    allowed = np.ones_like(dot, dtype=bool) if mask is None else np.asarray(mask, bool)
    r = pearson(dot[allowed], dist[allowed])
    return JointEmbedding(yq, yk, dot, dist, r, method_for(len(q) + len(k)))


@dataclass(frozen=True)
class NeuronView:
    """bertviz's neuron view of one query: how q_i·k_j/√d_k and α_ij come out of q and k."""

    q: np.ndarray  # [d_k] the query q_i
    k: np.ndarray  # [K, d_k] every key k_j
    product: np.ndarray  # [K, d_k] q_i ∘ k_j; its row sums are the dot products
    scores: np.ndarray  # [K] q_i·k_j / √d_k
    alpha: np.ndarray  # [K] α_ij = softmax_j(scores), 0 where the mask forbids the key


def allowed_keys(kind: str, n_q: int, n_k: int) -> np.ndarray | None:
    """``[Q, K]`` True where a query of a ``kind`` map may attend: a decoder's own tokens
    causally (the last Q of K when decoding against a cache); None, all of them, otherwise."""
    return causal_mask(n_q, n_k).numpy() if kind == "decoder_self" else None


def neuron_view(q: np.ndarray, k: np.ndarray, mask: np.ndarray | None = None) -> NeuronView:
    """The neuron view of query ``q`` ``[d_k]`` against keys ``k`` ``[K, d_k]``.

    ``mask`` ``[K]`` is True where the query may attend (a decoder's causal row).
    """
    q, k = np.asarray(q, np.float64), np.asarray(k, np.float64)
    product = q[None, :] * k
    scores = product.sum(-1) / np.sqrt(q.shape[0])
    allowed = None if mask is None else torch.as_tensor(np.asarray(mask, bool))
    alpha = masked_softmax(torch.from_numpy(scores), allowed).numpy()
    return NeuronView(q=q, k=k, product=product, scores=scores, alpha=alpha)
