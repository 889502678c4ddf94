"""Full softmax attention (Vaswani et al. 2017): the reference every variant is compared to.

Attention(Q, K, V) = softmax(Q Kᵀ / √d) V, with the N × N map materialised: O(N²·d) time
and O(N²) memory, the cost the efficient variants exist to avoid. The softmax runs in
place on the score buffer (tests check it against engine.attention's
scaled_dot_product_attention), so that one n × n buffer is all it holds.
"""

from __future__ import annotations

from engine.variants.base import FLOAT_BYTES, Output, Variant, default_scale, dense_pattern


class Full(Variant):
    name = "full"
    title = "Full attention"
    paper = "Vaswani et al. 2017, Attention Is All You Need"
    time_complexity = "O(n²·d)"
    memory_complexity = "O(n²)"
    map_note = "softmax(QKᵀ/√d), the reference."

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        n = q.shape[-2]
        p = (q * default_scale(q.shape[-1])) @ k.transpose(-2, -1)  # scores s_ij (B, H, n, n)
        if causal:
            p.masked_fill_(~dense_pattern(n, True), float("-inf"))
        # softmax in place, so that the one n × n buffer is the whole working set
        p.sub_(p.amax(dim=-1, keepdim=True)).exp_()
        p.div_(p.sum(dim=-1, keepdim=True))
        out = p @ v
        if not want_map:
            return Output(out)
        return Output(out, p, dense_pattern(n, causal))

    def flops(self, n, d, hp):
        return 4.0 * n * n * d + 5.0 * n * n  # QKᵀ and PV (2 flops per MAC) + softmax

    def memory(self, n, d, hp):
        return 1.0 * n * n * FLOAT_BYTES  # one n × n buffer: scores, then weights in place
