"""Longformer (Beltagy et al. 2020): sliding-window attention plus global tokens.

Token i sees keys with |i − j| ≤ w (engine.attention.patterns: w keys on each side); the
first g tokens are global: they see every key and every query sees them. On a CPU it is
computed in query blocks against a gathered band (the paper's "sliding chunks" trick), so
time is O(n·(w + g)·d) and memory O(n·(w + g)) — linear in n; on CUDA it runs the Triton
block-sparse kernel with the same token pattern. The map is exact: these are the weights
the pattern computes.
"""

from __future__ import annotations

import torch

from engine.attention import patterns
from engine.text import InputError
from engine.variants.base import Output, Param, Variant
from engine.variants.blocks import (
    band_allowed,
    blocked_memory,
    kernel_block_sparse,
    on_triton,
    query_positions,
    sparse_output,
)

KERNEL_BLOCK = 64  # block of the Triton path: kept blocks cover the band and the globals


def _block(r: int) -> int:
    return max(16, r)


class Longformer(Variant):
    name = "longformer"
    title = "Longformer (window + global)"
    paper = "Beltagy et al. 2020, Longformer: The Long-Document Transformer"
    time_complexity = "O(n·(w + g)·d)"
    memory_complexity = "O(n·(w + g))"
    params = (
        Param("window", "window w (keys each side)", 8, 1, 1024, help="token i sees |i−j| ≤ w"),
        Param("globals", "global tokens g", 1, 0, 64, help="the first g tokens are global"),
    )
    map_note = "Exact weights of the window + global pattern."

    def check_length(self, n, hp):
        if hp["globals"] > n:
            raise InputError(f"Longformer global tokens must be at most n = {n}.")

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        n = q.shape[-2]
        r, g = hp["window"], hp["globals"]
        if on_triton(q, k, v, KERNEL_BLOCK):
            blocks = patterns.longformer_block_mask(
                n, window=r, global_tokens=range(g), block_size=KERNEL_BLOCK
            )
            return kernel_block_sparse(
                q,
                k,
                v,
                blocks,
                KERNEL_BLOCK,
                causal=causal,
                want_map=want_map,
                pattern=lambda: patterns.longformer_pattern(n, window=r, n_global=g),
                window=r,
                n_global=g,
            )
        b = _block(r)
        q_pos = query_positions(n, b)  # (nb, b)
        band = q_pos[:, :1] - r + torch.arange(b + 2 * r)  # (nb, b + 2r)
        glob = torch.arange(g).expand(q_pos.shape[0], g)  # (nb, g)
        key_idx = torch.cat([band, glob], dim=1)
        ok = band_allowed(q_pos, key_idx, n, causal=causal)
        i, j = q_pos[:, :, None], key_idx[:, None, :]
        in_band = patterns.in_window(i, j, r) & (j >= g)  # global columns come from `glob` only
        is_glob = torch.arange(key_idx.shape[1]) >= band.shape[1]
        allowed = ok & (in_band | is_glob)
        return sparse_output(
            q, k, v, key_idx, allowed, causal=causal, want_map=want_map, n_global=g
        )

    def _keys(self, n, hp):
        r, g = hp["window"], hp["globals"]
        return _block(r) + 2 * r + g

    def flops(self, n, d, hp):
        g = hp["globals"]
        return 4.0 * n * self._keys(n, hp) * d + 4.0 * g * n * d

    def memory(self, n, d, hp):
        b = _block(hp["window"])
        return blocked_memory(n, d, b, self._keys(n, hp), hp["globals"])
