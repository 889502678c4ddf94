"""Full softmax attention (Vaswani et al. 2017): the reference every variant is compared to.

Attention(Q, K, V) = softmax(Q Kᵀ / √d) V, with the N × N map materialised: O(N²·d) time
and O(N²) memory, the cost the efficient variants exist to avoid.
"""

from __future__ import annotations

import torch

from engine.attention import scaled_dot_product_attention
from engine.variants.base import FLOAT_BYTES, Output, Variant, default_scale


class Full(Variant):
    name = "full"
    title = "Full attention"
    paper = "Vaswani et al. 2017, Attention Is All You Need"
    time_complexity = "O(n²·d)"
    memory_complexity = "O(n²)"
    map_note = "softmax(QKᵀ/√d), the reference."

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        out, weights = scaled_dot_product_attention(
            q, k, v, causal=causal, scale=default_scale(q.shape[-1])
        )
        pattern = torch.ones(q.shape[-2], q.shape[-2], dtype=torch.bool)
        if causal:
            pattern = pattern.tril()
        return Output(out, weights if want_map else None, pattern if want_map else None)

    def flops(self, n, d, hp):
        return 4.0 * n * n * d + 5.0 * n * n  # QKᵀ and PV (2 flops per MAC) + softmax

    def memory(self, n, d, hp):
        return 3.0 * n * n * FLOAT_BYTES  # scores, exp and normalised weights co-exist
