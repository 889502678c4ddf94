"""Sigmoid attention (Ramapuram et al., ICLR 2025, "Theory, Analysis, and Best Practices
for Sigmoid Self-Attention"): an element-wise sigmoid in place of the row softmax,

    SigmoidAttn(X) = σ(Q Kᵀ/√d + b) V,    b = −log n                          (§3)

Each weight α_ij = σ(s_ij − log n) ∈ (0, 1) is a gate of its own: no row is normalised,
so a row sums to anything in (0, n) and keys do not compete for one unit of mass. The
bias b = −log n keeps that sum of order 1 at the start of training (for small scores
σ(s − log n) ≈ e^s / n, the softmax's numerator over n); the paper finds that without it
training is unstable. The map is exact (what multiplies V) and not a distribution.

Computed a block of query rows at a time (the scores of one block, not the n × n map,
are held when the map is not asked for), the way FlashSigmoid tiles it.
"""

from __future__ import annotations

import math

import torch

from engine.masks import causal_mask
from engine.variants.base import FLOAT_BYTES, Output, Variant, default_scale, dense_pattern

BLOCK = 256  # query rows per block of scores


class Sigmoid(Variant):
    name = "sigmoid"
    title = "Sigmoid attention (b = −log n)"
    paper = "Ramapuram et al. 2025, Theory, Analysis, and Best Practices for Sigmoid Self-Attention"
    time_complexity = "O(n²·d)"
    memory_complexity = "O(n·d)"
    map_normalized = False
    approximates_full = False  # a different attention (independent gates), not a stand-in
    map_note = (
        "Exact element-wise weights σ(QKᵀ/√d − log n), each in (0, 1): not a softmax, rows "
        "are not normalised and need not sum to 1."
    )
    needs_training = "llm_variant.why_sigmoid"
    messages = {
        "llm_variant.why_sigmoid": (
            "its weights are independent gates whose rows need not sum to 1, and this model's "
            "layers were trained to read rows that do; sigmoid-attention models are trained "
            "with it from the start."
        )
    }

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        n = q.shape[-2]
        scale, b = default_scale(q.shape[-1]), -math.log(n)
        allowed = causal_mask(n, n, device=q.device) if causal else None
        outs, maps = [], []
        for s in range(0, n, BLOCK):
            scores = (q[..., s : s + BLOCK, :] @ k.transpose(-2, -1)) * scale + b  # (B, H, blk, n)
            if causal:
                scores = scores.masked_fill(~allowed[s : s + BLOCK], float("-inf"))
            a = torch.sigmoid(scores)  # σ(−∞) = 0: a masked key gets no weight
            outs.append(a @ v)
            if want_map:
                maps.append(a)
        out = torch.cat(outs, dim=-2)
        if not want_map:
            return Output(out)
        return Output(out, torch.cat(maps, dim=-2), dense_pattern(n, causal))

    def flops(self, n, d, hp):
        return 4.0 * n * n * d + 4.0 * n * n  # QKᵀ and αV (2 flops per MAC) + bias, sigmoid

    def memory(self, n, d, hp):
        # One block of scores and its sigmoid.
        return 2.0 * min(n, BLOCK) * n * FLOAT_BYTES
