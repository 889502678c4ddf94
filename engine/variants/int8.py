"""INT8 attention (SageAttention-style, or the naive per-tensor INT8 for contrast).

See engine/quantization.py for the scheme. Still a full n × n attention: time O(n²·d)
with 8-bit Q Kᵀ, memory O(n²). The map is exact: the softmax of the dequantised scores.
"""

from __future__ import annotations

import torch

from engine.quantization import int8_attention
from engine.variants.base import FLOAT_BYTES, Output, Param, Variant


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
        pattern = torch.ones(q.shape[-2], q.shape[-2], dtype=torch.bool)
        pattern = pattern.tril() if causal else pattern
        return Output(out, p if want_map else None, pattern if want_map else None)

    def flops(self, n, d, hp):
        return 4.0 * n * n * d + 8.0 * n * n + 6.0 * n * d

    def memory(self, n, d, hp):
        return 4.0 * n * n * FLOAT_BYTES
