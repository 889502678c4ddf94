"""Reformer (Kitaev et al. 2020): LSH attention over sorted, chunked buckets.

Angular LSH: h(x) = argmax([xR ; −xR]) with a random rotation R ∈ ℝ^{d×b/2}, applied to
the unit-normalised queries and keys (which are separate here, not the paper's shared
QK). Queries and keys are merged into one sequence sorted by (bucket, position) —
O(n log n) — and cut into chunks of c items; a query attends to the keys of its own and
the neighbouring chunks, so similar q and k meet. Each of r rounds uses a new R; the
rounds are combined with the paper's correction: a pair met in N_ij rounds has log N_ij
subtracted from its score, so the result is softmax over the union of keys met.

All r rounds run as one batch. Within a round the sorted queries are cut into blocks of
``QUERY_BLOCK``; a block's keys (its chunks and their neighbours) are one contiguous run
of the sorted keys, gathered once for the whole block, so only query–key pairs are
scored. Time O(r·n log n + r·n·c·d); blocks go in groups of bounded size, so memory is
O(r·n·d) for the sorted items and per-round outputs. The map is exact: the per-bucket
softmax weights, reassembled (out = map · V holds exactly).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from engine.kernels.reference import shift_free
from engine.text import InputError
from engine.variants.base import FLOAT_BYTES, Output, Param, Variant, default_scale, generator

NEG_INF = float("-inf")
GROUP_BYTES = 4 * 2**20  # working set per group of query blocks: stays in L2 + L3
# Chunk ids fit int16 (n ≤ 32768 and c ≥ 4: ids < 16384); padding slots get ids so far
# from every real one, and from each other even after int16 wrap-around, that they never
# count as neighbours.
PAD_QUERY, PAD_KEY = -12000, 29000


def query_block(c: int) -> int:
    """Sorted queries per block (about c/4): a small block's run of keys holds few keys
    that none of its queries may meet, a large one makes bigger matrix products."""
    return min(64, max(4, c // 4))


def lsh_buckets(x: torch.Tensor, R: torch.Tensor) -> torch.Tensor:
    """``x [B, H, n, D]``, ``R [r, D, b/2]`` → bucket ids ``[B, H, r, n]``."""
    rot = torch.einsum("bhnd,rdk->bhrkn", F.normalize(x, dim=-1), R)  # n innermost: the
    # reductions below then run across n in SIMD lanes instead of along a short row.
    # argmax of [xR ; −xR] without building it: the largest entry or the most negative one.
    hi, i_hi = rot.max(dim=-2)
    lo, i_lo = rot.min(dim=-2)
    return torch.where(hi >= -lo, i_hi, i_lo + R.shape[-1])


def sorted_chunks(q, k, R, c: int):
    """Hash, sort the 2n merged items by (bucket, position, query first), cut chunks of c.

    Item t < n is query t, item t ≥ n is key t − n. Returns ``chunk_of [B, H, r, 2n]``
    (each item's chunk) and the queries and the keys in sorted order, ``[B, H, r, n]``
    each (positions).
    """
    n = q.shape[-2]
    bucket = torch.cat([lsh_buckets(q, R), lsh_buckets(k, R)], dim=-1)  # (B, H, r, 2n)
    pos = torch.arange(n).repeat(2)
    order = (bucket * (4 * n) + 2 * pos + (torch.arange(2 * n) >= n)).argsort(dim=-1)
    rank = torch.empty_like(order).scatter_(-1, order, torch.arange(2 * n).expand_as(order))
    shape = (*order.shape[:-1], n)
    q_sorted = order[order < n].view(shape)  # every row holds n queries and n keys
    k_sorted = order[order >= n].view(shape) - n
    return rank // c, q_sorted, k_sorted


def key_runs(chunk_of, q_sorted, k_sorted, c: int, bq: int):
    """For each block of ``bq`` sorted queries, the run of sorted keys it may meet.

    Keys keep their merged order among themselves, so the keys of chunks a−1 … a+1 are
    one run of k_sorted: those of merged rank in [(a−1)·c, (a+2)·c). Returns the run
    starts ``lo [B, H, r, nb]``, lengths ``width`` and the padded query positions
    ``[B, H, r, nb, bq]`` (n marks a padding slot).
    """
    n = q_sorted.shape[-1]
    nb = -(-n // bq)
    q_blocks = F.pad(q_sorted, (0, nb * bq - n), value=n).unflatten(-1, (nb, bq))
    cq, ck = chunk_of[..., :n], chunk_of[..., n:]
    first = cq.gather(-1, q_blocks[..., 0])
    last = cq.gather(-1, q_sorted[..., torch.clamp(torch.arange(nb) * bq + bq - 1, max=n - 1)])
    key_rank = (ck.gather(-1, k_sorted) * c).contiguous()  # chunk start of each sorted key
    lo = torch.searchsorted(key_rank, ((first - 1) * c).contiguous())
    hi = torch.searchsorted(key_rank, ((last + 2) * c).contiguous())
    return lo, hi - lo, q_blocks


def take(table: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """``table[idx]`` for a 1-D or row table: index_select, several times faster than
    advanced indexing on a CPU."""
    return table.index_select(0, idx.flatten()).view(*idx.shape, *table.shape[1:])


def attend_group(tables, blocks, *, n: int, r: int, causal: bool, unshifted: bool, want_p: bool):
    """Softmax of a group of query blocks over their runs of keys (any heads and rounds).

    ``blocks`` = (round t, table row bh = b·H + h, query positions ``[g, bq]``, run start
    and length ``[g]``). A pair counts in round t when its chunks there are neighbours;
    its score gets −log N_ij, N_ij the number of rounds in which the pair met. Returns
    o ``[g, bq, D]`` (normalised), lse ``[g, bq]``, p ``[g, bq, W]`` (with ``want_p``) and
    the key positions.
    """
    qf, kf, vf, k_sorted, ids = tables
    t, bh, qp, lo, width = blocks
    g, bq = qp.shape
    W = int(width.max())
    slot = lo[:, None] + torch.arange(W)  # (g, W) into the sorted keys
    key_ok = slot < (lo + width)[:, None]
    kp = take(k_sorted, (bh * r + t)[:, None] * n + slot.clamp(max=n - 1))  # (g, W) positions
    q_ok = qp < n
    qp = qp.clamp(max=n - 1)
    iq = torch.where(q_ok, bh[:, None] * (2 * n) + qp, ids.shape[1] - 2)
    ik = torch.where(key_ok, bh[:, None] * (2 * n) + n + kp, ids.shape[1] - 1)
    cq, ck = (ids.index_select(1, i.flatten()).view(-1, *i.shape) for i in (iq, ik))
    met = (ck[:, :, None, :] - cq[:, :, :, None]).abs_() <= 1  # (r', g, bq, W)
    # Met in the block's own round (padding never is).
    allowed = met.view(-1, bq, W).index_select(0, t * g + torch.arange(g))
    if causal:
        allowed &= kp[:, None, :] <= qp[:, :, None]
    q_rows, k_rows = bh[:, None] * n + qp, bh[:, None] * n + kp
    s = take(qf, q_rows) @ take(kf, k_rows).transpose(-2, -1)  # (g, bq, W)
    if unshifted and r > 1:
        # exp(s_ij − log N_ij) = exp(s_ij) / N_ij, with N_ij = ∞ for pairs not allowed:
        # one division instead of a log, a subtraction and a fill.
        m = None
        e = s.exp_().div_(met.sum(dim=0, dtype=s.dtype).masked_fill_(~allowed, math.inf))
    elif unshifted:
        m = None
        e = s.masked_fill_(~allowed, NEG_INF).exp_()
    else:
        if r > 1:
            s -= met.sum(dim=0, dtype=s.dtype).log_()  # pairs not allowed are masked next
        s.masked_fill_(~allowed, NEG_INF)
        m = s.amax(dim=-1, keepdim=True)
        m = torch.where(torch.isfinite(m), m, 0.0)
        e = s.sub_(m).exp_()
    l = e.sum(dim=-1, keepdim=True)
    l_safe = torch.where(l > 0, l, 1.0)
    o = (e @ take(vf, k_rows)) / l_safe
    lse = l.log() if m is None else m + l.log()
    return o, lse[..., 0], e.div_(l_safe) if want_p else None, kp


class Reformer(Variant):
    name = "reformer"
    title = "Reformer (LSH)"
    paper = "Kitaev et al. 2020, Reformer: The Efficient Transformer"
    time_complexity = "O(r·n log n + r·n·c·d)"
    memory_complexity = "O(r·n·d)"
    params = (
        Param("buckets", "buckets b", 8, 2, 256, help="even; more buckets = finer hashing"),
        Param("rounds", "hash rounds r", 2, 1, 16, help="more rounds = more keys met"),
        Param("chunk", "chunk c (items per chunk)", 32, 4, 1024),
    )
    map_note = "Per-bucket softmax weights reassembled; pattern = keys met in any round."

    def check_length(self, n, hp):
        if hp["buckets"] % 2:
            raise InputError(f"Reformer buckets must be even; got {hp['buckets']}.")

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        B, H, n, D = q.shape
        r, c = hp["rounds"], hp["chunk"]
        R = torch.randn(r, D, hp["buckets"] // 2, generator=generator(hp["seed"]))
        chunk_of, q_sorted, k_sorted = sorted_chunks(q, k, R.to(q.dtype), c)
        bq = query_block(c)
        lo, width, q_blocks = key_runs(chunk_of, q_sorted, k_sorted, c, bq)
        # Every block of every head and round in one flat list, narrowest runs first, so
        # that each group pads its runs only to the widest in the group.
        nb = q_blocks.shape[3]
        row = torch.arange(B * H * r).repeat_interleave(nb)  # (b·H + h)·r + t
        lo, width, q_blocks = lo.flatten(), width.flatten(), q_blocks.reshape(-1, bq)
        by_width = width.argsort()
        scale = default_scale(D)
        pad = torch.tensor([[PAD_QUERY, PAD_KEY]], dtype=torch.int16).expand(r, 2)
        ids = torch.cat([chunk_of.to(torch.int16).movedim(2, 0).reshape(r, -1), pad], dim=1)
        tables = (
            (q * scale).reshape(-1, D),
            k.reshape(-1, D),
            v.reshape(-1, D),
            k_sorted.reshape(-1),
            ids,  # (r', B·H·2n + 2): each item's chunk in every round, then the pads
        )
        unshifted = shift_free(q, k, scale)
        W = int(width.max())
        per_block = bq * W * (3 * FLOAT_BYTES + 3 * r) + 3 * W * D * FLOAT_BYTES
        g = max(1, GROUP_BYTES // per_block)
        out_r = q.new_zeros(B * H * r * (n + 1), D)  # slot n of each row takes the padding
        lse_r = q.new_full((B * H * r * (n + 1),), NEG_INF)
        parts = []
        for a in range(0, by_width.numel(), g):
            blk = by_width[a : a + g]
            blocks = (row[blk] % r, row[blk] // r, q_blocks[blk], lo[blk], width[blk])
            o, lse, p, kp = attend_group(
                tables, blocks, n=n, r=r, causal=causal, unshifted=unshifted, want_p=want_map
            )
            dest = (row[blk, None] * (n + 1) + q_blocks[blk]).flatten()
            out_r.index_copy_(0, dest, o.reshape(-1, D))
            lse_r.index_copy_(0, dest, lse.flatten())
            if want_map:
                parts.append((blk, p, kp))
        out_r = out_r.view(B, H, r, n + 1, D)[:, :, :, :n]
        lse_r = lse_r.view(B, H, r, n + 1)[..., :n]
        # Combine the rounds: out = Σ_t exp(lse_t − LSE) out_t, LSE = log Σ_t exp(lse_t).
        LSE = torch.logsumexp(lse_r, dim=2, keepdim=True)
        w = torch.exp(lse_r - torch.where(torch.isfinite(LSE), LSE, 0.0))  # (B, H, r, n)
        out = (w[..., None] * out_r).sum(dim=2)
        if not want_map:
            return Output(out)
        weights = q.new_zeros(B * H, n * n)
        w_flat = F.pad(w, (0, 1)).reshape(-1)  # this round's share of each row, per slot
        for blk, p, kp in parts:
            qp = q_blocks[blk]  # (g, bq); padding rows have p = 0
            share = w_flat[row[blk, None] * (n + 1) + qp]
            flat = (qp.clamp(max=n - 1)[..., None] * n + kp[:, None, :]).expand_as(p)
            bh = (row[blk] // r)[:, None, None].expand_as(p)
            weights.index_put_((bh, flat), p * share[..., None], accumulate=True)
        return Output(out, weights.view(B, H, n, n), self._pattern(chunk_of, n, causal))

    @staticmethod
    def _pattern(chunk_of: torch.Tensor, n: int, causal: bool) -> torch.Tensor:
        cq, ck = chunk_of[..., :n, None], chunk_of[..., None, n:]  # (B, H, r, n, 1|n)
        met = ((cq - ck).abs() <= 1).any(dim=2)  # (B, H, n, n)
        return met & torch.ones(n, n, dtype=torch.bool).tril() if causal else met

    def flops(self, n, d, hp):
        r, c, b = hp["rounds"], hp["chunk"], hp["buckets"]
        hashing = 2.0 * 2 * n * d * b / 2
        sorting = 2 * n * math.log2(max(2 * n, 2))
        attend = 4.0 * n * 2 * c * d + 2 * n * 2 * c * r  # ≈ 2c keys per query, r counts
        return r * (hashing + sorting + attend)

    def memory(self, n, d, hp):
        r = hp["rounds"]
        items = 2.0 * 2 * n * d + 2.0 * r * n * d  # q|k gathered per group, per-round outputs
        return 1.5 * GROUP_BYTES + items * FLOAT_BYTES + 6.0 * r * 2 * n * 8  # + int64 ids
