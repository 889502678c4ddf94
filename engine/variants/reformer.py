"""Reformer (Kitaev et al. 2020): LSH attention over sorted, chunked buckets.

Angular LSH: h(x) = argmax([xR ; −xR]) with a random rotation R ∈ ℝ^{d×b/2}, applied to
the unit-normalised queries and keys (which are separate here, not the paper's shared
QK). Queries and keys are merged into one sequence sorted by (bucket, position) —
O(n log n) — and cut into chunks of c items; a query attends to the keys of its own and
the neighbouring chunks, so similar q and k meet. Each of r rounds uses a new R; the
rounds are combined with the paper's correction: a pair met in N_ij rounds has log N_ij
subtracted from its score, so the result is softmax over the union of keys met.

Time O(r·n log n + r·n·c·d), memory O(r·n·c). The map is exact: the per-bucket softmax
weights, reassembled (out = map · V holds exactly).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from engine.text import InputError
from engine.variants.base import FLOAT_BYTES, Output, Param, Variant, default_scale, generator
from engine.variants.blocks import NEG_INF, gather_keys


def lsh_buckets(x: torch.Tensor, R: torch.Tensor) -> torch.Tensor:
    """``x [B, H, n, D]``, ``R [r, D, b/2]`` → bucket ids ``[B, H, r, n]``."""
    rot = torch.einsum("bhnd,rdk->bhrnk", F.normalize(x, dim=-1), R)
    return torch.cat([rot, -rot], dim=-1).argmax(dim=-1)


class Reformer(Variant):
    name = "reformer"
    title = "Reformer (LSH)"
    paper = "Kitaev et al. 2020, Reformer: The Efficient Transformer"
    time_complexity = "O(r·n log n + r·n·c·d)"
    memory_complexity = "O(r·n·c)"
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
        R = torch.randn(r, D, hp["buckets"] // 2, generator=generator(hp["seed"])).to(q.dtype)
        # 1. hash and sort the 2n merged items (t < n: query t; t ≥ n: key t − n).
        bucket = torch.cat([lsh_buckets(q, R), lsh_buckets(k, R)], dim=-1)  # (B, H, r, 2n)
        pos = torch.arange(n).repeat(2)
        order = (bucket * (4 * n) + 2 * pos + (torch.arange(2 * n) >= n)).argsort(dim=-1)
        rank = torch.empty_like(order).scatter_(-1, order, torch.arange(2 * n).expand_as(order))
        chunk_of = rank // c  # (B, H, r, 2n): chunk of every item in every round
        nc = math.ceil(2 * n / c)
        dummy = 2 * n  # padding item: neither a query nor a key
        order = F.pad(order, (0, nc * c - 2 * n), value=dummy).view(B, H, r, nc, c)
        X = torch.cat([q, k, q.new_zeros(B, H, 1, D)], dim=2)  # (B, H, 2n + 1, D)
        Vx = torch.cat([v, v, v.new_zeros(B, H, 1, D)], dim=2)  # item t ≥ n carries v[t − n]

        outs, lses, parts = [], [], []
        for t in range(r):
            items = order[:, :, t]  # (B, H, nc, c)
            around = F.pad(items, (0, 0, 1, 1), value=dummy)  # chunks a−1, a, a+1
            keys = torch.cat([around[:, :, :-2], around[:, :, 1:-1], around[:, :, 2:]], dim=-1)
            qi, kj = items[..., :, None], keys[..., None, :]  # item ids (…, c, 1), (…, 1, 3c)
            pq, pk = qi.clamp(max=n - 1), (kj - n).clamp(0, n - 1)  # positions
            allowed = (qi < n) & (kj >= n) & (kj < dummy)
            if causal:
                allowed &= pk <= pq
            # N_ij: rounds in which this (query, key) pair shares or neighbours a chunk.
            cq = chunk_of[..., :n].gather(-1, pq.flatten(2)[:, :, None].expand(-1, -1, r, -1))
            ck = chunk_of[..., n:].gather(-1, pk.flatten(2)[:, :, None].expand(-1, -1, r, -1))
            met = (cq.view(B, H, r, nc, c, 1) - ck.view(B, H, r, nc, 1, 3 * c)).abs() <= 1
            s = gather_keys(X, items) @ gather_keys(X, keys).transpose(-2, -1)
            s = s * default_scale(D) - met.sum(dim=2).clamp(min=1).to(q.dtype).log()
            s = s.masked_fill(~allowed, NEG_INF)  # (B, H, nc, c, 3c)
            lse = torch.logsumexp(s, dim=-1)  # (B, H, nc, c)
            safe = torch.where(torch.isfinite(lse), lse, torch.zeros_like(lse))
            p = torch.exp(s - safe[..., None])
            out = p @ gather_keys(Vx, keys)  # (B, H, nc, c, D)
            slot = torch.where(items < n, items, n).flatten(2)  # query slots → position
            full = q.new_zeros(B, H, n + 1, D).scatter_(
                2, slot[..., None].expand(-1, -1, -1, D), out.flatten(2, 3)
            )
            lse_full = q.new_full((B, H, n + 1), NEG_INF).scatter_(2, slot, lse.flatten(2))
            outs.append(full[:, :, :n])
            lses.append(lse_full[:, :, :n])
            if want_map:
                parts.append((pq, pk, p))
        # 2. combine rounds: out = Σ_t exp(lse_t − LSE) out_t.
        lse_all = torch.stack(lses)  # (r, B, H, n)
        LSE = torch.logsumexp(lse_all, dim=0)
        w = torch.exp(lse_all - torch.where(torch.isfinite(LSE), LSE, 0.0))
        out = (w[..., None] * torch.stack(outs)).sum(dim=0)
        if not want_map:
            return Output(out)
        weights = q.new_zeros(B, H, n * n)
        for t, (pq, pk, p) in enumerate(parts):
            wt = w[t].gather(-1, pq.flatten(2).clamp(max=n - 1)).view_as(pq)  # round weight
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
        r, c = hp["rounds"], hp["chunk"]
        per_round = 4.0 * 2 * n * 3 * c + 3 * 2 * n * d * 3
        return (per_round + r * 2 * n * 3 * c / 4 + 2 * r * n * d) * FLOAT_BYTES
