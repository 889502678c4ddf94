"""Reformer (Kitaev et al. 2020): LSH attention over sorted, chunked buckets.

Angular LSH: h(x) = argmax([xR ; −xR]) with a random rotation R ∈ ℝ^{d×b/2}, applied to
the unit-normalised queries and keys (which are separate here, not the paper's shared
QK). Queries and keys are merged into one sequence sorted by (bucket, position) —
O(n log n) — and cut into chunks of c items; a query attends to the keys of its own and
the neighbouring chunks, so similar q and k meet. Each of r rounds uses a new R; the
rounds are combined with the paper's correction: a pair met in N_ij rounds has log N_ij
subtracted from its score, so the result is softmax over the union of keys met.

Time O(r·n log n + r·n·c·d); chunks are attended in groups of bounded size, so memory
is O(r·n·d) for the items and per-round outputs. The map is exact: the per-bucket softmax
weights, reassembled (out = map · V holds exactly).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from engine.text import InputError
from engine.variants.base import FLOAT_BYTES, Output, Param, Variant, default_scale, generator
from engine.variants.blocks import GROUP_BYTES, NEG_INF, gather_keys


def lsh_buckets(x: torch.Tensor, R: torch.Tensor) -> torch.Tensor:
    """``x [B, H, n, D]``, ``R [r, D, b/2]`` → bucket ids ``[B, H, r, n]``."""
    rot = torch.einsum("bhnd,rdk->bhrnk", F.normalize(x, dim=-1), R)
    return torch.cat([rot, -rot], dim=-1).argmax(dim=-1)


def sorted_chunks(q, k, R, c: int):
    """Hash, then sort the 2n merged items by (bucket, position) and cut chunks of c.

    Item t < n is query t, item t ≥ n is key t − n, item 2n pads the last chunk. Returns
    ``order [B, H, r, nc, c]`` (item ids) and ``chunk_of [B, H, r, 2n]`` (each item's chunk).
    """
    B, H, n, _ = q.shape
    bucket = torch.cat([lsh_buckets(q, R), lsh_buckets(k, R)], dim=-1)  # (B, H, r, 2n)
    pos = torch.arange(n).repeat(2)
    order = (bucket * (4 * n) + 2 * pos + (torch.arange(2 * n) >= n)).argsort(dim=-1)
    rank = torch.empty_like(order).scatter_(-1, order, torch.arange(2 * n).expand_as(order))
    nc = math.ceil(2 * n / c)
    order = F.pad(order, (0, nc * c - 2 * n), value=2 * n).view(B, H, -1, nc, c)
    return order, rank // c


def attend_round(items, X, Vx, chunk_of, n: int, *, causal: bool, want_map: bool):
    """One hash round: each query attends to the keys in its own and the adjacent chunks.

    A pair met in N_ij rounds gets log N_ij subtracted, so that summing the rounds counts
    it once. Chunks go in groups of about GROUP_BYTES, so the working set does not grow
    with n. Returns out ``[B, H, n, D]``, lse ``[B, H, n]`` and, for the map, the query
    and key positions and weights of every chunk (None without ``want_map``).
    """
    B, H, nc, c = items.shape
    D, dummy = X.shape[-1], 2 * n
    around = F.pad(items, (0, 0, 1, 1), value=dummy)  # chunks a−1, a, a+1
    keys = torch.cat([around[:, :, :-2], around[:, :, 1:-1], around[:, :, 2:]], dim=-1)
    g = max(1, GROUP_BYTES // (4 * B * H * 3 * c * (c * (4 + chunk_of.shape[2]) + 2 * D)))
    parts = [
        _attend_chunks(
            items[:, :, a : a + g], keys[:, :, a : a + g], X, Vx, chunk_of, n, causal=causal
        )
        for a in range(0, nc, g)
    ]
    out, lse = torch.cat([p[0] for p in parts], dim=2), torch.cat([p[1] for p in parts], dim=2)
    slot = torch.where(items < n, items, n).flatten(2)  # query slots → position, others → n
    full = X.new_zeros(B, H, n + 1, D).scatter_(
        2, slot[..., None].expand(-1, -1, -1, D), out.flatten(2, 3)
    )
    lse_full = X.new_full((B, H, n + 1), NEG_INF).scatter_(2, slot, lse.flatten(2))
    if not want_map:
        return full[:, :, :n], lse_full[:, :, :n], None
    pq, pk, p = (torch.cat([part[i] for part in parts], dim=2) for i in (2, 3, 4))
    return full[:, :, :n], lse_full[:, :, :n], (pq, pk, p)


def _attend_chunks(items, keys, X, Vx, chunk_of, n: int, *, causal: bool):
    """Softmax of a group of chunks over their gathered keys: out, lse, pq, pk, p."""
    B, H, nc, c = items.shape
    r, D, dummy = chunk_of.shape[2], X.shape[-1], 2 * n
    qi, kj = items[..., :, None], keys[..., None, :]  # item ids (…, c, 1), (…, 1, 3c)
    pq, pk = qi.clamp(max=n - 1), (kj - n).clamp(0, n - 1)  # positions
    allowed = (qi < n) & (kj >= n) & (kj < dummy)
    if causal:
        allowed &= pk <= pq
    cq = chunk_of[..., :n].gather(-1, pq.flatten(2)[:, :, None].expand(-1, -1, r, -1))
    ck = chunk_of[..., n:].gather(-1, pk.flatten(2)[:, :, None].expand(-1, -1, r, -1))
    met = (cq.view(B, H, r, nc, c, 1) - ck.view(B, H, r, nc, 1, 3 * c)).abs() <= 1
    s = gather_keys(X, items) @ gather_keys(X, keys).transpose(-2, -1)
    s = s * default_scale(D) - met.sum(dim=2).clamp(min=1).to(X.dtype).log()
    s = s.masked_fill(~allowed, NEG_INF)  # (B, H, nc, c, 3c)
    lse = torch.logsumexp(s, dim=-1)  # (B, H, nc, c)
    p = torch.exp(s - torch.where(torch.isfinite(lse), lse, torch.zeros_like(lse))[..., None])
    return p @ gather_keys(Vx, keys), lse, pq, pk, p


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
        R = torch.randn(hp["rounds"], D, hp["buckets"] // 2, generator=generator(hp["seed"]))
        order, chunk_of = sorted_chunks(q, k, R.to(q.dtype), hp["chunk"])
        X = torch.cat([q, k, q.new_zeros(B, H, 1, D)], dim=2)  # (B, H, 2n + 1, D)
        Vx = torch.cat([v, v, v.new_zeros(B, H, 1, D)], dim=2)  # item t ≥ n carries v[t − n]
        rounds = [
            attend_round(order[:, :, t], X, Vx, chunk_of, n, causal=causal, want_map=want_map)
            for t in range(hp["rounds"])
        ]
        # Combine the rounds: out = Σ_t exp(lse_t − LSE) out_t, LSE = log Σ_t exp(lse_t).
        lse_all = torch.stack([r[1] for r in rounds])  # (r, B, H, n)
        LSE = torch.logsumexp(lse_all, dim=0)
        w = torch.exp(lse_all - torch.where(torch.isfinite(LSE), LSE, 0.0))
        out = (w[..., None] * torch.stack([r[0] for r in rounds])).sum(dim=0)
        if not want_map:
            return Output(out)
        weights = q.new_zeros(B, H, n * n)
        for t, (_, _, (pq, pk, p)) in enumerate(rounds):
            wt = w[t].gather(-1, pq.flatten(2)).view_as(pq)  # this round's share of the row
            flat = (pq * n + pk).expand_as(p).flatten(2)
            weights.scatter_add_(2, flat, (p * wt).flatten(2))
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
        attend = 4.0 * 2 * n * 3 * c * d + 2 * n * 3 * c * r
        return r * (hashing + sorting + attend)

    def memory(self, n, d, hp):
        r = hp["rounds"]
        items = 4.0 * 2 * n * d + 2.0 * r * n * d  # merged q|k and v, per-round outputs
        return 1.5 * GROUP_BYTES + items * FLOAT_BYTES + 5.0 * r * 2 * n * 8  # + int64 ids
