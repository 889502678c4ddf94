"""BigBird (Zaheer et al. 2020): block-sparse window + global + random blocks.

Keys and queries are cut into blocks of b tokens. Query block a sees key blocks
a−1, a, a+1 (the window), the first g blocks (global: they also see everything), and
r random blocks drawn per head from a seed (engine.patterns.bigbird_key_blocks,
the blocks the kernels' BigBird mask keeps). Each query sees (3 + g + r)·b keys, so time
is O(n·(3 + g + r)·b·d) and memory O(n·(3 + g + r)·b): linear in n for fixed b, g, r.
On CUDA, with b a power of two in 16…128, it runs the Triton block-sparse kernel.
"""

from __future__ import annotations

import torch

from engine import patterns
from engine.errors import InputError
from engine.variants.base import Output, Param, Variant, generator
from engine.variants.blocks import (
    band_allowed,
    blocked_memory,
    dedupe,
    kernel_block_sparse,
    n_blocks,
    on_triton,
    query_positions,
    sparse_output,
)


class BigBird(Variant):
    name = "bigbird"
    lra_average = 55.01
    grid_budget = {"block": 16, "global_blocks": 1, "random_blocks": 2}
    swappable = True
    title = "BigBird (window + global + random)"
    paper = "Zaheer et al. 2020, Big Bird: Transformers for Longer Sequences"
    time_complexity = "O(n·(3 + g + r)·b·d)"
    memory_complexity = "O(n·(3 + g + r)·b)"
    params = (
        Param("block", "block size b", 16, 2, 256),
        Param("global_blocks", "global blocks g", 1, 0, 8),
        Param("random_blocks", "random blocks r", 2, 0, 8),
    )
    map_note = "Exact weights of the block pattern."

    def check_length(self, n, hp):
        if hp["global_blocks"] * hp["block"] > n:
            raise InputError("bigbird.globals_over_n", n=n)

    def key_blocks(self, n: int, heads: int, hp: dict) -> torch.Tensor:
        """``[H, nb, 3 + g + r]`` key-block indices (−1 or ≥ nb mean outside)."""
        return patterns.bigbird_key_blocks(
            n_blocks(n, hp["block"]),
            heads=heads,
            window_blocks=1,
            global_blocks=hp["global_blocks"],
            random_blocks=hp["random_blocks"],
            generator=generator(hp["seed"]),
        )

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        H, n, b = q.shape[1], q.shape[-2], hp["block"]
        kb = self.key_blocks(n, H, hp)  # (H, nb, kb)
        if on_triton(q, k, v, b):
            blocks = patterns.key_blocks_to_mask(kb, n_blocks(n, b), hp["global_blocks"])

            def pattern():  # the block mask at token level, cut to n
                return blocks.repeat_interleave(b, 1).repeat_interleave(b, 2)[:, :n, :n]

            return kernel_block_sparse(
                q, k, v, blocks, b, causal=causal, want_map=want_map, pattern=pattern
            )
        valid_block = (kb >= 0) & (kb < n_blocks(n, b)) & ~dedupe(kb)
        key_idx = (kb[..., None] * b + torch.arange(b)).flatten(-2)  # (H, nb, kk)
        q_pos = query_positions(n, b)
        allowed = band_allowed(q_pos, key_idx, n, causal=causal)
        allowed = allowed & valid_block.repeat_interleave(b, dim=-1)[..., None, :]
        return sparse_output(
            q,
            k,
            v,
            key_idx[None],
            allowed[None],
            causal=causal,
            want_map=want_map,
            n_global=hp["global_blocks"] * b,
        )

    def _keys(self, hp):
        return (3 + hp["global_blocks"] + hp["random_blocks"]) * hp["block"]

    def pretrained_budget(self, n):  # about half of an n-token text's keys
        return {"block": max(2, n // 8), "global_blocks": 1, "random_blocks": 1}

    def cache_bytes(self, n, d, heads, hp=None):
        """KV cache of every token: random blocks may be any block"""
        return super().cache_bytes(n, d, heads)

    def flops(self, n, d, hp):
        g = hp["global_blocks"] * hp["block"]
        return 4.0 * n * self._keys(hp) * d + 4.0 * g * n * d

    def memory(self, n, d, hp):
        b = hp["block"]
        return blocked_memory(n, d, b, self._keys(hp), hp["global_blocks"] * b)
