"""Fused attention forward in Triton: dense (FlashAttention-2) and block-sparse.

FlashAttention-2 (Dao 2023), Algorithm 1: one program owns a tile of BLOCK_M query
rows and streams the keys and values in tiles of BLOCK_N, keeping per row the running
max m_i, the running sum l_i = Σ_j exp(s_ij − m_i) and the unnormalised output
acc_i = Σ_j exp(s_ij − m_i) v_j; a new tile rescales them by exp(m_old − m_new).
The output is acc_i / l_i and lse_i = m_i + log l_i, so the n × n matrix never exists.
Scores are kept in base 2 (s · log2 e) so that the exponentials are ``exp2``.

The block-sparse kernel is the same loop over a list of kept key blocks per query
block (a CSR layout built on the device), so dropped blocks cost nothing.

Tiles are read and written through tensor descriptors: on Hopper they become TMA
copies, which frees the registers that pointer tiles would hold (with pointers the
d = 128 kernel spilled; with descriptors no config does — ``scripts/triton_compile_check.py``).
"""

from __future__ import annotations

import functools
import math

import torch
import triton
import triton.language as tl

from engine.kernels.dispatch import interpreting
from engine.kernels.reference import default_scale
from engine.masks import causal_mask

LOG2E = 1.4426950408889634


@triton.jit
def _descriptor(
    T, b_stride, h_stride, n_stride, B, H, n, HEAD_DIM: tl.constexpr, ROWS: tl.constexpr
):
    """A [B, H, n, HEAD_DIM] tensor descriptor read in [1, 1, ROWS, HEAD_DIM] tiles.

    On Hopper the loads become TMA copies (no address registers, zero fill past n, stores
    clipped at n); on older GPUs and in the interpreter Triton lowers them to pointers.
    """
    return tl.make_tensor_descriptor(
        T,
        shape=[B, H, n, HEAD_DIM],
        strides=[b_stride, h_stride, n_stride, 1],
        block_shape=[1, 1, ROWS, HEAD_DIM],
    )


@triton.jit
def _tile_step(
    acc,
    m_i,
    l_i,
    q,
    k_desc,
    v_desc,
    b,
    h,
    start_n,
    rows,
    n_k,
    causal_offset,
    qk_scale,
    window,
    n_global,
    MASKED: tl.constexpr,
    CAUSAL: tl.constexpr,
    WINDOWED: tl.constexpr,
    PRECISION: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """One FlashAttention-2 update with the key/value tile that starts at ``start_n``.

    ``MASKED`` tiles may hold keys past n_k (read as zeros) or, with ``CAUSAL``, keys
    j > i + offset, or with ``WINDOWED`` pairs outside |i − j| ≤ window that no global
    token (i or j < n_global) joins; tiles inside the allowed region skip the masking.
    """
    k = k_desc.load([b, h, start_n, 0]).reshape(BLOCK_N, HEAD_DIM)
    s = tl.dot(q, k.T, input_precision=PRECISION) * qk_scale  # (BLOCK_M, BLOCK_N), base 2
    if MASKED:
        cols = start_n + tl.arange(0, BLOCK_N)
        allowed = cols[None, :] < n_k
        if CAUSAL:
            allowed = allowed & (cols[None, :] <= rows[:, None] + causal_offset)
        if WINDOWED:
            near = tl.abs(cols[None, :] - rows[:, None]) <= window
            allowed = allowed & (near | (cols[None, :] < n_global) | (rows[:, None] < n_global))
        s = tl.where(allowed, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    # A row that has seen no allowed key yet keeps m = −inf; shift it by 0, not by −inf.
    m_shift = tl.where(m_new == float("-inf"), 0.0, m_new)
    p = tl.math.exp2(s - m_shift[:, None])
    alpha = tl.math.exp2(m_i - m_shift)
    l_i = l_i * alpha + tl.sum(p, 1)
    v = v_desc.load([b, h, start_n, 0]).reshape(BLOCK_N, HEAD_DIM)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], input_precision=PRECISION)
    return acc, m_new, l_i


@triton.jit
def _store(
    acc,
    m_i,
    l_i,
    o_desc,
    LSE,
    b,
    h,
    start_row,
    n_q,
    stride_lm,
    BLOCK_M: tl.constexpr,
    HEAD_DIM: tl.constexpr,
):
    """out_i = acc_i / l_i and lse_i = (m_i + log2 l_i) · ln 2; empty rows → 0 and −inf."""
    empty = l_i == 0.0
    l_safe = tl.where(empty, 1.0, l_i)
    out = (acc / l_safe[:, None]).to(o_desc.dtype)
    lse = tl.where(empty, float("-inf"), (m_i + tl.math.log2(l_safe)) * 0.6931471805599453)
    o_desc.store([b, h, start_row, 0], out.reshape(1, 1, BLOCK_M, HEAD_DIM))  # clipped at n_q
    rows = start_row + tl.arange(0, BLOCK_M)
    tl.store(LSE + rows * stride_lm, lse, mask=rows < n_q)


@triton.jit
def _attn_fwd(
    Q,
    K,
    V,
    O,
    LSE,
    stride_qb,
    stride_qh,
    stride_qm,
    stride_kb,
    stride_kh,
    stride_kn,
    stride_vb,
    stride_vh,
    stride_vn,
    stride_ob,
    stride_oh,
    stride_om,
    stride_lb,
    stride_lh,
    stride_lm,
    B,
    H,
    n_q,
    n_k,
    qk_scale,
    N_BUCKET,  # autotune key only: log2 of the padded length
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    start_m = tl.program_id(0)
    if CAUSAL:
        # Causal tiles near the end see the most keys: launch them first so that the
        # short ones fill the gaps at the end of the grid instead of the long ones.
        start_m = tl.num_programs(0) - 1 - start_m
    bh = tl.program_id(1)
    b, h = bh // H, bh % H
    q_desc = _descriptor(Q, stride_qb, stride_qh, stride_qm, B, H, n_q, HEAD_DIM, BLOCK_M)
    k_desc = _descriptor(K, stride_kb, stride_kh, stride_kn, B, H, n_k, HEAD_DIM, BLOCK_N)
    v_desc = _descriptor(V, stride_vb, stride_vh, stride_vn, B, H, n_k, HEAD_DIM, BLOCK_N)
    o_desc = _descriptor(O, stride_ob, stride_oh, stride_om, B, H, n_q, HEAD_DIM, BLOCK_M)
    rows = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    q = q_desc.load([b, h, start_m * BLOCK_M, 0]).reshape(BLOCK_M, HEAD_DIM)  # rows ≥ n_q: 0

    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)

    causal_offset = n_k - n_q  # the queries are the last n_q positions
    if CAUSAL:
        # Keys every row of this tile may see (unmasked tiles), then the diagonal tiles.
        first_limit = start_m * BLOCK_M + causal_offset + 1
        full_end = tl.maximum(tl.minimum(first_limit, n_k), 0) // BLOCK_N * BLOCK_N
        hi = tl.maximum(tl.minimum((start_m + 1) * BLOCK_M + causal_offset, n_k), 0)
    else:
        full_end = n_k // BLOCK_N * BLOCK_N
        hi = n_k
    for start_n in range(0, full_end, BLOCK_N):
        acc, m_i, l_i = _tile_step(
            acc,
            m_i,
            l_i,
            q,
            k_desc,
            v_desc,
            b,
            h,
            start_n,
            rows,
            n_k,
            causal_offset,
            qk_scale,
            0,
            0,
            MASKED=False,
            CAUSAL=CAUSAL,
            WINDOWED=False,
            PRECISION=PRECISION,
            HEAD_DIM=HEAD_DIM,
            BLOCK_N=BLOCK_N,
        )
    for start_n in range(full_end, hi, BLOCK_N):
        acc, m_i, l_i = _tile_step(
            acc,
            m_i,
            l_i,
            q,
            k_desc,
            v_desc,
            b,
            h,
            start_n,
            rows,
            n_k,
            causal_offset,
            qk_scale,
            0,
            0,
            MASKED=True,
            CAUSAL=CAUSAL,
            WINDOWED=False,
            PRECISION=PRECISION,
            HEAD_DIM=HEAD_DIM,
            BLOCK_N=BLOCK_N,
        )

    l_base = LSE + b * stride_lb + h * stride_lh
    _store(
        acc, m_i, l_i, o_desc, l_base, b, h, start_m * BLOCK_M, n_q, stride_lm, BLOCK_M, HEAD_DIM
    )


@triton.jit
def _block_sparse_fwd(
    Q,
    K,
    V,
    O,
    LSE,
    KV_INDEX,
    KV_COUNT,
    stride_qb,
    stride_qh,
    stride_qm,
    stride_kb,
    stride_kh,
    stride_kn,
    stride_vb,
    stride_vh,
    stride_vn,
    stride_ob,
    stride_oh,
    stride_om,
    stride_lb,
    stride_lh,
    stride_lm,
    stride_ih,
    stride_im,
    stride_ch,
    B,
    H,
    n,
    qk_scale,
    window,
    n_global,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    WINDOWED: tl.constexpr,
    PRECISION: tl.constexpr,
    BLOCK: tl.constexpr,
):
    """Query block ``program_id(0)`` visits only the key blocks listed in its layout row."""
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b, h = bh // H, bh % H
    q_desc = _descriptor(Q, stride_qb, stride_qh, stride_qm, B, H, n, HEAD_DIM, BLOCK)
    k_desc = _descriptor(K, stride_kb, stride_kh, stride_kn, B, H, n, HEAD_DIM, BLOCK)
    v_desc = _descriptor(V, stride_vb, stride_vh, stride_vn, B, H, n, HEAD_DIM, BLOCK)
    o_desc = _descriptor(O, stride_ob, stride_oh, stride_om, B, H, n, HEAD_DIM, BLOCK)
    rows = start_m * BLOCK + tl.arange(0, BLOCK)
    q = q_desc.load([b, h, start_m * BLOCK, 0]).reshape(BLOCK, HEAD_DIM)

    m_i = tl.full([BLOCK], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK], tl.float32)
    acc = tl.zeros([BLOCK, HEAD_DIM], tl.float32)

    # Layout rows are per head, or one row shared by all heads (stride 0).
    index_row = KV_INDEX + h * stride_ih + start_m * stride_im
    count = tl.load(KV_COUNT + h * stride_ch + start_m)
    for t in range(0, count):
        start_n = tl.load(index_row + t) * BLOCK
        # Tail and diagonal blocks need the mask; always applying it keeps one code path
        # (the where is cheap next to the two tile matmuls).
        acc, m_i, l_i = _tile_step(
            acc,
            m_i,
            l_i,
            q,
            k_desc,
            v_desc,
            b,
            h,
            start_n,
            rows,
            n,
            0,
            qk_scale,
            window,
            n_global,
            MASKED=True,
            CAUSAL=CAUSAL,
            WINDOWED=WINDOWED,
            PRECISION=PRECISION,
            HEAD_DIM=HEAD_DIM,
            BLOCK_N=BLOCK,
        )

    l_base = LSE + b * stride_lb + h * stride_lh
    _store(acc, m_i, l_i, o_desc, l_base, b, h, start_m * BLOCK, n, stride_lm, BLOCK, HEAD_DIM)


def hopper_configs():
    """Tile shapes for Hopper-class GPUs (H100/H200), (BLOCK_M, BLOCK_N, warps, stages).

    128-row query tiles on two warpgroups (8 warps) keep the tensor cores busy at
    d = 128; 64-row tiles help short or causal inputs. Compiled for sm_90 with TMA
    (``python scripts/triton_compile_check.py``) none of them spills at d = 64 or 128,
    and all fit the 227 KiB of shared memory (128 × 128 × 3 stages at d = 128 just does).
    """
    shapes = [
        (128, 128, 8, 3),
        (128, 128, 8, 2),
        (128, 64, 8, 3),
        (128, 64, 8, 4),
        (64, 64, 4, 3),
        (64, 128, 4, 3),
    ]
    return [
        triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s)
        for bm, bn, w, s in shapes
    ]


@functools.cache
def _tuned_attn_fwd():
    """The autotuned kernel, built on first CUDA use: autotuning needs a live driver."""
    return triton.autotune(configs=hopper_configs(), key=["N_BUCKET", "HEAD_DIM", "CAUSAL"])(
        _attn_fwd
    )


# (BLOCK_M, BLOCK_N) in the interpreter, which runs one program at a time in Python: few,
# mid-sized tiles are fastest. Tests change it to cover unequal tiles, as on the GPU.
INTERPRETER_TILES = (32, 32)


def precision(dtype: torch.dtype) -> str:
    """float32 inputs get full-precision products (no TF32): this path promises exact attention."""
    return "ieee" if dtype == torch.float32 else "tf32"


def contiguous_last(t: torch.Tensor) -> torch.Tensor:
    """The kernels address the head dim with stride 1; everything else goes by strides."""
    return t if t.stride(-1) == 1 else t.contiguous()


def descriptor_ready(t: torch.Tensor) -> torch.Tensor:
    """TMA reads need the head dim contiguous and the other strides and the base address
    16-byte aligned; anything else is copied once into a fresh contiguous tensor."""
    size = t.element_size()
    aligned = all(st * size % 16 == 0 for st in t.stride()[:-1]) and t.data_ptr() % 16 == 0
    return t if t.stride(-1) == 1 and aligned else t.contiguous()


def _scratch(size: int, alignment: int, stream):
    """Global memory where each program builds its tensor descriptors."""
    return torch.empty(size, dtype=torch.int8, device="cuda")


def _prepare_gpu():
    """Device-side tensor descriptors need an allocator. It lives in a context variable,
    and Streamlit runs each script in its own thread, so set it on every launch."""
    triton.set_allocator(_scratch)


def _outputs(q, v):
    B, H, n_q, _ = q.shape
    out = torch.empty(B, H, n_q, v.shape[-1], dtype=q.dtype, device=q.device)
    lse = torch.empty(B, H, n_q, dtype=torch.float32, device=q.device)
    return out, lse


def attention(q, k, v, *, causal: bool = False, scale: float | None = None):
    q, k, v = (descriptor_ready(t) for t in (q, k, v))
    B, H, n_q, D = q.shape
    n_k = k.shape[2]
    out, lse = _outputs(q, v)
    qk_scale = default_scale(D, scale) * LOG2E
    args = (
        q,
        k,
        v,
        out,
        lse,
        *q.stride()[:3],
        *k.stride()[:3],
        *v.stride()[:3],
        *out.stride()[:3],
        *lse.stride(),
        B,
        H,
        n_q,
        n_k,
        qk_scale,
        math.ceil(math.log2(max(n_q, n_k, 2))),
    )
    prec = precision(q.dtype)
    if q.device.type != "cuda" or interpreting():
        block_m, block_n = INTERPRETER_TILES
        grid = (triton.cdiv(n_q, block_m), B * H)
        _attn_fwd[grid](
            *args, HEAD_DIM=D, CAUSAL=causal, PRECISION=prec, BLOCK_M=block_m, BLOCK_N=block_n
        )
    else:

        def grid(meta):
            return (triton.cdiv(n_q, meta["BLOCK_M"]), B * H)

        _prepare_gpu()
        _tuned_attn_fwd()[grid](*args, HEAD_DIM=D, CAUSAL=causal, PRECISION=prec)
    return out, lse


def sparse_launch(block: int, head_dim: int) -> dict:
    """Warps and pipeline depth for a block-sparse tile: 8 warps once the tile is big."""
    return {"num_warps": 8 if block * head_dim >= 128 * 64 else 4, "num_stages": 3}


def sparse_layout(block_mask: torch.Tensor, *, causal: bool, device):
    """CSR-style layout of a block mask: ``index [H|1, nb, nb]`` lists the kept key blocks
    of each query block first, in order, and ``count [H|1, nb]`` says how many there are.

    Built on the tensors' device with a fixed width nb, so no device-to-host sync is
    needed. With ``causal``, blocks above the diagonal (J > I) hold no allowed pair and
    are dropped.
    """
    bm = block_mask.to(device=device, dtype=torch.bool)
    if causal:
        bm = bm & causal_mask(bm.shape[-2], bm.shape[-1], device=device)  # key block J ≤ I
    count = bm.sum(-1, dtype=torch.int32)  # (H|1, nb)
    # A stable sort of "dropped" flags puts the kept block ids first, in increasing order.
    index = torch.sort((~bm).to(torch.uint8), dim=-1, stable=True).indices
    return index.to(torch.int32).contiguous(), count.contiguous()


def block_sparse_attention(
    q,
    k,
    v,
    block_mask,
    *,
    block_size: int,
    causal: bool = False,
    scale: float | None = None,
    window: int | None = None,
    n_global: int = 0,
):
    q, k, v = (descriptor_ready(t) for t in (q, k, v))
    B, H, n, D = q.shape
    out, lse = _outputs(q, v)
    index, count = sparse_layout(block_mask, causal=causal, device=q.device)
    shared = index.shape[0] == 1  # one layout for all heads: stride 0 over h
    stride_ih = 0 if shared else index.stride(0)
    stride_ch = 0 if shared else count.stride(0)
    grid = (triton.cdiv(n, block_size), B * H)
    on_gpu = q.device.type == "cuda" and not interpreting()
    launch = sparse_launch(block_size, D) if on_gpu else {}
    if on_gpu:
        _prepare_gpu()
    _block_sparse_fwd[grid](
        q,
        k,
        v,
        out,
        lse,
        index,
        count,
        *q.stride()[:3],
        *k.stride()[:3],
        *v.stride()[:3],
        *out.stride()[:3],
        *lse.stride(),
        stride_ih,
        index.stride(1),
        stride_ch,
        B,
        H,
        n,
        default_scale(D, scale) * LOG2E,
        window or 0,
        n_global,
        HEAD_DIM=D,
        CAUSAL=causal,
        WINDOWED=window is not None,
        PRECISION=precision(q.dtype),
        BLOCK=block_size,
        **launch,
    )
    return out, lse
