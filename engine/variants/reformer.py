"""Reformer (Kitaev et al. 2020): LSH attention over sorted, chunked buckets.

Angular LSH: h(x) = argmax([xR ; −xR]) with a random rotation R ∈ ℝ^{d×b/2}, applied to
the queries and keys (which are separate here, not the paper's shared QK; the argmax
does not depend on |x|, so they need no normalising). Queries and keys are merged into
one sequence sorted by (bucket, position) — O(n log n) — and cut into chunks of c
items; a query attends to the keys of its own and the neighbouring chunks, so similar
q and k meet. Each of r rounds uses a new R; the rounds are combined with the paper's
correction: a pair met in N_ij rounds has log N_ij subtracted from its score, so the
result is softmax over the union of keys met.

All r rounds run as one batch. Within a round the sorted queries are cut into blocks of
``query_block(c)``; a block's keys (its chunks and their neighbours) are one contiguous
run of the sorted keys, so only query–key pairs are scored. Every index the blocks need
(rows to gather, every round's chunk ids, where the results go) is built once for all
blocks of all heads and rounds; the loop then runs over groups of blocks of bounded
size, narrowest runs first, with a fixed handful of ops per group. Time
O(r·n log n + r·n·c·d); memory O(r·n·(d + r·c/bq)) for the sorted items, the block
tables and the per-round outputs. The map is exact: the per-bucket softmax weights,
reassembled (out = map · V holds exactly).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F

from engine.errors import InputError
from engine.kernels.reference import shift_free
from engine.variants.base import FLOAT_BYTES, Output, Param, Variant, default_scale, generator

NEG_INF = float("-inf")
GROUP_BYTES = 4 * 2**20  # working set per group of query blocks: stays in L2 + L3
HASH_ITEMS = 1024  # items hashed per step: their r·b/2 rotated coordinates stay in L2
# Chunk ids fit int16 (n ≤ 32768 and c ≥ 4: ids < 16384); padding slots get ids so far
# from every real one, and from each other even after int16 wrap-around, that they never
# count as neighbours.
PAD_QUERY, PAD_KEY = -12000, 29000


def query_block(c: int) -> int:
    """Sorted queries per block (about c/4): a small block's run of keys holds few keys
    that none of its queries may meet, a large one makes bigger matrix products."""
    return min(64, max(4, c // 4))


def lsh_buckets(x: torch.Tensor, R: torch.Tensor) -> torch.Tensor:
    """``x [B, H, m, D]``, ``R [r, D, b/2]`` → bucket ids ``[B, H, r, m]``."""
    B, H, m, D = x.shape
    r, _, half = R.shape
    Rt = R.transpose(1, 2).reshape(r * half, D)
    xf = x.reshape(B * H, m, D)
    out = torch.empty(B * H, r, m, dtype=torch.int64)
    # A slice of items at a time: the rotated coordinates, m innermost (the reductions
    # then run across items in SIMD lanes), stay in cache instead of a B·H·r·b/2·m array.
    for s in range(0, m, HASH_ITEMS):
        rot = (Rt @ xf[:, s : s + HASH_ITEMS].transpose(1, 2)).unflatten(1, (r, half))
        # argmax of [xR ; −xR] without building it: the largest entry or the most negative.
        hi, i_hi = rot.max(dim=2)
        lo, i_lo = rot.min(dim=2)
        out[..., s : s + HASH_ITEMS] = torch.where(hi >= -lo, i_hi, i_lo + half)
    return out.view(B, H, r, m)


def sorted_chunks(q, k, R, c: int):
    """Hash, sort the 2n merged items by (bucket, position, query first), cut chunks of c.

    Queries and keys are sorted apart (two sorts of n); an item's rank in the merged order
    is its rank among its own kind plus the number of the other kind sorted before it.
    Returns the query and key positions in sorted order and the chunk of each sorted
    query and each sorted key (non-decreasing), all ``[B, H, r, n]``.
    """
    n = q.shape[-2]
    bucket = lsh_buckets(torch.cat([q, k], dim=2), R)  # (B, H, r, 2n)
    two_pos = 2 * torch.arange(n)  # even for a query, odd for a key: a query goes first
    vq, q_sorted = (bucket[..., :n] * (2 * n) + two_pos).sort(dim=-1)
    vk, k_sorted = (bucket[..., n:] * (2 * n) + two_pos + 1).sort(dim=-1)
    rank = torch.arange(n)
    q_chunk = (rank + torch.searchsorted(vk, vq)).div_(c, rounding_mode="floor")
    k_chunk = (rank + torch.searchsorted(vq, vk)).div_(c, rounding_mode="floor")
    return q_sorted, k_sorted, q_chunk, k_chunk


def key_runs(q_sorted, q_chunk, k_chunk, bq: int):
    """For each block of ``bq`` sorted queries, the run of sorted keys it may meet.

    Keys keep their merged order among themselves, so the keys of chunks a−1 … a+1 of a
    block spanning chunks first … last are one run of the sorted keys. Returns the run
    starts ``lo [B, H, r, nb]``, lengths ``width`` and the padded query positions
    ``[B, H, r, nb, bq]`` (n marks a padding slot).
    """
    n = q_sorted.shape[-1]
    nb = -(-n // bq)
    q_blocks = F.pad(q_sorted, (0, nb * bq - n), value=n).unflatten(-1, (nb, bq))
    first = q_chunk[..., ::bq].contiguous()
    last = q_chunk[..., torch.clamp(torch.arange(nb) * bq + bq - 1, max=n - 1)]
    lo = torch.searchsorted(k_chunk, first - 1)
    hi = torch.searchsorted(k_chunk, last + 2)
    return lo, hi - lo, q_blocks


class Plan(NamedTuple):
    """Every block of every head and round, narrowest run first (``nblk`` blocks).

    Rows index the flattened ``[B·H·n, ·]`` q, k, v tables; ``dest`` the per-round
    outputs ``[B·H·r·(n + 1), ·]`` (slot n of each row takes the padding). ``cq``/``ck``
    hold each query's and key's chunk in every round, the block's own round first.
    """

    width: list[int]  # run lengths, non-decreasing
    q_pos: torch.Tensor  # (nblk, bq) positions, clamped to n − 1 (q_ok marks real ones)
    k_pos: torch.Tensor  # (nblk, W) positions, clamped
    q_rows: torch.Tensor  # (nblk, bq)
    k_rows: torch.Tensor  # (nblk, W)
    dest: torch.Tensor  # (nblk, bq)
    cq: torch.Tensor  # (r, nblk, bq) int16
    ck: torch.Tensor  # (r, nblk, W) int16
    row: torch.Tensor  # (nblk,) (b·H + h)·r + round


def plan_blocks(chunk_of, q_blocks, k_sorted, lo, width) -> Plan:
    """The block tables, for ``chunk_of [B, H, r, 2n]`` (each item's chunk by position)."""
    B, H, r, n2 = chunk_of.shape
    n, bq = n2 // 2, q_blocks.shape[-1]
    nb = q_blocks.shape[-2]
    by_width = width.flatten().argsort()
    row = torch.arange(B * H * r).repeat_interleave(nb)[by_width]
    lo, width = lo.flatten()[by_width], width.flatten()[by_width]
    qp = q_blocks.reshape(-1, bq)[by_width]
    W = int(width[-1])
    bh, t = row // r, row % r
    slot = lo[:, None] + torch.arange(W)
    key_ok = slot < (lo + width)[:, None]
    at = (row[:, None] * n + slot.clamp_(max=n - 1)).flatten()
    kp = k_sorted.reshape(-1).index_select(0, at).view(-1, W)  # not [·]: index_select is ~4× faster
    q_ok = qp < n
    dest = row[:, None] * (n + 1) + qp
    qp = qp.clamp(max=n - 1)
    # Chunk ids with the rounds rotated so that each block's own round comes first:
    # table[t, item, j] = chunk of item in round (t + j) mod r; the last two items are
    # the padding ids.
    L = B * H * n2 + 2
    ids = chunk_of.to(torch.int16).movedim(2, 0).reshape(r, -1)
    pad = torch.tensor([[PAD_QUERY, PAD_KEY]], dtype=torch.int16).expand(r, 2)
    ids = torch.cat([ids, pad], dim=1)
    table = torch.stack([ids.roll(-s, dims=0) for s in range(r)]).transpose(1, 2).reshape(-1, r)
    base = (t * L + bh * n2)[:, None]
    iq = torch.where(q_ok, base + qp, (t * L)[:, None] + L - 2)
    ik = torch.where(key_ok, base + n + kp, (t * L)[:, None] + L - 1)
    cq, ck = (
        table.index_select(0, i.flatten()).view(*i.shape, r).movedim(-1, 0).contiguous()
        for i in (iq, ik)
    )
    return Plan(
        width=width.tolist(),
        q_pos=qp,
        k_pos=kp,
        q_rows=bh[:, None] * n + qp,
        k_rows=bh[:, None] * n + kp,
        dest=dest,
        cq=cq,
        ck=ck,
        row=row,
    )


def attend_group(qs, kv, plan: Plan, a: int, b: int, *, causal: bool, unshifted: bool):
    """Blocks a … b−1 of the plan against their runs of keys.

    A pair counts in the block's round when its chunks there are neighbours; its score
    gets −log N_ij, N_ij the number of rounds in which the pair met. Returns the
    unnormalised weights e ``[g, bq, W]`` (e_ij = exp(s_ij − m_i) / N_ij), the row shift
    m ``[g, bq, 1]`` (None when unshifted: m = 0), e · V ``[g, bq, D]`` and l = Σ_j e_ij.
    """
    W = plan.width[b - 1]
    g, bq = b - a, plan.q_rows.shape[1]
    D = qs.shape[1]
    if W == 0:  # every key hashed far from these blocks' queries: they meet none here
        m = None if unshifted else qs.new_full((g, bq, 1), NEG_INF)
        return qs.new_zeros(g, bq, 0), m, qs.new_zeros(g, bq, D), qs.new_zeros(g, bq)
    q = qs.index_select(0, plan.q_rows[a:b].reshape(-1)).view(g, bq, D)
    kvg = kv.index_select(0, plan.k_rows[a:b, :W].reshape(-1)).view(g, W, 2 * D)
    s = torch.bmm(q, kvg[..., :D].transpose(1, 2))  # (g, bq, W)
    # 1 where the pair's chunks are not neighbours in that round (ids differ by 2 or more),
    # in int16 arithmetic: comparisons producing bool, and sums of bool, cost several
    # times more on a CPU.
    apart = (plan.ck[:, a:b, None, :W] - plan.cq[:, a:b, :, None]).abs_().sub_(1).clamp_(0, 1)
    ok = 1 - apart[0]  # met in the block's own round (padding never is)
    if causal:
        ok.mul_(plan.k_pos[a:b, None, :W] <= plan.q_pos[a:b, :, None])
    # N_ij = rounds the pair met in: this one, plus the others where it met. For a pair
    # not allowed here it is still ≥ 1, so the weight ok / N_ij is 0 there, never 0/0.
    count = len(apart) - apart[1:].sum(dim=0, dtype=s.dtype)
    training = s.requires_grad and torch.is_grad_enabled()  # autograd keeps exp's output
    if unshifted:
        m = None
        # exp(s − log N) = exp(s) / N
        e = s.exp() * ok / count if training else s.exp_().mul_(ok).div_(count)
    elif training:
        s = (s - count.log()).masked_fill(ok == 0, NEG_INF)
        m = s.amax(dim=-1, keepdim=True)
        e = (s - torch.where(torch.isfinite(m), m, 0.0)).exp()
    else:
        s.sub_(count.log_()).masked_fill_(ok == 0, NEG_INF)
        m = s.amax(dim=-1, keepdim=True)  # −inf for a row that met no key
        e = s.sub_(torch.where(torch.isfinite(m), m, 0.0)).exp_()
    return e, m, torch.bmm(e, kvg[..., D:]), e.sum(dim=-1)


class Reformer(Variant):
    name = "reformer"
    lra_average = 50.67
    grid_budget = {"buckets": 8, "rounds": 2, "chunk": 32}
    swappable = True
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
            raise InputError("reformer.odd_buckets", buckets=hp["buckets"])

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        B, H, n, D = q.shape
        r, c = hp["rounds"], hp["chunk"]
        R = torch.randn(r, D, hp["buckets"] // 2, generator=generator(hp["seed"]))
        q_sorted, k_sorted, q_chunk, k_chunk = sorted_chunks(q, k, R.to(q.dtype), c)
        chunk_of = torch.cat(
            [
                torch.empty_like(q_chunk).scatter_(-1, q_sorted, q_chunk),
                torch.empty_like(k_chunk).scatter_(-1, k_sorted, k_chunk),
            ],
            dim=-1,
        )  # (B, H, r, 2n): each item's chunk, by position
        bq = query_block(c)
        lo, width, q_blocks = key_runs(q_sorted, q_chunk, k_chunk, bq)
        plan = plan_blocks(chunk_of, q_blocks, k_sorted, lo, width)
        scale = default_scale(D)
        qs = (q * scale).reshape(-1, D)
        kv = torch.cat([k, v], dim=-1).reshape(-1, 2 * D)  # one gather brings k and v
        unshifted = shift_free(q, k, scale)
        W = plan.width[-1]
        per_block = bq * W * (3 * FLOAT_BYTES + 3 * r) + 3 * W * D * FLOAT_BYTES
        g = max(1, GROUP_BYTES // per_block)
        # Per round: Σ_j e_ij v_j, l_i = Σ_j e_ij and the shift m_i of every query.
        slots = B * H * r * (n + 1)
        num = q.new_empty(slots, D)
        den = q.new_zeros(slots)  # rows never written (padding slots) stay empty: l = 0
        shift = q.new_zeros(slots)
        parts = []
        for a in range(0, len(plan.width), g):
            b = min(a + g, len(plan.width))
            e, m, o, l = attend_group(qs, kv, plan, a, b, causal=causal, unshifted=unshifted)
            dest = plan.dest[a:b].reshape(-1)
            num.index_copy_(0, dest, o.view(-1, D))
            den.index_copy_(0, dest, l.view(-1))
            if m is not None:
                shift.index_copy_(0, dest, m.view(-1))
            if want_map:
                parts.append((a, b, e))
        num = num.view(B, H, r, n + 1, D)[..., :n, :]
        den = den.view(B, H, r, n + 1)[..., :n]
        shift = shift.view(B, H, r, n + 1)[..., :n]
        # Combine the rounds: Σ_t e^{m_t} num_t / Σ_t e^{m_t} l_t (shifted by M = max_t m_t;
        # a round in which the query met no key has m_t = −inf and weight 0). The views
        # drop the padding slots, the only rows of num never written.
        if unshifted:
            w = None
            total, out = den.sum(dim=2), num.sum(dim=2)
        else:
            M = shift.amax(dim=2, keepdim=True)
            w = torch.exp(shift - torch.where(torch.isfinite(M), M, 0.0))  # (B, H, r, n)
            total, out = (w * den).sum(dim=2), (w[..., None] * num).sum(dim=2)
        total_safe = torch.where(total > 0, total, 1.0)  # a query that met no key: out 0
        out = out / total_safe[..., None]
        if not want_map:
            return Output(out)
        # p_ij = e_ij e^{m_t} / Σ_t e^{m_t} l_t: each part's rows scaled by its round's share.
        share = (1.0 if w is None else w) / total_safe[:, :, None]
        share = F.pad(share.expand(B, H, r, n), (0, 1)).reshape(-1)  # padding slots: 0
        weights = q.new_zeros(B * H, n * n)
        for a, b, e in parts:
            W = e.shape[-1]
            p = e * share[plan.dest[a:b]][..., None]
            flat = (plan.q_pos[a:b, :, None] * n + plan.k_pos[a:b, None, :W]).expand_as(p)
            bh = (plan.row[a:b] // r)[:, None, None].expand_as(p)
            weights.index_put_((bh, flat), p, accumulate=True)
        return Output(out, weights.view(B, H, n, n), self._pattern(chunk_of, n, causal))

    @staticmethod
    def _pattern(chunk_of: torch.Tensor, n: int, causal: bool) -> torch.Tensor:
        cq, ck = chunk_of[..., :n, None], chunk_of[..., None, n:]  # (B, H, r, n, 1|n)
        met = ((cq - ck).abs() <= 1).any(dim=2)  # (B, H, n, n)
        return met & torch.ones(n, n, dtype=torch.bool).tril() if causal else met

    def pretrained_budget(self, n):  # four buckets, each about a quarter of the keys
        return {"buckets": 4, "rounds": 4, "chunk": max(4, n // 2)}

    def cache_bytes(self, n, d, heads, hp=None):
        """KV cache of every token: a later hash bucket may hold any"""
        return super().cache_bytes(n, d, heads)

    def flops(self, n, d, hp):
        r, c, b = hp["rounds"], hp["chunk"], hp["buckets"]
        hashing = 2.0 * 2 * n * d * b / 2
        sorting = 2 * n * math.log2(max(2 * n, 2))
        attend = 4.0 * n * 2 * c * d + 2 * n * 2 * c * r  # ≈ 2c keys per query, r counts
        return r * (hashing + sorting + attend)

    def memory(self, n, d, hp):
        r, c = hp["rounds"], hp["chunk"]
        # k|v side by side, q scaled; per round Σ e·v, l and m for every query.
        items = 3.0 * n * d + r * n * (d + 2)
        # Block tables: per block of bq queries a run of about 2.5c keys, int64 rows and
        # positions and an int16 chunk id per round for each.
        per_query = (2 * 8 + 2 * r) * (1 + 2.5 * c / query_block(c))
        return 1.5 * GROUP_BYTES + items * FLOAT_BYTES + r * n * per_query + 6.0 * r * 2 * n * 8
