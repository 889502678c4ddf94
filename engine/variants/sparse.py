"""Sparse Transformer "fixed" pattern (Child et al. 2019): local blocks + summary columns.

A(1): keys in the query's own block of l tokens (local).
A(2): the last c tokens of every block ("summary" cells every query may read: global).
Each query sees l + c·n/l keys: time O(n·(l + c·n/l)·d), which is O(n√n) when l ≈ √n
and quadratic with a small constant c/l for a fixed l.
"""

from __future__ import annotations

import torch

from engine.errors import InputError
from engine.variants.base import Output, Param, Variant
from engine.variants.blocks import (
    band_allowed,
    blocked_memory,
    n_blocks,
    query_positions,
    sparse_output,
)


class Sparse(Variant):
    name = "sparse"
    grid_budget = {"block": 32, "summary": 4}
    swappable = True
    title = "Sparse local + global (fixed)"
    paper = "Child et al. 2019, Generating Long Sequences with Sparse Transformers"
    time_complexity = "O(n·(l + c·n/l)·d) = O(n√n·d) at l ≈ √n"
    memory_complexity = "O(n·(l + c·n/l))"
    params = (
        Param("block", "block l", 32, 2, 1024),
        Param("summary", "summary tokens c per block", 4, 1, 1024),
    )
    map_note = "Exact weights of the local + summary pattern."

    def check_length(self, n, hp):
        if hp["summary"] > hp["block"]:
            raise InputError("sparse.summary_over_block")

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        n, l, c = q.shape[-2], hp["block"], hp["summary"]
        nb = n_blocks(n, l)
        q_pos = query_positions(n, l)  # (nb, l)
        summary = (torch.arange(nb)[:, None] * l + torch.arange(l - c, l)).flatten()
        key_idx = torch.cat([q_pos, summary.expand(nb, -1)], dim=1)  # (nb, l + nb·c)
        allowed = band_allowed(q_pos, key_idx, n, causal=causal)
        own = torch.arange(nb)[:, None] == (summary // l)[None, :]  # already in the local part
        allowed[:, :, l:] &= ~own[:, None, :]
        return sparse_output(q, k, v, key_idx, allowed, causal=causal, want_map=want_map)

    def _keys(self, n, hp):
        return hp["block"] + hp["summary"] * n_blocks(n, hp["block"])

    def pretrained_budget(self, n):  # about half of an n-token text's keys
        return {"block": max(2, n // 4), "summary": max(1, n // 16)}

    def cache_bytes(self, n, d, heads, hp=None):
        """the own block and the summary tokens of every earlier block"""
        hp = self.resolve(hp)
        return super().cache_bytes(
            min(n, hp["block"] + hp["summary"] * (n // hp["block"])), d, heads
        )

    def flops(self, n, d, hp):
        return 4.0 * n * self._keys(n, hp) * d

    def memory(self, n, d, hp):
        return blocked_memory(n, d, hp["block"], self._keys(n, hp))
