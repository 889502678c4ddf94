"""Full softmax attention (Vaswani et al. 2017): the reference every variant is compared to.

Attention(Q, K, V) = softmax(Q Kᵀ / √d) V, with the N × N map materialised: O(N²·d) time
and O(N²) memory, the cost the efficient variants exist to avoid.
"""

from __future__ import annotations

from engine.attention import scaled_dot_product_attention
from engine.variants.base import FLOAT_BYTES, Output, Variant, default_scale, dense_pattern


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
        if not want_map:
            return Output(out)
        return Output(out, weights, dense_pattern(q.shape[-2], causal))

    def flops(self, n, d, hp):
        return 4.0 * n * n * d + 5.0 * n * n  # QKᵀ and PV (2 flops per MAC) + softmax

    def memory(self, n, d, hp):
        return 2.0 * n * n * FLOAT_BYTES  # scores and softmax weights co-exist
