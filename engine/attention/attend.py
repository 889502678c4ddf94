"""The attention function every multi-head layer calls, and the exact default.

One signature (the x-transformers ``attn_fn`` idea): a layer projects its Q, K, V and
hands them to an ``attend`` function, so a caller swaps the core without copying the
layer::

    attend(q, k, v, *, mask=None, causal=False, want_weights=True)
        -> (out [B, H, Q, D], weights [B, H, Q, K] | None)

``q [B, H, Q, D]``, ``k, v [B, H, K, D]``; ``mask`` is bool, True where attention is
allowed, broadcasting against ``[B, H, Q, K]``; ``causal`` lets query i see keys
j ≤ i + K − Q. ``weights`` are what the function can honestly show: exact weights
(masked keys exactly 0) for :func:`exact`, a variant's effective map for a registry
variant (``engine.variants.registry.attend_fn``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from engine import kernels
from engine.attention.scoring import scaled_dot_product_attention
from engine.masks import padding_lengths, softmax_from_lse

Attend = Callable[..., tuple[torch.Tensor, torch.Tensor | None]]


def exact(q, k, v, *, mask=None, causal: bool = False, want_weights: bool = True):
    """softmax(QKᵀ/√d)V through ``engine.kernels`` (Triton on CUDA, PyTorch on CPU).

    The kernels are forward-only and take no mask, so: with autograd on (training), or
    a mask that is not right-padding (plus causal), the masked PyTorch path runs; a
    padded batch runs the kernel once per distinct length, on that length's keys only.
    ``weights`` come from the kernel's log-sum-exp: p_ij = exp(s_ij − lse_i).
    """
    if torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v)):
        return scaled_dot_product_attention(q, k, v, mask, causal=causal)
    n_q, n_k = q.shape[-2], k.shape[-2]
    try:
        lengths = padding_lengths(mask, q.shape[0], n_q, n_k, causal=causal)
    except ValueError:  # an arbitrary mask: only the PyTorch path takes one
        return scaled_dot_product_attention(q, k, v, mask, causal=causal)
    if lengths is not None and causal and n_q != n_k:
        return scaled_dot_product_attention(q, k, v, mask, causal=causal)
    if lengths is None:
        out, lse = kernels.attention(q, k, v, causal=causal)
    else:
        out, lse = _per_length(kernels.attention, q, k, v, lengths, causal)
    if not want_weights:
        return out, None
    return out, softmax_from_lse(q, k, lse, mask, causal=causal)


def _per_length(kernel, q, k, v, lengths, causal):
    """Run ``kernel`` on each group of batch items that share a key length L.

    With causal (Q == K), rows i < L see keys j ≤ i, rows i ≥ L (padding) see all L
    keys: the same rows masked_softmax gives for causal ∧ padding.
    """
    B, H, n_q, _ = q.shape
    out = q.new_zeros(B, H, n_q, v.shape[-1])
    lse = torch.full((B, H, n_q), float("-inf"), device=q.device)
    for length in lengths.unique().tolist():
        if length == 0:
            continue  # no key at all: out 0, lse −inf, like an empty masked_softmax row
        idx = (lengths == length).nonzero().flatten()
        kl, vl = k[idx, :, :length], v[idx, :, :length]
        rows = length if causal else n_q
        o, l = kernel(q[idx, :, :rows], kl, vl, causal=causal)
        out[idx, :, :rows], lse[idx, :, :rows] = o, l
        if rows < n_q:
            o, l = kernel(q[idx, :, rows:], kl, vl, causal=False)
            out[idx, :, rows:], lse[idx, :, rows:] = o, l
    return out, lse
