"""One decoding step against a KV cache in Triton: split-K ("flash-decoding").

A single query per head leaves a FlashAttention grid with B·H programs, too few to
fill a GPU, while the cache read dominates the time. So the cache of T keys is cut
into S splits: program (s, b·h) runs the online softmax over its slice and writes a
partial output o_s (normalised within the slice) with its lse_s; a second kernel
combines them, o = Σ_s exp(lse_s − lse) o_s with lse = log Σ_s exp(lse_s), which is
exact because softmax over a union of slices is the lse-weighted mix of the slices.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from engine.kernels.dispatch import interpreting
from engine.kernels.reference import default_scale
from engine.kernels.triton_attention import LOG2E, contiguous_last

# Enough programs to fill a Hopper GPU (132 SMs) about twice over.
_TARGET_PROGRAMS = 264
_MAX_SPLITS = 128
BLOCK_N_GPU = 64
LAUNCH = {"num_warps": 4}


@triton.jit
def _decode_partial(
    Q,
    K,
    V,
    O_PART,
    LSE_PART,
    stride_qb,
    stride_qh,
    stride_kb,
    stride_kh,
    stride_kn,
    stride_vb,
    stride_vh,
    stride_vn,
    H,
    T,
    chunk,
    n_splits,
    qk_scale,
    HEAD_DIM: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    split = tl.program_id(0)
    bh = tl.program_id(1)
    b, h = bh // H, bh % H
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    # One query row: a matrix-vector product, done on the CUDA cores (memory-bound anyway).
    q = tl.load(Q + b * stride_qb + h * stride_qh + offs_d).to(tl.float32)  # (HEAD_DIM,)
    k_base = K + b * stride_kb + h * stride_kh
    v_base = V + b * stride_vb + h * stride_vh
    lo = split * chunk
    hi = tl.minimum(lo + chunk, T)

    m_i = tl.full([], float("-inf"), tl.float32)
    l_i = tl.full([], 0.0, tl.float32)
    acc = tl.zeros([HEAD_DIM], tl.float32)
    for start_n in range(lo, hi, BLOCK_N):
        cols = start_n + offs_n
        live = cols < hi
        k = tl.load(
            k_base + cols[:, None] * stride_kn + offs_d[None, :], mask=live[:, None], other=0.0
        )
        s = tl.sum(k.to(tl.float32) * q[None, :], 1) * qk_scale  # (BLOCK_N,) base-2 logits
        s = tl.where(live, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s))  # finite: every tile holds a live key
        p = tl.math.exp2(s - m_new)
        alpha = tl.math.exp2(m_i - m_new)
        v = tl.load(
            v_base + cols[:, None] * stride_vn + offs_d[None, :], mask=live[:, None], other=0.0
        )
        l_i = l_i * alpha + tl.sum(p)
        acc = acc * alpha + tl.sum(p[:, None] * v.to(tl.float32), 0)
        m_i = m_new
    part = bh * n_splits + split
    tl.store(O_PART + part * HEAD_DIM + offs_d, acc / l_i)
    tl.store(LSE_PART + part, m_i + tl.math.log2(l_i))


@triton.jit
def _decode_combine(
    O_PART,
    LSE_PART,
    O,
    LSE,
    stride_ob,
    stride_oh,
    stride_lb,
    stride_lh,
    H,
    n_splits,
    HEAD_DIM: tl.constexpr,
    SPLITS: tl.constexpr,
):
    bh = tl.program_id(0)
    b, h = bh // H, bh % H
    offs_s = tl.arange(0, SPLITS)
    offs_d = tl.arange(0, HEAD_DIM)
    live = offs_s < n_splits
    lse_s = tl.load(LSE_PART + bh * n_splits + offs_s, mask=live, other=float("-inf"))
    m = tl.max(lse_s)
    w = tl.math.exp2(lse_s - m)  # (SPLITS,) weights of the partial outputs
    o_s = tl.load(
        O_PART + (bh * n_splits + offs_s)[:, None] * HEAD_DIM + offs_d[None, :],
        mask=live[:, None],
        other=0.0,
    )
    total = tl.sum(w)
    out = tl.sum(w[:, None] * o_s, 0) / total
    tl.store(O + b * stride_ob + h * stride_oh + offs_d, out.to(O.dtype.element_ty))
    tl.store(LSE + b * stride_lb + h * stride_lh, (m + tl.math.log2(total)) * 0.6931471805599453)


def split_plan(T: int, batch_heads: int, block_n: int) -> tuple[int, int]:
    """(chunk, n_splits): cache slices of ``chunk`` keys (a multiple of ``block_n``)."""
    tiles = triton.cdiv(T, block_n)
    wanted = min(max(1, triton.cdiv(_TARGET_PROGRAMS, batch_heads)), tiles, _MAX_SPLITS)
    chunk = triton.cdiv(tiles, wanted) * block_n
    return chunk, triton.cdiv(T, chunk)


def decode_step(q, k_cache, v_cache, *, scale: float | None = None):
    q, k_cache, v_cache = (contiguous_last(t) for t in (q, k_cache, v_cache))
    B, H, _, D = q.shape
    T = k_cache.shape[2]
    out = torch.empty(B, H, 1, D, dtype=q.dtype, device=q.device)
    lse = torch.empty(B, H, 1, dtype=torch.float32, device=q.device)
    on_gpu = q.device.type == "cuda" and not interpreting()
    block_n = BLOCK_N_GPU if on_gpu else 16
    chunk, n_splits = split_plan(T, B * H, block_n)
    o_part = torch.empty(B * H, n_splits, D, dtype=torch.float32, device=q.device)
    lse_part = torch.empty(B * H, n_splits, dtype=torch.float32, device=q.device)
    launch = LAUNCH if on_gpu else {}
    _decode_partial[(n_splits, B * H)](
        q,
        k_cache,
        v_cache,
        o_part,
        lse_part,
        q.stride(0),
        q.stride(1),
        *k_cache.stride()[:3],
        *v_cache.stride()[:3],
        H,
        T,
        chunk,
        n_splits,
        default_scale(D, scale) * LOG2E,
        HEAD_DIM=D,
        BLOCK_N=block_n,
        **launch,
    )
    _decode_combine[(B * H,)](
        o_part,
        lse_part,
        out,
        lse,
        out.stride(0),
        out.stride(1),
        lse.stride(0),
        lse.stride(1),
        H,
        n_splits,
        HEAD_DIM=D,
        SPLITS=triton.next_power_of_2(n_splits),
        **launch,
    )
    return out, lse
