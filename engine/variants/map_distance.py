"""How far a variant is from full attention on the same input.

- relative output error ‖O − O_full‖_F / ‖O_full‖_F
- KL(P_full ‖ P) and Jensen–Shannon divergence of the maps, mean over query rows
  (only for maps whose rows are distributions)
- top-k overlap: |top-k(P_full,i) ∩ top-k(P_i)| / k, mean over rows
- missed mass: the full-attention weight on keys the variant's pattern cannot see
"""

from __future__ import annotations

import numpy as np
import torch

EPS = 1e-12


def relative_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    return float((out - ref).double().norm() / ref.double().norm().clamp(min=EPS))


def _rows(p: np.ndarray) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    return p.reshape(-1, p.shape[-1])


def kl_divergence(ref: np.ndarray, p: np.ndarray) -> float:
    """mean_i Σ_j ref_ij log(ref_ij / p_ij), with p floored at 1e-12 (nats)."""
    r, q = _rows(ref), _rows(p)
    keep = r.sum(axis=1) > 0
    r, q = r[keep], q[keep]
    terms = np.where(r > 0, r * (np.log(np.maximum(r, EPS)) - np.log(np.maximum(q, EPS))), 0.0)
    return float(terms.sum(axis=1).mean()) if len(r) else 0.0


def js_divergence(ref: np.ndarray, p: np.ndarray) -> float:
    """mean_i JS(ref_i, p_i) = ½ KL(ref‖m) + ½ KL(p‖m), m = (ref + p)/2; in [0, ln 2]."""
    r, q = _rows(ref), _rows(p)
    m = (r + q) / 2
    return 0.5 * kl_divergence(r, m) + 0.5 * kl_divergence(q, m)


def topk_overlap(ref: np.ndarray, p: np.ndarray, k: int = 5) -> float:
    r, q = _rows(ref), np.abs(_rows(p))
    k = max(1, min(k, r.shape[1]))
    top_r = np.argpartition(-r, k - 1, axis=1)[:, :k]
    top_q = np.argpartition(-q, k - 1, axis=1)[:, :k]
    hits = [len(np.intersect1d(a, b)) for a, b in zip(top_r, top_q, strict=True)]
    return float(np.mean(hits) / k)


def missed_mass(ref: np.ndarray, pattern: np.ndarray) -> float:
    """mean_i Σ_{j not visible} ref_ij: attention the pattern cannot reach."""
    r = _rows(ref)
    vis = _rows(np.broadcast_to(pattern, np.shape(ref))) > 0
    return float((r * ~vis).sum(axis=1).mean())


def compare_maps(ref_map, variant_map, pattern=None, k: int = 5) -> dict[str, float | None]:
    """All map metrics for one variant; divergences are None where rows are not distributions."""
    ref, w = ref_map.weights, variant_map.weights
    normalized = variant_map.normalized
    return {
        "kl": kl_divergence(ref, w) if normalized else None,
        "js": js_divergence(ref, w) if normalized else None,
        f"top{k}_overlap": topk_overlap(ref, w, k),
        "missed_mass": missed_mass(ref, pattern.weights) if pattern is not None else None,
    }
