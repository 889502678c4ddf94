"""Longformer (Beltagy et al. 2020): sliding-window attention plus global tokens.

Token i sees keys with |i − j| ≤ w/2; the first g tokens are global: they see every key
and every query sees them. Computed in query blocks against a gathered band (the paper's
"sliding chunks" trick), so time is O(n·(w + g)·d) and memory O(n·(w + g)) — linear in n.
The map is exact: these are the weights the pattern computes.
"""

from __future__ import annotations

import torch

from engine.text import InputError
from engine.variants.base import Output, Param, Variant
from engine.variants.blocks import band_allowed, blocked_memory, query_positions, sparse_output


def _block(r: int) -> int:
    return max(16, r)


class Longformer(Variant):
    name = "longformer"
    title = "Longformer (window + global)"
    paper = "Beltagy et al. 2020, Longformer: The Long-Document Transformer"
    time_complexity = "O(n·(w + g)·d)"
    memory_complexity = "O(n·(w + g))"
    params = (
        Param(
            "window", "window w (keys, both sides)", 16, 2, 1024, help="token i sees |i−j| ≤ w/2"
        ),
        Param("globals", "global tokens g", 1, 0, 64, help="the first g tokens are global"),
    )
    map_note = "Exact weights of the window + global pattern."

    def check_length(self, n, hp):
        if hp["globals"] > n:
            raise InputError(f"Longformer global tokens must be at most n = {n}.")

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        n = q.shape[-2]
        r, g = hp["window"] // 2, hp["globals"]
        b = _block(r)
        q_pos = query_positions(n, b)  # (nb, b)
        band = q_pos[:, :1] - r + torch.arange(b + 2 * r)  # (nb, b + 2r)
        glob = torch.arange(g).expand(q_pos.shape[0], g)  # (nb, g)
        key_idx = torch.cat([band, glob], dim=1)
        ok = band_allowed(q_pos, key_idx, n, causal=causal)
        i, j = q_pos[:, :, None], key_idx[:, None, :]
        in_band = ((i - j).abs() <= r) & (j >= g)  # global columns come from `glob` only
        is_glob = torch.arange(key_idx.shape[1]) >= band.shape[1]
        allowed = ok & (in_band | is_glob)
        return sparse_output(
            q, k, v, key_idx, allowed, causal=causal, want_map=want_map, n_global=g
        )

    def _keys(self, n, hp):
        r, g = hp["window"] // 2, hp["globals"]
        return _block(r) + 2 * r + g

    def flops(self, n, d, hp):
        g = hp["globals"]
        return 4.0 * n * self._keys(n, hp) * d + 4.0 * g * n * d

    def memory(self, n, d, hp):
        b = _block(hp["window"] // 2)
        return blocked_memory(n, d, b, self._keys(n, hp), hp["globals"])
