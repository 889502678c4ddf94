"""Masks and a softmax that gives masked keys exactly zero weight.

Convention everywhere in the engine: a boolean mask is True where attention is
*allowed*. Masks broadcast against scores ``[..., Q, K]``. Kernels, attention layers and
variants all use it, so it sits below all three.
"""

from __future__ import annotations

import torch


def causal_mask(n_q: int, n_k: int | None = None, *, device=None) -> torch.Tensor:
    """``[Q, K]`` lower-triangular mask: query i may see keys j <= i (+ offset).

    When K > Q (decoding against a cache) the queries are the *last* Q positions.
    """
    n_k = n_q if n_k is None else n_k
    offset = n_k - n_q
    i = torch.arange(n_q, device=device)[:, None]
    j = torch.arange(n_k, device=device)[None, :]
    return j <= i + offset


def allowed(mask, causal: bool, n_q: int, n_k: int, device=None):
    """``mask`` ∧ the causal mask (either may be absent): the one place they combine."""
    if not causal:
        return None if mask is None else mask.to(torch.bool)
    c = causal_mask(n_q, n_k, device=device)
    return c if mask is None else (mask.to(torch.bool) & c)


def padding_mask(lengths: torch.Tensor, n_k: int) -> torch.Tensor:
    """``[B, 1, K]`` mask from true lengths: key j is real when j < length."""
    j = torch.arange(n_k, device=lengths.device)
    return (j[None, :] < lengths[:, None])[:, None, :]


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """softmax over the last axis with masked keys at exactly 0.

    A row whose keys are all masked returns all zeros rather than NaN, so padded
    query rows stay harmless downstream.
    """
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.to(torch.bool)
    filled = scores.masked_fill(~mask, float("-inf"))
    # Rows with no allowed key would be softmax(-inf...) = NaN; give them a finite row.
    empty = ~mask.any(dim=-1, keepdim=True)
    filled = filled.masked_fill(empty, 0.0)
    weights = torch.softmax(filled, dim=-1)
    return weights.masked_fill(~mask | empty, 0.0)


def padding_lengths(mask, batch: int, n_q: int, n_k: int, *, causal: bool = False):
    """Key lengths ``[B]`` when ``mask`` (within the causal mask) allows exactly keys
    j < L_b; ``None`` when it allows every key; ``ValueError`` for any other mask.

    This is how a function that takes no mask (a kernel, a variant) can still honour
    right-padding: it runs each length on its own keys.
    """
    if mask is None:
        return None
    m = mask.to(torch.bool)
    if m.dim() >= 2 and bool(m.all()):  # one reduction: the common unpadded case, per call
        return None
    if m.dim() < 2:
        raise ValueError(f"a mask needs [..., Q, K] dimensions, got {tuple(m.shape)}")
    c = causal_mask(n_q, n_k, device=m.device) if causal else None
    seen = m & c if causal else m  # (..., Q | 1, K)
    keys = seen.any(dim=-2)  # keys some query may see
    keys = keys.reshape(keys.shape[0], -1, n_k).any(dim=1) if keys.dim() > 1 else keys[None]
    lengths = keys.sum(-1)  # (B or 1,)
    right = torch.arange(n_k, device=m.device)[None, :] < lengths[:, None]
    expected = right[0] if m.dim() == 2 else right.view(-1, *([1] * (m.dim() - 2)), n_k)
    if causal:
        expected = expected & c
    got, want = torch.broadcast_tensors(seen, expected)
    if not torch.equal(got, want):
        raise ValueError("the mask is not right-padding of the keys")
    if bool((lengths == n_k).all()):
        return None
    return lengths.expand(batch) if lengths.numel() == 1 else lengths


def normalize_rows_(e: torch.Tensor) -> torch.Tensor:
    """e_ij / Σ_j e_ij in place; a row with nothing in it (no allowed key) stays 0."""
    total = e.sum(dim=-1, keepdim=True)
    return e.div_(torch.where(total > 0, total, torch.ones_like(total)))


def softmax_from_lse(q, k, lse, mask=None, *, causal: bool = False, scale: float | None = None):
    """Attention weights p_ij = softmax_j(s_ij), shifted by a kernel's log-sum-exp.

    s_ij = scale · q_i · k_j as the kernels compute it; keys outside ``mask`` (and the
    causal mask) get exactly 0, and so does every key of a row whose lse is −inf.
    lse comes from another kernel's summation order, off by about eps·|s| in float32,
    so exp(s − lse) is divided by its row sums (engine.kernels.reference's module note).
    Returns float32 (float64 for float64 inputs).
    """
    ct = torch.float64 if q.dtype == torch.float64 else torch.float32
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    s = (q.to(ct) * scale) @ k.to(ct).transpose(-2, -1)  # (B, H, Q, K)
    ok = allowed(mask, causal, q.shape[-2], k.shape[-2], device=q.device)
    if ok is not None:
        s = s.masked_fill(~ok, float("-inf"))
    shift = torch.where(torch.isinf(lse), torch.zeros_like(lse), lse).to(ct)
    return normalize_rows_(torch.exp(s - shift[..., None]))
