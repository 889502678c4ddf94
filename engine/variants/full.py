"""Full softmax attention (Vaswani et al. 2017): the reference every variant is compared to.

Attention(Q, K, V) = softmax(Q Kᵀ / √d) V. Its map is the N × N matrix α, O(N²) memory,
the cost the efficient variants exist to avoid; the cost profile measures the run that
holds it (``profile_map``). The output alone comes from torch's fused kernel through
engine.kernels (no slower than scaled_dot_product_attention), and the map, when asked
for, is filled a block of query rows at a time from that kernel's log-sum-exp:
α_ij = exp(s_ij − lse_i), one exp per entry.
"""

from __future__ import annotations

import torch

from engine import kernels
from engine.kernels.reference import attention_probabilities
from engine.variants.base import FLOAT_BYTES, Output, Variant, dense_pattern


class Full(Variant):
    name = "full"
    lra_average = 54.39
    swappable = True
    title = "Full attention"
    paper = "Vaswani et al. 2017, Attention Is All You Need"
    time_complexity = "O(n²·d)"
    memory_complexity = "O(n²)"
    map_note = "softmax(QKᵀ/√d), the reference."
    # The lab's cost profile of full attention is the cost of holding its n × n map.
    profile_map = True

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        out, lse = kernels.attention(q, k, v, causal=causal)
        if not want_map:
            return Output(out)
        p = attention_probabilities(q, k, lse, causal=causal)  # (B, H, n, n)
        n = q.shape[-2]
        # "Every key" as a broadcast view: n² bytes of True would add a quarter of the map.
        pattern = (
            dense_pattern(n, True) if causal else torch.ones((), dtype=torch.bool).expand(n, n)
        )
        return Output(out, p, pattern)

    def flops(self, n, d, hp):
        return 4.0 * n * n * d + 5.0 * n * n  # QKᵀ and PV (2 flops per MAC) + softmax

    def memory(self, n, d, hp):
        # The map, computed in place (the fused kernel's tiles are not held).
        return 1.0 * n * n * FLOAT_BYTES
