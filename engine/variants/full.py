"""Full softmax attention (Vaswani et al. 2017): the reference every variant is compared to.

Attention(Q, K, V) = softmax(Q Kᵀ / √d) V, with the N × N map materialised: O(N²·d) time
and O(N²) memory, the cost the efficient variants exist to avoid. The map is filled a
block of query rows at a time, each block's softmax computed in place while it is still
in cache (tests check the result against engine.attention's scaled_dot_product_attention).
"""

from __future__ import annotations

import torch

from engine.variants.base import FLOAT_BYTES, Output, Variant, default_scale, dense_pattern

ROWS = 128  # query rows per block: K is read n/128 times; a block of scores stays in cache


class Full(Variant):
    name = "full"
    title = "Full attention"
    paper = "Vaswani et al. 2017, Attention Is All You Need"
    time_complexity = "O(n²·d)"
    memory_complexity = "O(n²)"
    map_note = "softmax(QKᵀ/√d), the reference."

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        B, H, n, D = q.shape
        p = q.new_empty(B, H, n, n)  # the n × n map, materialised: O(n²) memory by design
        out = torch.empty_like(q)
        kt, rows = k.transpose(-2, -1), ROWS
        training = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))
        for r0 in range(0, n, rows):
            # One block of query rows at a time: its scores stay in cache through the
            # softmax passes and are written to the map once.
            s = (q[:, :, r0 : r0 + rows] * default_scale(D)) @ kt  # s_ij (B, H, rows, n)
            if causal:
                i = torch.arange(r0, r0 + s.shape[-2])[:, None]
                s.masked_fill_(torch.arange(n)[None, :] > i, float("-inf"))
            if training:  # autograd keeps exp's output, so no softmax in place
                s = torch.softmax(s, dim=-1)
            else:
                s.sub_(s.amax(dim=-1, keepdim=True)).exp_()
                s.div_(s.sum(dim=-1, keepdim=True))  # α_ij = softmax_j(s_ij), in place
            out[:, :, r0 : r0 + rows] = s @ v
            p[:, :, r0 : r0 + rows] = s
        if not want_map:
            return Output(out)
        return Output(out, p, dense_pattern(n, causal))

    def flops(self, n, d, hp):
        return 4.0 * n * n * d + 5.0 * n * n  # QKᵀ and PV (2 flops per MAC) + softmax

    def memory(self, n, d, hp):
        return (1.0 * n * n + 2.0 * ROWS * n) * FLOAT_BYTES  # the map + one block of scores
