"""Grouped-query attention (Ainslie et al. 2023) and multi-query attention (Shazeer 2019).

H query heads share G key/value heads: query head h reads the keys and values of group
g(h) = ⌊h / (H/G)⌋. G = H is multi-head attention, G = 1 is multi-query attention. The
point is the decoding cache: it holds G instead of H key/value heads, so its bytes per
token shrink by H/G while every query head keeps its own map.

Here the input's H key/value heads are turned into G groups the way the GQA paper
uptrains a multi-head checkpoint (§2.1): the heads of each group are mean-pooled,

    K̄_g = mean_{h ∈ g} K_h,   V̄_g = mean_{h ∈ g} V_h,   out_h = softmax(Q_h K̄_gᵀ/√d) V̄_g

The maps are exact, one per query head, labelled with the group they read (``H3·g1``);
they multiply the pooled values, which ``Output.extra["values"]`` holds.
"""

from __future__ import annotations

import dataclasses

import torch

from engine import kernels
from engine.errors import InputError
from engine.kernels.reference import attention_probabilities
from engine.messages import Message
from engine.variants.base import FLOAT_BYTES, Output, Param, Variant, dense_pattern


def pool_groups(x: torch.Tensor, groups: int) -> torch.Tensor:
    """``[B, H, N, D]`` → ``[B, G, N, D]``: the mean of each group's H/G heads."""
    B, H, N, D = x.shape
    return x.view(B, groups, H // groups, N, D).mean(dim=2)


def expand_groups(x: torch.Tensor, heads: int) -> torch.Tensor:
    """``[B, G, N, D]`` → ``[B, H, N, D]``: group g repeated for each of its query heads."""
    return x.repeat_interleave(heads // x.shape[1], dim=1)


def cache_bytes_per_token(d: int, heads: int, groups: int, bytes_per: int = FLOAT_BYTES) -> int:
    """Key + value cache bytes one token adds per layer: 2·G·d numbers (MHA: 2·H·d)."""
    del heads  # the query heads cost no cache: that is the point
    return 2 * groups * d * bytes_per


class GQA(Variant):
    name = "gqa"
    grid_budget = {"groups": 1}  # MQA: both query heads read one pooled key/value head
    title = "GQA / MQA (shared key/value heads)"
    needs_training = "llm_variant.why_gqa"
    paper = "Ainslie et al. 2023, GQA; Shazeer 2019, Fast Transformer Decoding (MQA)"
    time_complexity = "O(n²·d)"
    memory_complexity = "O(n·d)"
    params = (
        Param(
            "groups",
            "key/value groups G",
            1,
            1,
            64,
            help="G must divide the heads H; G = 1 is MQA, G = H is multi-head attention",
        ),
    )
    map_note = (
        "Exact weights per query head, over the keys of its group (mean of its heads). "
        "Unlike a GQA model trained from scratch, which learns G key/value projections, "
        "each group's K and V here are the mean of its H/G heads (the GQA paper's "
        "uptraining step)."
    )

    def check_groups(self, heads: int, hp: dict) -> None:
        if heads % hp["groups"]:
            raise InputError("gqa.groups", groups=hp["groups"], heads=heads)

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        H = q.shape[1]
        self.check_groups(H, hp)
        G = hp["groups"]
        kg, vg = (expand_groups(pool_groups(t, G), H) for t in (k, v))
        out, lse = kernels.attention(q, kg, vg, causal=causal)
        notes = [Message("note.gqa_groups", groups=G, heads=H)]
        if not want_map:
            return Output(out, notes=notes)
        p = attention_probabilities(q, kg, lse, causal=causal)
        group = (torch.arange(H) // (H // G)).to(q.dtype)
        return Output(
            out,
            p,
            dense_pattern(q.shape[-2], causal),
            notes=notes,
            extra={"values": vg, "group": group},
        )

    def trace(self, q, k, v, **kw):
        """The Trace of the base class, its heads labelled with their group (``H3·g1``)."""
        tr = super().trace(q, k, v, **kw)
        H, G = q.shape[1], tr.inputs["params"]["groups"]
        amap = tr.maps["attention"]
        labels = [f"H{h}·g{h // (H // G)}" for h in range(H)]
        tr.maps["attention"] = dataclasses.replace(amap, head_labels=labels)
        return tr

    def flops(self, n, d, hp):
        # QKᵀ and PV (2 flops per MAC), softmax; the pooling is one add per k, v element.
        return 4.0 * n * n * d + 5.0 * n * n + 2.0 * n * d

    def memory(self, n, d, hp):
        # Without the map the fused kernel holds no n × n block: the pooled k, v and their
        # copies expanded to the query heads, lse (measured peak with the output: 6·n·d).
        return 5.0 * n * d * FLOAT_BYTES

    def cache_bytes_per_token(self, d: int, heads: int, hp: dict | None = None) -> int:
        """G key/value heads of every token read, shared by the H query heads"""
        hp = self.resolve(hp)
        return cache_bytes_per_token(d, heads, hp["groups"])
