"""FlashAttention (Dao et al. 2022; Dao 2023): exact attention without the n × n matrix.

Scores are computed tile by tile with an online softmax (running max m_i and sum l_i),
so only O(n·d) memory is held, and the result is exact: out = softmax(QKᵀ/√d) V.
Runs engine.kernels.attention: the Triton kernel on a GPU, torch's fused FlashAttention-2
kernel on a CPU. The map is exact too: p_ij = exp(s_ij − lse_i) from
the kernel's log-sum-exp.
"""

from __future__ import annotations

from engine import kernels
from engine.kernels.reference import attention_probabilities
from engine.messages import Message
from engine.variants.base import FLOAT_BYTES, Output, Variant, dense_pattern

TILE_BYTES = 256 * 512 * FLOAT_BYTES  # torch's CPU kernel: ≤ 256 query × 512 key scores


class Flash(Variant):
    name = "flash"
    swappable = True
    title = "FlashAttention (tiled, exact)"
    paper = "Dao et al. 2022, FlashAttention; Dao 2023, FlashAttention-2"
    time_complexity = "O(n²·d)"
    memory_complexity = "O(n·d)"
    map_note = "Exact: exp(s_ij − lse_i) from the kernel's log-sum-exp."

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        out, lse = kernels.attention(q, k, v, causal=causal)
        if not want_map:
            return Output(out)
        p = attention_probabilities(q, k, lse, causal=causal)  # blockwise, one exp per entry
        return Output(
            out,
            p,
            dense_pattern(q.shape[-2], causal),
            notes=[Message("note.kernel_path", path=kernels.active_path(q.device))],
        )

    def flops(self, n, d, hp):
        return 4.0 * n * n * d + 5.0 * n * n

    def memory(self, n, d, hp):
        # The fused kernel's tiles (inside one op, unseen by the profile's tracker) and the
        # output; the chunked fallback would hold up to two chunks of CHUNK_BYTES.
        return min(2.0 * n * n * FLOAT_BYTES, 2.0 * TILE_BYTES) + 4.0 * n * d * FLOAT_BYTES
