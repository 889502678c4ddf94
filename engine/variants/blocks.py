"""Query-block attention over gathered key sets: the engine of every sparse pattern here.

Queries are cut into blocks of ``b`` positions; each block ``a`` attends to its own list
of ``kk`` key positions (window, globals, random blocks, a sorted LSH chunk…) with a
token-level ``allowed`` mask. Cost is O(N/b · b · kk · d) = O(N · kk · d), never N².

Shapes: ``q`` blocked ``[B, H, nb, b, D]``; ``k, v`` ``[B, H, N, D]``; ``key_idx``
``[..., nb, kk]`` (broadcast to ``[B, H, nb, kk]``); ``allowed`` broadcast to
``[B, H, nb, b, kk]``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from engine import kernels
from engine.kernels.dispatch import resolve, unsupported_input
from engine.masks import causal_mask, masked_softmax, softmax_from_lse
from engine.variants.base import Output, default_scale

NEG_INF = float("-inf")
GROUP_BYTES = 2 * 2**20  # working set per group of query blocks: well inside L2 + L3


def n_blocks(n: int, b: int) -> int:
    return math.ceil(n / b)


def blocked(x: torch.Tensor, b: int) -> torch.Tensor:
    """``[B, H, N, D]`` → ``[B, H, nb, b, D]``, zero-padding the tail (masked downstream)."""
    B, H, N, D = x.shape
    nb = n_blocks(N, b)
    x = F.pad(x, (0, 0, 0, nb * b - N))
    return x.view(B, H, nb, b, D)


def query_positions(n: int, b: int) -> torch.Tensor:
    """``[nb, b]`` position of every query slot (slots ≥ n are padding)."""
    return torch.arange(n_blocks(n, b) * b).view(-1, b)


def dedupe(key_idx: torch.Tensor) -> torch.Tensor:
    """True where an index already appeared earlier in its row (so a key counts once)."""
    same = key_idx[..., :, None] == key_idx[..., None, :]  # (..., kk, kk)
    return torch.triu(same, diagonal=1).any(dim=-2)


def gather_keys(x: torch.Tensor, key_idx: torch.Tensor) -> torch.Tensor:
    """``x[B, H, N, D]`` at ``key_idx[..., nb, kk]`` → ``[B, H, nb, kk, D]``."""
    B, H, N, D = x.shape
    nb, kk = key_idx.shape[-2:]
    idx = key_idx.clamp(0, N - 1).expand(B, H, nb, kk).reshape(B, H, nb * kk)
    return torch.gather(x, 2, idx[..., None].expand(-1, -1, -1, D)).view(B, H, nb, kk, D)


def gathered_attention(q_blocks, k, v, key_idx, allowed, *, scale: float):
    """softmax over each block's allowed keys: returns ``out``, ``lse``, ``p``.

    ``out [B, H, nb, b, D]``; ``lse [B, H, nb, b]`` (−inf for a row with no allowed
    key, whose output and weights are 0); ``p [B, H, nb, b, kk]``.
    """
    ks = gather_keys(k, key_idx)  # (B, H, nb, kk, D)
    vs = gather_keys(v, key_idx)
    s = (q_blocks @ ks.transpose(-2, -1)) * scale  # (B, H, nb, b, kk)
    s = s.masked_fill(~allowed, NEG_INF)
    lse = torch.logsumexp(s, dim=-1)
    safe = torch.where(torch.isfinite(lse), lse, torch.zeros_like(lse))
    p = torch.exp(s - safe[..., None])
    return p @ vs, lse, p


def scatter_dense(p: torch.Tensor, key_idx: torch.Tensor, n: int) -> torch.Tensor:
    """Blocked weights ``p [B, H, nb, b, kk]`` back to a dense ``[B, H, n, n]`` map."""
    B, H, nb, b, kk = p.shape
    idx = key_idx.clamp(0, n - 1)[..., None, :].expand(B, H, nb, b, kk)
    dense = torch.zeros(B, H, nb, b, n, dtype=p.dtype)
    dense.scatter_add_(-1, idx, p)
    return dense.view(B, H, nb * b, n)[:, :, :n]


def unblock(x: torch.Tensor, n: int) -> torch.Tensor:
    """``[B, H, nb, b, D]`` → ``[B, H, n, D]`` (drops padded query slots)."""
    B, H, nb, b, D = x.shape
    return x.reshape(B, H, nb * b, D)[:, :, :n]


def block_attention(q, k, v, key_idx, allowed, *, scale: float, want_map: bool):
    """Blocked queries against gathered keys, unblocked: ``(out, lse, weights | None)``.

    Blocks are processed in groups of about GROUP_BYTES of scores and gathered keys, so
    the working set stays the same size at any n and the time stays linear instead of
    slowing down once it outgrows the CPU caches.
    """
    B, H, n, D = q.shape
    b, kk = allowed.shape[-2], key_idx.shape[-1]
    qb = blocked(q, b)
    per_block = 4 * B * H * kk * (3 * b + 2 * D)  # float32 scores ×3 and gathered k, v
    g = max(1, GROUP_BYTES // per_block)
    outs, lses, ps = [], [], []
    for s in range(0, qb.shape[2], g):
        o, lse, p = gathered_attention(
            qb[:, :, s : s + g],
            k,
            v,
            key_idx[..., s : s + g, :],
            allowed[..., s : s + g, :, :],
            scale=scale,
        )
        outs.append(o)
        lses.append(lse)
        if want_map:  # otherwise each group's weights are freed with the group
            ps.append(p)
    out, lse = torch.cat(outs, dim=2), torch.cat(lses, dim=2)
    weights = scatter_dense(torch.cat(ps, dim=2), key_idx, n) if want_map else None
    return unblock(out, n), lse.flatten(-2)[..., :n], weights


def blocked_memory(n: int, d: int, b: int, kk: int, n_global: int = 0) -> float:
    """Peak bytes of ``sparse_output`` per (batch, head): one group's working set, the
    token-level mask (bool) and key indices (int64), blocked q and the outputs, and the
    dense rows of the global tokens."""
    masks = n * kk + n / b * kk * 8
    return 1.5 * GROUP_BYTES + masks + 2.0 * 4 * n * d + 2.0 * 4 * n_global * n


def rows_attention(q_rows, k, v, row_pos, *, causal: bool, scale: float):
    """Dense attention for a few query rows (global tokens): ``(out, p)``, O(rows · N)."""
    s = (q_rows @ k.transpose(-2, -1)) * scale  # (B, H, g, N)
    # Global row i is query position i: causally it sees keys j ≤ i.
    p = masked_softmax(s, causal_mask(k.shape[-2], k.shape[-2])[row_pos] if causal else None)
    return p @ v, p


def sparse_output(q, k, v, key_idx, allowed, *, causal: bool, want_map: bool, n_global: int = 0):
    """A sparse pattern's ``Output``: blocked attention, then ``n_global`` dense rows.

    The first ``n_global`` queries are global tokens that see every (causally allowed)
    key; their rows replace the blocked result.
    """
    B, H, n, D = q.shape
    scale = default_scale(D)
    allowed = allowed.expand(B, H, *allowed.shape[-3:])
    out, _, weights = block_attention(q, k, v, key_idx, allowed, scale=scale, want_map=want_map)
    pattern = scatter_dense(allowed.to(q.dtype), key_idx, n) > 0 if want_map else None
    g = min(n_global, n)
    if g:
        pos = torch.arange(g)
        out_g, p_g = rows_attention(q[:, :, :g], k, v, pos, causal=causal, scale=scale)
        out = torch.cat([out_g, out[:, :, g:]], dim=2)
        if want_map:
            weights[:, :, :g] = p_g
            pattern[:, :, :g] = p_g > 0
    return Output(out, weights, pattern)


def band_allowed(q_pos, key_idx, n: int, *, causal: bool) -> torch.Tensor:
    """``[nb, b, kk]``: key inside the sequence and, when causal, not in the future."""
    j = key_idx[..., None, :]  # (..., nb, 1, kk)
    i = q_pos[:, :, None]  # (nb, b, 1)
    ok = (j >= 0) & (j < n) & (i >= 0)  # `i >= 0` only broadcasts to (nb, b, kk)
    if causal:
        ok = ok & (j <= i)
    return ok


def on_triton(q, k, v, block: int) -> bool:
    """True when ``auto`` runs the Triton block-sparse kernel here: CUDA tensors it takes
    and ``block`` a power of two in 16…128."""
    why = unsupported_input(q, k, v)
    if why is None and (block & (block - 1) or not 16 <= block <= 128):
        why = f"block {block}"
    return resolve("auto", q, why) == "triton"


def kernel_block_sparse(q, k, v, block_mask, block: int, *, causal, want_map, pattern, **kw):
    """A pattern's ``Output`` from ``engine.kernels.block_sparse_attention`` (see on_triton).

    ``pattern`` (a callable giving the ``[n, n]`` or ``[H, n, n]`` token pattern the
    kernel computes) is built only for the map: p_ij = exp(s_ij − lse_i).
    """
    out, lse = kernels.block_sparse_attention(
        q, k, v, block_mask.to(q.device), block_size=block, causal=causal, path="triton", **kw
    )
    note = "kernel path: triton block-sparse."
    if not want_map:
        return Output(out, notes=[note], path="triton")
    allowed = pattern().to(q.device)
    weights = softmax_from_lse(q, k, lse, allowed, causal=causal).to(q.dtype)
    if causal:
        allowed = allowed & causal_mask(q.shape[-2], q.shape[-2], device=q.device)
    return Output(out, weights, allowed, notes=[note], path="triton")
