"""INT8 attention (SageAttention-style, or the naive per-tensor INT8 for contrast).

See engine/quantization.py for the scheme. Still a full n × n attention: time O(n²·d)
with 8-bit Q Kᵀ, memory O(n²). The map is exact: the softmax of the dequantised scores.
"""

from __future__ import annotations

from engine.quantization import int8_attention
from engine.variants.base import FLOAT_BYTES, Output, Param, Variant, dense_pattern


class Int8(Variant):
    name = "int8"
    title = "INT8 (SageAttention)"
    paper = "Zhang et al. 2025, SageAttention: Accurate 8-bit Attention"
    time_complexity = "O(n²·d)"
    memory_complexity = "O(n²)"
    params = (
        Param(
            "scheme",
            "quantisation",
            "sage",
            choices=("sage", "naive"),
            help="sage: smoothed K, per-block scales; naive: one scale per tensor",
        ),
        Param("block", "quantisation block (tokens)", 64, 1, 1024),
    )
    map_note = "Softmax of the dequantised INT8 scores."

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        out, p = int8_attention(q, k, v, scheme=hp["scheme"], block=hp["block"], causal=causal)
        if not want_map:
            return Output(out)
        return Output(out, p, dense_pattern(q.shape[-2], causal))

    def flops(self, n, d, hp):
        return 4.0 * n * n * d + 8.0 * n * n + 6.0 * n * d

    def memory(self, n, d, hp):
        return 3.0 * n * n * FLOAT_BYTES  # integer scores, dequantised scores, weights
