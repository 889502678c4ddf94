"""Attention kernels with one interface and two paths: Triton on CUDA, PyTorch on CPU.

Every function takes ``path="auto" | "triton" | "pytorch"``; ``auto`` runs Triton for
CUDA tensors (when triton imports and the input is supported) and PyTorch otherwise.
:func:`active_path` tells a page which one ``auto`` picks. Importing this package never
imports triton or touches the CUDA driver.

Shapes: ``q [B, H, N_q, D]``, ``k, v [B, H, N_k, D]`` → ``out [B, H, N_q, D]`` in q's dtype
and ``lse [B, H, N_q]`` float32, lse_i = log Σ_j exp(s_ij) with s_ij = scale · q_i · k_j
(natural log, scale = 1/√D by default). ``causal`` lets query i see keys j ≤ i + N_k − N_q
(the queries are the last N_q positions). A query row that may see no key gets
``out = 0`` and ``lse = −inf``.

Triton path limits: D ∈ {32, 64, 128}; float16 / bfloat16 / float32; the block-sparse
``block_size`` a power of two in 16…128; the pooled-map ``block`` a multiple of 16.
Both paths are forward-only (inference and visualisation; no autograd through Triton).
"""

from __future__ import annotations

import torch

from engine.kernels import reference
from engine.kernels.dispatch import (
    active_path,
    default_device,
    resolve,
    triton_module,
    unsupported_input,
)
from engine.patterns import (
    bigbird_block_mask,
    kept_fraction,
    longformer_block_mask,
    num_blocks,
    sliding_window_block_mask,
)

__all__ = [
    "active_path",
    "default_device",
    "attention",
    "bigbird_block_mask",
    "block_sparse_attention",
    "decode_step",
    "kept_fraction",
    "longformer_block_mask",
    "num_blocks",
    "pooled_attention_map",
    "sliding_window_block_mask",
]


def _check_qkv(q, k, v=None):
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t is not None and t.dim() != 4:
            raise ValueError(f"{name} must be [B, H, N, D], got shape {tuple(t.shape)}")
    if q.shape[:2] != k.shape[:2] or q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q {tuple(q.shape)} and k {tuple(k.shape)} disagree on B, H or D")
    if v is not None and v.shape[:3] != k.shape[:3]:
        raise ValueError(f"v {tuple(v.shape)} must match k {tuple(k.shape)} on B, H, N")
    if k.shape[2] == 0:
        raise ValueError("attention needs at least one key (N_k = 0)")


def attention(q, k, v, *, causal: bool = False, scale: float | None = None, path: str = "auto"):
    """Exact softmax attention (FlashAttention-2 forward on Triton) → ``(out, lse)``."""
    _check_qkv(q, k, v)
    if resolve(path, q, unsupported_input(q, k, v)) == "triton":
        return triton_module("triton_attention").attention(q, k, v, causal=causal, scale=scale)
    return reference.attention(q, k, v, causal=causal, scale=scale)


def block_sparse_attention(
    q,
    k,
    v,
    block_mask,
    *,
    block_size: int = 64,
    causal: bool = False,
    scale: float | None = None,
    window: int | None = None,
    n_global: int = 0,
    path: str = "auto",
):
    """Attention over the kept blocks of ``block_mask`` only → ``(out, lse)``.

    ``block_mask`` is bool ``[H or 1, ceil(N/block_size), ceil(N/block_size)]``, True where
    query block I computes key block J; empty blocks are skipped entirely, so the time
    follows the number of kept blocks. Within a kept block every pair attends (with
    ``causal``, only keys j ≤ i; with ``window``, only pairs with |i − j| ≤ window or a
    global token i or j < ``n_global``, the meanings of engine.patterns). Rows
    whose blocks are all dropped: ``out = 0``, ``lse = −inf``. q, k and v share one
    length N.
    """
    _check_qkv(q, k, v)
    n = q.shape[2]
    if k.shape[2] != n:
        raise ValueError("block-sparse attention needs N_q == N_k")
    nb = num_blocks(n, block_size)
    heads = q.shape[1]
    expected = [(1, nb, nb), (heads, nb, nb)]
    if tuple(block_mask.shape) not in expected:
        raise ValueError(
            f"block_mask must be [1 or {heads}, {nb}, {nb}] for N={n}, block_size={block_size}; "
            f"got {tuple(block_mask.shape)}"
        )
    why = unsupported_input(q, k, v)
    if why is None and (block_size & (block_size - 1) or not 16 <= block_size <= 128):
        why = f"block_size {block_size} (a power of two in 16..128)"
    kw = dict(block_size=block_size, causal=causal, scale=scale, window=window, n_global=n_global)
    if resolve(path, q, why) == "triton":
        return triton_module("triton_attention").block_sparse_attention(q, k, v, block_mask, **kw)
    return reference.block_sparse_attention(q, k, v, block_mask, **kw)


def pooled_attention_map(
    q,
    k,
    *,
    block: int,
    causal: bool = False,
    scale: float | None = None,
    reduce: str = "mean",
    lse: torch.Tensor | None = None,
    path: str = "auto",
):
    """Block-pooled attention probabilities in O(n·d) memory, float32
    ``[B, H, ceil(N_q/block), ceil(N_k/block)]``; never the n × n matrix.

    With p_ij = exp(s_ij − lse_i) (masked pairs p_ij = 0), query block I and key block J
    (|I|, |J| their sizes, the last ones possibly short):

    - ``reduce="mean"``: P̄_IJ = (1 / (|I|·|J|)) Σ_{i∈I} Σ_{j∈J} p_ij, the average
      probability of a pair in the cell; Σ_J |J| · P̄_IJ = 1 for each query block whose
      rows all see a key (each pooled row is the mean of its rows' distributions over
      key blocks once multiplied by the key block sizes).
    - ``reduce="max"``: P̂_IJ = max_{i∈I, j∈J} p_ij, the strongest single pair in the cell.

    ``lse`` (from :func:`attention`, same inputs) saves the first pass; without it the
    log-sum-exp is computed blockwise too.
    """
    _check_qkv(q, k)
    if reduce not in ("mean", "max"):
        raise ValueError(f"reduce must be 'mean' or 'max', got {reduce!r}")
    if block < 1:
        raise ValueError(f"block must be ≥ 1, got {block}")
    if lse is not None and lse.shape != q.shape[:3]:
        raise ValueError(f"lse must be {tuple(q.shape[:3])}, got {tuple(lse.shape)}")
    why = unsupported_input(q, k)
    if why is None and block % 16:
        why = f"block {block} (a multiple of 16)"
    kwargs = dict(block=block, causal=causal, scale=scale, reduce=reduce, lse=lse)
    if resolve(path, q, why) == "triton":
        return triton_module("triton_pooled").pooled_attention_map(q, k, **kwargs)
    return reference.pooled_attention_map(q, k, **kwargs)


def decode_step(q, k_cache, v_cache, *, scale: float | None = None, path: str = "auto"):
    """One decoding step: the newest query ``[B, H, 1, D]`` against the cache
    ``[B, H, T, D]`` (all T keys visible) → ``(out [B, H, 1, D], lse [B, H, 1])``.

    A growing cache can be a preallocated ``[B, H, T_max, D]`` buffer sliced to
    ``[:, :, :t]``: the Triton kernel reads it through its strides, without a copy.
    """
    _check_qkv(q, k_cache, v_cache)
    if q.shape[2] != 1:
        raise ValueError(f"decode_step takes one query per head, got N_q={q.shape[2]}")
    if resolve(path, q, unsupported_input(q, k_cache, v_cache)) == "triton":
        return triton_module("triton_decode").decode_step(q, k_cache, v_cache, scale=scale)
    return reference.decode_step(q, k_cache, v_cache, scale=scale)
