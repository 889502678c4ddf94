"""Longformer (Beltagy et al. 2020): sliding-window attention plus global tokens.

Token i sees keys with |i − j| ≤ w (engine.patterns: w keys on each side); the
first g tokens are global: they see every key and every query sees them. On a CPU it is
computed in query blocks against a gathered band (the paper's "sliding chunks" trick), so
time is O(n·(w + g)·d) and memory O(n·(w + g)) — linear in n; on CUDA it runs the Triton
block-sparse kernel with the same token pattern. The map is exact: these are the weights
the pattern computes.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from engine import patterns
from engine.errors import InputError
from engine.variants.base import Output, Param, Variant, default_scale
from engine.variants.blocks import (
    GROUP_BYTES,
    NEG_INF,
    band_allowed,
    blocked_memory,
    kernel_block_sparse,
    on_triton,
    query_positions,
    rows_attention,
    sparse_output,
)

KERNEL_BLOCK = 64  # block of the Triton path: kept blocks cover the band and the globals


def _block(r: int) -> int:
    return max(16, r)


def band_output(q, k, v, r: int, g: int, *, causal: bool):
    """The output alone (no map), each query block against its contiguous window of keys.

    The keys of query block a (positions a·b … a·b + b − 1) within the band are positions
    a·b − r … a·b + b − 1 + r: a window of the zero-padded keys, taken as a strided view
    (``unfold``) instead of gathered. Global key columns are appended to every window and
    the first g query rows are recomputed densely, as in the map path.
    """
    B, H, n, D = q.shape
    b = _block(r)
    nb, L = math.ceil(n / b), b + 2 * r
    pad = (0, 0, r, nb * b - n + r)
    qb = F.pad(q * default_scale(D), (0, 0, 0, nb * b - n)).view(B, H, nb, b, D)
    kw = F.pad(k, pad).unfold(2, L, b)  # (B, H, nb, D, L), a view
    vw = F.pad(v, pad).unfold(2, L, b).transpose(-2, -1)  # (B, H, nb, L, D)
    kg, vg = k[:, :, :g], v[:, :, :g]
    out = q.new_empty(B, H, nb, b, D)
    step = max(1, GROUP_BYTES // (4 * B * H * b * (L + g + D)))
    for a0 in range(0, nb, step):
        a = torch.arange(a0, min(nb, a0 + step))[:, None, None]
        i = a * b + torch.arange(b)[:, None]  # (blocks, b, 1) query positions
        j = a * b - r + torch.arange(L)  # (blocks, 1, L) key positions
        ok = patterns.in_window(i, j, r) & (j >= g) & (j < n)  # global columns come from kg
        if causal:
            ok &= j <= i
        part = slice(a0, a0 + a.shape[0])
        s = qb[:, :, part] @ kw[:, :, part]  # (B, H, blocks, b, L)
        s.masked_fill_(~ok, NEG_INF)
        vs = vw[:, :, part]
        if g:
            sg = qb[:, :, part] @ kg.transpose(-2, -1)[:, :, None]  # (B, H, blocks, b, g)
            if causal:
                sg.masked_fill_(torch.arange(g) > i, NEG_INF)
            s = torch.cat([s, sg], dim=-1)
            vs = torch.cat([vs, vg[:, :, None].expand(-1, -1, vs.shape[2], -1, -1)], dim=-2)
        out[:, :, part] = torch.softmax(s, dim=-1) @ vs
    out = out.view(B, H, nb * b, D)[:, :, :n]
    if g:
        out_g, _ = rows_attention(
            q[:, :, :g], k, v, torch.arange(g), causal=causal, scale=default_scale(D)
        )
        out = torch.cat([out_g, out[:, :, g:]], dim=2)
    return out


class Longformer(Variant):
    name = "longformer"
    lra_average = 53.46
    grid_budget = {"window": 16, "globals": 1}
    swappable = True
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
            raise InputError("longformer.globals_over_n", n=n)

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
        if not want_map:
            return Output(band_output(q, k, v, r, g, causal=causal))
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

    def pretrained_budget(self, n):  # about half of an n-token text's keys
        return {"window": max(1, n // 4), "globals": 1}

    def cache_bytes(self, n, d, heads, hp=None):
        """the last w tokens and the g global ones"""
        hp = self.resolve(hp)
        return super().cache_bytes(min(n, hp["window"] + hp["globals"]), d, heads)

    def flops(self, n, d, hp):
        g = hp["globals"]
        return 4.0 * n * self._keys(n, hp) * d + 4.0 * g * n * d

    def memory(self, n, d, hp):
        b = _block(hp["window"])
        return blocked_memory(n, d, b, self._keys(n, hp), hp["globals"])
