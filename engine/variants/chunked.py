"""Chunked attention with overlap (sliding-window practice of streaming / long-context models).

The sequence is cut into chunks of c tokens; a query in chunk a sees the keys of its own
chunk plus the o keys just before it, so information crosses chunk borders through the
overlap. Time O(n·(c + o)·d), memory O(n·(c + o)): linear in n.
"""

from __future__ import annotations

import torch

from engine.variants.base import Output, Param, Variant
from engine.variants.blocks import band_allowed, blocked_memory, query_positions, sparse_output


class Chunked(Variant):
    name = "chunked"
    grid_budget = {"chunk": 32, "overlap": 16}
    swappable = True
    title = "Chunked with overlap"
    paper = "Sliding-window / chunked attention (e.g. Child et al. 2019; Mistral 2023)"
    time_complexity = "O(n·(c + o)·d)"
    memory_complexity = "O(n·(c + o))"
    params = (
        Param("chunk", "chunk c", 32, 2, 1024),
        Param("overlap", "overlap o (keys before the chunk)", 16, 0, 1024),
    )
    map_note = "Exact weights of the chunk + overlap pattern."

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        n, c, o = q.shape[-2], hp["chunk"], hp["overlap"]
        q_pos = query_positions(n, c)  # (nb, c)
        key_idx = q_pos[:, :1] - o + torch.arange(c + o)  # (nb, c + o)
        allowed = band_allowed(q_pos, key_idx, n, causal=causal)
        return sparse_output(q, k, v, key_idx, allowed, causal=causal, want_map=want_map)

    def pretrained_budget(self, n):  # about half of an n-token text's keys
        return {"chunk": max(2, n // 4), "overlap": max(0, n // 4)}

    def cache_bytes(self, n, d, heads, hp=None):
        """the current chunk and the overlap before it"""
        hp = self.resolve(hp)
        return super().cache_bytes(min(n, hp["chunk"] + hp["overlap"]), d, heads)

    def flops(self, n, d, hp):
        return 4.0 * n * (hp["chunk"] + hp["overlap"]) * d

    def memory(self, n, d, hp):
        return blocked_memory(n, d, hp["chunk"], hp["chunk"] + hp["overlap"])
