"""PyTorch implementation of the kernel interface: the CPU path and the tests' reference.

Exact attention runs torch's own fused CPU kernel where it fits (:func:`fused_fits`).
Every other function works on query chunks so that no ``n × n`` matrix is ever held:
a chunk of ``c`` query rows costs ``c × n_k`` scores, with ``c`` chosen so that one
chunk stays under :data:`CHUNK_BYTES` (16 MiB: per-chunk overheads vanish and a chunk
mostly stays in this CPU's 32 MiB L3). Rows are complete inside a chunk, so the
log-sum-exp of a row comes from the same pass as its probabilities.

Shapes: ``q [B, H, N_q, D]``, ``k, v [B, H, N_k, D]``; ``out [B, H, N_q, D]`` in q's
dtype; ``lse [B, H, N_q]`` float32, natural log.

Scores and softmax (Vaswani et al. 2017), written the FlashAttention way
(Dao 2023): s_ij = scale · q_i · k_j, lse_i = log Σ_j exp(s_ij), p_ij = exp(s_ij − lse_i),
o_i = Σ_j p_ij v_j. A row with no allowed key has lse_i = −inf and o_i = 0.

A dense map is rebuilt from a saved lse, which another kernel summed in another order:
in float32 s_ij − lse_i then carries an error of about eps·|s|, so at |s| = 1e4 a row of
exp(s − lse) sums to 0.98 instead of 1 (0.02 at values of 1e4). The map is therefore
divided by its own row sums after the exp: p_ij = e_ij / Σ_j e_ij, the softmax of the
scores to float32 rounding whatever their size, with lse only as the shift that keeps
exp in range.
"""

from __future__ import annotations

import math

import torch

from engine.masks import normalize_rows_
from engine.patterns import longformer_allowed

CHUNK_BYTES = 16 * 2**20


def default_scale(d: int, scale: float | None) -> float:
    return 1.0 / math.sqrt(d) if scale is None else float(scale)


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """float64 stays float64 (tests); everything else is computed in float32."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def chunk_rows(n_rows: int, n_k: int, batch_heads: int) -> int:
    """Query rows per chunk so that one ``[B·H, rows, n_k]`` float32 block fits CHUNK_BYTES."""
    rows = max(1, CHUNK_BYTES // max(1, 4 * n_k * batch_heads))
    return min(rows, max(n_rows, 1))


def _causal_fill(s: torch.Tensor, row0: int, offset: int) -> torch.Tensor:
    """Mask keys j > i + offset in a score chunk whose first query row is ``row0``.

    ``offset = N_k − N_q``: the queries are the last N_q positions (decoding convention
    of :func:`engine.attention.causal_mask`).
    """
    c, n_k = s.shape[-2], s.shape[-1]
    i = torch.arange(row0, row0 + c, device=s.device)[:, None]
    j = torch.arange(n_k, device=s.device)[None, :]
    return s.masked_fill_(j > i + offset, float("-inf"))


# exp overflows float32 past 88.7. When every |s_ij| ≤ 40 (checked with Cauchy–Schwarz,
# |s_ij| ≤ scale·|q_i|·|k_j|), exp(s_ij) ∈ [4e-18, 3e17], so its sums over a billion keys,
# even weighted by values in the thousands, stay finite and normal with no shift at all;
# that saves the row-max pass and the subtraction pass.
SHIFT_FREE_BOUND = 40.0


def shift_free(q: torch.Tensor, k: torch.Tensor, scale: float) -> bool:
    """True when scale · max_i |q_i| · max_j |k_j| ≤ SHIFT_FREE_BOUND."""
    q_max = torch.linalg.vector_norm(q.float(), dim=-1).amax()
    k_max = torch.linalg.vector_norm(k.float(), dim=-1).amax()
    return bool(scale * q_max * k_max <= SHIFT_FREE_BOUND)


def _exp_rows(s: torch.Tensor, shift: torch.Tensor | None) -> torch.Tensor:
    """exp(s − shift) in place; a row whose shift is −inf (no allowed key) becomes all 0."""
    if shift is None:
        return s.exp_()
    safe = torch.where(torch.isinf(shift), torch.zeros_like(shift), shift)
    return s.sub_(safe[..., None]).exp_()


def _scores(q_chunk, k_t, scale, ct):
    """s = (scale · q) kᵀ for one chunk of query rows (the scale folded into the small side)."""
    return (q_chunk.to(ct) * scale) @ k_t  # (B, H, c, N_k)


def _softmax_weighted(s: torch.Tensor, v: torch.Tensor, unshifted: bool):
    """(Σ_j p_ij v_j, lse_i) from scores s (consumed): normalise the [c, D] output, not p.

    An empty row has l_i = 0, so lse_i = m_i + log 0 = −inf and o_i = 0.
    """
    m = None if unshifted else s.amax(dim=-1)  # (..., c)
    e = _exp_rows(s, m)
    l = e.sum(dim=-1)
    o = (e @ v) / torch.where(l > 0, l, torch.ones_like(l))[..., None]
    lse = torch.log(l) if m is None else m + torch.log(l)
    return o, lse


# torch's FlashAttention-2 CPU kernel (what scaled_dot_product_attention runs on a CPU),
# called directly because the public function drops the log-sum-exp it computes anyway.
_FUSED = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)


def fused_fits(q, k, v, causal: bool) -> bool:
    """True when torch's fused CPU kernel computes exactly what :func:`attention` promises.

    It aligns a causal mask top-left (query i sees keys j ≤ i) where this interface aligns
    it bottom-right (j ≤ i + N_k − N_q): the two agree only for N_q = N_k. It is CPU-only,
    wants one head size for q, k and v, and crashes on an empty query set.
    """
    return (
        _FUSED is not None
        and q.device.type == "cpu"
        and q.dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16)
        and q.dtype == k.dtype == v.dtype
        and q.shape[-1] == v.shape[-1]
        and q.shape[-2] > 0
        and not (causal and q.shape[-2] != k.shape[-2])
    )


def attention(q, k, v, *, causal: bool = False, scale: float | None = None):
    """Exact softmax attention, chunked over queries; returns ``(out, lse)``.

    On a CPU this is torch's own fused kernel (one pass, out and lse together) wherever
    it fits; the chunked PyTorch code below covers the rest (bottom-right causal with
    N_q ≠ N_k, other devices).
    """
    if fused_fits(q, k, v, causal):
        # torch's fused CPU kernel reads its inputs as if the last dim were contiguous:
        # a view from einsum/transposes (last-dim stride ≠ 1) gave outputs of 1e35.
        q, k, v = (x.contiguous() for x in (q, k, v))
        out, lse = _FUSED(q, k, v, 0.0, causal, scale=default_scale(q.shape[-1], scale))
        return out, lse.float()
    B, H, n_q, D = q.shape
    n_k = k.shape[-2]
    scale = default_scale(D, scale)
    ct = compute_dtype(q.dtype)
    kt, vt = k.to(ct).transpose(-2, -1), v.to(ct)
    out = torch.empty(B, H, n_q, v.shape[-1], dtype=q.dtype, device=q.device)
    lse = torch.empty(B, H, n_q, dtype=torch.float32, device=q.device)
    unshifted = shift_free(q, k, scale)
    step = chunk_rows(n_q, n_k, B * H)
    for r0 in range(0, n_q, step):
        s = _scores(q[:, :, r0 : r0 + step], kt, scale, ct)
        if causal:
            _causal_fill(s, r0, n_k - n_q)
        o_c, l_c = _softmax_weighted(s, vt, unshifted)
        out[:, :, r0 : r0 + step] = o_c.to(q.dtype)
        lse[:, :, r0 : r0 + step] = l_c.float()
    return out, lse


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
):
    """Attention restricted to the kept ``block_size × block_size`` blocks of ``block_mask``.

    For query block I, only the key blocks kept by some head are gathered, so the work
    is proportional to the kept blocks; the per-head mask then removes the others.
    With ``window``, pairs inside kept blocks also need |i − j| ≤ window or a global
    token (i or j < n_global): Longformer's token pattern.
    """
    B, H, n, D = q.shape
    scale = default_scale(D, scale)
    ct = compute_dtype(q.dtype)
    bm = block_mask.to(device=q.device, dtype=torch.bool)  # (H or 1, nb, nb)
    out = torch.zeros(B, H, n, v.shape[-1], dtype=q.dtype, device=q.device)
    lse = torch.full((B, H, n), float("-inf"), dtype=torch.float32, device=q.device)
    unshifted = shift_free(q, k, scale)
    for qb in range(bm.shape[1]):
        r0, r1 = qb * block_size, min(n, (qb + 1) * block_size)
        kept = torch.nonzero(bm[:, qb].any(0)).flatten()  # key blocks any head keeps
        if kept.numel() == 0:
            continue
        idx = (kept[:, None] * block_size + torch.arange(block_size, device=q.device)).flatten()
        idx = idx[idx < n]  # (m,) key positions
        s = _scores(q[:, :, r0:r1], k[:, :, idx].to(ct).transpose(-2, -1), scale, ct)
        allowed = bm[:, qb][:, idx // block_size][None, :, None, :]  # (1, H|1, 1, m)
        rows = torch.arange(r0, r1, device=q.device)[:, None]
        if causal:
            allowed = allowed & (idx[None, :] <= rows)
        if window is not None:
            allowed = allowed & longformer_allowed(
                rows, idx[None, :], window=window, n_global=n_global
            )
        s.masked_fill_(~allowed, float("-inf"))  # (B, H, c, m)
        o_c, l_c = _softmax_weighted(s, v[:, :, idx].to(ct), unshifted)
        out[:, :, r0:r1] = o_c.to(q.dtype)
        lse[:, :, r0:r1] = l_c.float()
    return out, lse


def _pool_keys(p: torch.Tensor, block: int, reduce: str) -> torch.Tensor:
    """``[..., c, N_k] → [..., c, ceil(N_k / block)]`` by sum or max over each key block."""
    n_k = p.shape[-1]
    full = n_k // block * block
    op = (lambda t: t.sum(-1)) if reduce == "mean" else (lambda t: t.amax(-1))
    parts = [op(p[..., :full].unflatten(-1, (-1, block)))] if full else []
    if full < n_k:
        parts.append(op(p[..., full:][..., None, :]))
    return torch.cat(parts, dim=-1)


def _pooled_rows(s: torch.Tensor, block: int, reduce: str, unshifted: bool) -> torch.Tensor:
    """Pooled p from scores alone: pool exp(s − m_i), then divide each row by l_i.

    Pooling is linear (sum) or monotone (max) per row, so normalising the few pooled
    columns instead of the N_k probabilities saves a full pass; for the mean, l_i is
    the sum of the row's pooled sums.
    """
    e = _exp_rows(s, None if unshifted else s.amax(dim=-1))
    cols = _pool_keys(e, block, reduce)
    l = cols.sum(dim=-1) if reduce == "mean" else e.sum(dim=-1)
    return cols / torch.where(l > 0, l, torch.ones_like(l))[..., None]


def _minus_lse(q_scaled: torch.Tensor, lse: torch.Tensor) -> torch.Tensor:
    """[scale·q_i, −lse_i], so that one matmul with [k_j, 1] gives s_ij − lse_i directly.

    An lse of −inf (a row without keys) becomes 0: all its scores are masked anyway.
    """
    shift = torch.where(torch.isinf(lse), torch.zeros_like(lse), lse).to(q_scaled.dtype)
    return torch.cat([q_scaled, -shift[..., None]], dim=-1)  # (B, H, c, D+1)


def attention_probabilities(q, k, lse, *, causal: bool = False, scale: float | None = None):
    """The dense map p = softmax(s) ``[B, H, N_q, N_k]``, shifted by a saved lse.

    One matmul per chunk of query rows gives s_ij − lse_i directly (see :func:`_minus_lse`);
    the rows are then divided by their sums, because lse came from another summation
    order (see the module note): rows sum to 1 to float32 rounding at any |s|.
    """
    B, H, n_q, D = q.shape
    n_k = k.shape[-2]
    scale = default_scale(D, scale)
    ct = compute_dtype(q.dtype)
    ones = torch.ones(*k.shape[:-1], 1, dtype=ct, device=k.device)
    kt = torch.cat([k.to(ct), ones], dim=-1).transpose(-2, -1)  # (B, H, D+1, N_k)
    p = torch.empty(B, H, n_q, n_k, dtype=ct, device=q.device)
    step = chunk_rows(n_q, n_k, B * H)
    for r0 in range(0, n_q, step):
        q_c = _minus_lse(q[:, :, r0 : r0 + step].to(ct) * scale, lse[:, :, r0 : r0 + step])
        s = torch.matmul(q_c, kt, out=p[:, :, r0 : r0 + step])  # s_ij − lse_i, in the map
        if causal:
            _causal_fill(s, r0, n_k - n_q)
        normalize_rows_(s.exp_())
    return p.to(q.dtype)


def block_counts(n: int, block: int, device=None) -> torch.Tensor:
    """Size of each of the ceil(n / block) blocks (the last one may be short)."""
    starts = torch.arange(0, n, block, device=device)
    return (torch.clamp(starts + block, max=n) - starts).to(torch.float32)


def pooled_attention_map(
    q, k, *, block: int, causal: bool = False, scale=None, reduce: str = "mean", lse=None
):
    """Block-pooled attention probabilities ``[B, H, ceil(N_q/block), ceil(N_k/block)]``.

    mean: P̄_IJ = (1 / (|I|·|J|)) Σ_{i∈I} Σ_{j∈J} p_ij   (masked pairs count as p_ij = 0)
    max:  P̂_IJ = max_{i∈I, j∈J} p_ij
    so Σ_J |J| · P̄_IJ = 1 for every query block whose rows all have a key.
    """
    B, H, n_q, D = q.shape
    n_k = k.shape[-2]
    scale = default_scale(D, scale)
    ct = compute_dtype(q.dtype)
    nb_q, nb_k = -(-n_q // block), -(-n_k // block)
    pooled = torch.zeros(B, H, nb_q, nb_k, dtype=ct, device=q.device)
    if lse is None:
        kt, unshifted = k.to(ct).transpose(-2, -1), shift_free(q, k, scale)
    else:  # s arrives shifted by lse; the pooled rows are still divided by their sums
        ones = torch.ones(*k.shape[:-1], 1, dtype=ct, device=k.device)
        kt = torch.cat([k.to(ct), ones], dim=-1).transpose(-2, -1)  # (B, H, D+1, N_k)
        unshifted = True
    step = chunk_rows(n_q, n_k, B * H)
    for r0 in range(0, n_q, step):
        q_c = q[:, :, r0 : r0 + step].to(ct) * scale
        if lse is not None:
            q_c = _minus_lse(q_c, lse[:, :, r0 : r0 + step])
        s = q_c @ kt  # (B, H, c, N_k): s_ij, or s_ij − lse_i when lse is given
        if causal:
            _causal_fill(s, r0, n_k - n_q)
        cols = _pooled_rows(s, block, reduce, unshifted)  # (B, H, c, nb_k)
        rows = torch.arange(r0, r0 + cols.shape[-2], device=q.device) // block
        index = rows[None, None, :, None].expand_as(cols)
        if reduce == "mean":
            pooled.scatter_add_(2, index, cols)
        else:
            pooled.scatter_reduce_(2, index, cols, reduce="amax")
    if reduce == "mean":
        size_q, size_k = block_counts(n_q, block, q.device), block_counts(n_k, block, q.device)
        pooled /= (size_q[:, None] * size_k[None, :]).to(ct)
    return pooled.float()


def decode_step(q, k_cache, v_cache, *, scale: float | None = None):
    """One new query ``[B, H, 1, D]`` against the whole cache ``[B, H, T, D]``."""
    return attention(q, k_cache, v_cache, causal=False, scale=scale)
