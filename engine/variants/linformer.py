"""Linformer (Wang et al. 2020): attention through a k-row projection of keys and values.

head = softmax(Q (E K)ᵀ / √d) (F V), with E = F ∈ ℝ^{k×n}. The paper learns E; it also
names mean pooling with kernel and stride n/k as a projection choice (§4), which is
what this untrained lab uses, so k = n recovers full attention exactly. Segments may
differ in size by one when k does not divide n; adding log|segment| to each pooled
score keeps every segment weighted by the tokens it stands for.

The output is softmax attention of the n queries over the k pooled keys, so it runs on
torch's fused attention kernel (log|segment| as an additive bias when segments differ),
the n × k scores never held; pooling is O(n·d). The map, when asked for, is formed.

Implied map: P·E (n × n), the weight the pooled key carries spread over its segment.
Time O(n·k·d), memory O(k·d) beyond the inputs and output: linear in n for a fixed k.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from engine.errors import InputError
from engine.masks import masked_softmax
from engine.variants.base import FLOAT_BYTES, Output, Param, Variant, default_scale


def pooling_matrix(n: int, k: int) -> torch.Tensor:
    """E ``[k, n]``: row l averages the l-th of k near-equal contiguous segments."""
    seg = torch.div(torch.arange(n) * k, n, rounding_mode="floor")  # segment of each token
    E = torch.zeros(k, n)
    E[seg, torch.arange(n)] = 1.0
    return E / E.sum(dim=1, keepdim=True)


def pool(x: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """E x without E: the mean of each of the k segments of ``x [B, H, n, D]`` in O(n·d),
    and the segment sizes ``[k]``."""
    n = x.shape[-2]
    if n % k == 0:
        return x.unflatten(-2, (k, n // k)).mean(dim=-2), torch.full((k,), n // k)
    seg = torch.div(torch.arange(n, device=x.device) * k, n, rounding_mode="floor")
    size = torch.bincount(seg, minlength=k)
    sums = x.new_zeros(*x.shape[:-2], k, x.shape[-1]).index_add_(-2, seg, x)
    return sums / size.to(x.dtype)[:, None], size


class Linformer(Variant):
    name = "linformer"
    lra_average = 51.36
    grid_budget = {"k": 32}
    swappable = True
    title = "Linformer"
    paper = "Wang et al. 2020, Linformer: Self-Attention with Linear Complexity"
    time_complexity = "O(n·k·d)"
    memory_complexity = "O(k·d)"
    params = (
        Param(
            "k", "projected length k", 32, 1, 4096, help="rows of E = F; k = n is full attention"
        ),
    )
    map_exact = False
    map_implied = True
    map_note = "Implied map P·E: pooled-key weights spread over their segments."
    causal_support = "never"

    def check_length(self, n, hp):
        if hp["k"] > n:
            raise InputError("linformer.k_over_n", n=n, k=hp["k"])

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        n, kk = q.shape[-2], hp["k"]
        if not want_map:
            (k_proj, size), (v_proj, _) = pool(k, kk), pool(v, kk)
            # Equal segments add the same log|segment| to every score: it cancels.
            bias = None if n % kk == 0 else size.log().to(q)[None, :]
            return Output(F.scaled_dot_product_attention(q, k_proj, v_proj, attn_mask=bias))
        E = pooling_matrix(n, kk).to(q.dtype)  # (k, n)
        k_proj, v_proj = E @ k, E @ v  # (B, H, k, D)
        size = (E > 0).sum(dim=1).to(q.dtype)  # tokens per segment
        s = (q @ k_proj.transpose(-2, -1)) * default_scale(q.shape[-1]) + size.log()
        P = masked_softmax(s)  # (B, H, n, k)
        out = P @ v_proj
        # out = P (E V) = (P E) V, so P·E is the map the output actually used.
        return Output(out, P @ E)

    def pretrained_budget(self, n):  # about half of an n-token text's keys
        return {"k": max(1, n // 2)}

    def cache_bytes(self, n, d, heads, hp=None):
        """the k pooled keys and values (bidirectional: no decoding form)"""
        hp = self.resolve(hp)
        return super().cache_bytes(min(n, hp["k"]), d, heads)

    def flops(self, n, d, hp):
        kk = hp["k"]
        return 2.0 * 2 * n * d + 4.0 * n * kk * d + 5.0 * n * kk  # pooling, QKᵀ and PV, softmax

    def memory(self, n, d, hp):
        kk = hp["k"]
        # The pooled keys and values; the fused kernel's score tiles are bounded.
        return 2.0 * kk * d * FLOAT_BYTES + min(n * kk, 256 * 512) * FLOAT_BYTES
