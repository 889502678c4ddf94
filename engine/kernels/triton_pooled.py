"""Block-pooled attention map in Triton, in O(n·d) memory.

With the row log-sum-exp lse_i known, every probability is local: p_ij = exp(s_ij − lse_i).
One program owns BLOCK_M query rows (inside one pool block I) and streams the keys in
tiles of BLOCK_N (each inside one pool block J); it reduces each tile to one number
(sum or max of p) and, when a pool block J is complete, adds it (or maxes it) into
cell (I, J) of the output with one atomic. The map is ``[nb_q, nb_k]`` per head; the
n × n probabilities only ever exist one tile at a time, in registers.

Without a given lse a first pass over the keys computes it (the FlashAttention running
max and sum, without the values).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from engine.kernels.dispatch import interpreting
from engine.kernels.reference import block_counts, default_scale
from engine.kernels.triton_attention import LOG2E, contiguous_last, precision

LAUNCH = {"num_warps": 4, "num_stages": 3}


@triton.jit
def _masked_scores(
    q,
    K,
    start_n,
    rows,
    offs_n,
    offs_d,
    n_k,
    causal_offset,
    stride_kn,
    qk_scale,
    CAUSAL: tl.constexpr,
    PRECISION: tl.constexpr,
):
    """Base-2 logits of one key tile; keys past n_k or (causal) past i + offset → −inf.

    Addresses are formed per tile from the scalar base: a [HEAD_DIM, BLOCK_N] tile of
    64-bit pointers kept live across the loop would cost a register file's worth.
    """
    cols = start_n + offs_n
    k_ptrs = K + cols[None, :] * stride_kn + offs_d[:, None]  # (HEAD_DIM, BLOCK_N): Kᵀ tile
    k = tl.load(k_ptrs, mask=cols[None, :] < n_k, other=0.0)
    s = tl.dot(q, k, input_precision=PRECISION) * qk_scale  # (BLOCK_M, BLOCK_N)
    allowed = cols[None, :] < n_k
    if CAUSAL:
        allowed = allowed & (cols[None, :] <= rows[:, None] + causal_offset)
    return tl.where(allowed, s, float("-inf"))


@triton.jit
def _pooled_map(
    Q,
    K,
    LSE,
    P,
    stride_qb,
    stride_qh,
    stride_qm,
    stride_kb,
    stride_kh,
    stride_kn,
    stride_lb,
    stride_lh,
    stride_lm,
    stride_pb,
    stride_ph,
    stride_pi,
    H,
    n_q,
    n_k,
    qk_scale,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    HAS_LSE: tl.constexpr,
    MAX: tl.constexpr,
    POOL: tl.constexpr,
    PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b, h = bh // H, bh % H
    rows = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = Q + b * stride_qb + h * stride_qh + rows[:, None] * stride_qm + offs_d[None, :]
    k_base = K + b * stride_kb + h * stride_kh
    q = tl.load(q_ptrs, mask=rows[:, None] < n_q, other=0.0)
    causal_offset = n_k - n_q
    if CAUSAL:
        hi = tl.maximum(tl.minimum((start_m + 1) * BLOCK_M + causal_offset, n_k), 0)
    else:
        hi = n_k

    # 1. lse_i in base 2: given, or from a running max / running sum over the keys.
    if HAS_LSE:
        l_ptrs = LSE + b * stride_lb + h * stride_lh + rows * stride_lm
        lse2 = tl.load(l_ptrs, mask=rows < n_q, other=float("-inf")) * 1.4426950408889634
    else:
        m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK_M], tl.float32)
        for start_n in range(0, hi, BLOCK_N):
            s = _masked_scores(
                q,
                k_base,
                start_n,
                rows,
                offs_n,
                offs_d,
                n_k,
                causal_offset,
                stride_kn,
                qk_scale,
                CAUSAL=CAUSAL,
                PRECISION=PRECISION,
            )
            m_new = tl.maximum(m_i, tl.max(s, 1))
            m_shift = tl.where(m_new == float("-inf"), 0.0, m_new)
            l_i = l_i * tl.math.exp2(m_i - m_shift) + tl.sum(tl.math.exp2(s - m_shift[:, None]), 1)
            m_i = m_new
        lse2 = tl.where(l_i > 0.0, m_i + tl.math.log2(tl.where(l_i > 0.0, l_i, 1.0)), float("-inf"))
    # Rows past n_q or with no allowed key contribute nothing.
    valid = (rows < n_q) & (lse2 > float("-inf"))
    lse_shift = tl.where(valid, lse2, 0.0)

    # 2. p_ij tile by tile, reduced into the cells (I, J) of this row block.
    cell_ptrs = P + b * stride_pb + h * stride_ph + (start_m * BLOCK_M // POOL) * stride_pi
    cell = tl.full([], 0.0, tl.float32)
    for start_n in range(0, hi, BLOCK_N):
        s = _masked_scores(
            q,
            k_base,
            start_n,
            rows,
            offs_n,
            offs_d,
            n_k,
            causal_offset,
            stride_kn,
            qk_scale,
            CAUSAL=CAUSAL,
            PRECISION=PRECISION,
        )
        p = tl.where(valid[:, None], tl.math.exp2(s - lse_shift[:, None]), 0.0)
        if MAX:
            cell = tl.maximum(cell, tl.max(p))
        else:
            cell = cell + tl.sum(p)
        # Flush when this tile closes key block J (or is the last tile this row block sees).
        flush = ((start_n + BLOCK_N) % POOL == 0) | (start_n + BLOCK_N >= hi)
        if MAX:
            tl.atomic_max(cell_ptrs + start_n // POOL, cell, mask=flush)
        else:
            tl.atomic_add(cell_ptrs + start_n // POOL, cell, mask=flush)
        cell = tl.where(flush, 0.0, cell)


def _largest_pow2_divisor(block: int, cap: int) -> int:
    t = cap
    while block % t:
        t //= 2
    return t


def pooled_attention_map(
    q, k, *, block: int, causal: bool = False, scale=None, reduce: str = "mean", lse=None
):
    q, k = contiguous_last(q), contiguous_last(k)
    B, H, n_q, D = q.shape
    n_k = k.shape[2]
    nb_q, nb_k = triton.cdiv(n_q, block), triton.cdiv(n_k, block)
    pooled = torch.zeros(B, H, nb_q, nb_k, dtype=torch.float32, device=q.device)
    on_gpu = q.device.type == "cuda" and not interpreting()
    # Tiles must divide the pool block so that no tile straddles two cells.
    block_m = _largest_pow2_divisor(block, 64 if on_gpu else 32)
    block_n = _largest_pow2_divisor(block, 128 if on_gpu else 32)
    lse_arg = lse.to(device=q.device, dtype=torch.float32) if lse is not None else pooled
    lse_strides = lse_arg.stride() if lse is not None else (0, 0, 0)
    launch = LAUNCH if on_gpu else {}
    grid = (triton.cdiv(n_q, block_m), B * H)
    _pooled_map[grid](
        q,
        k,
        lse_arg,
        pooled,
        *q.stride()[:3],
        *k.stride()[:3],
        *lse_strides,
        *pooled.stride()[:3],
        H,
        n_q,
        n_k,
        default_scale(D, scale) * LOG2E,
        HEAD_DIM=D,
        CAUSAL=causal,
        HAS_LSE=lse is not None,
        MAX=reduce == "max",
        POOL=block,
        PRECISION=precision(q.dtype),
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        **launch,
    )
    if reduce == "mean":
        sizes = block_counts(n_q, block, q.device)[:, None] * block_counts(n_k, block, q.device)
        pooled /= sizes
    return pooled
