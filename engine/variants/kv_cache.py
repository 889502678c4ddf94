"""KV-cache decoding as a variant: causal attention computed one token at a time.

Step t attends q_t to the cached k_0…k_t, v_0…v_t (engine.kv_cache.cached_decode):
O(t·d) per token, O(n²·d) for all n tokens, and an O(n·d) cache instead of an n × n
map. Exact: it equals full causal attention; the map rows are exp(s_ij − lse_i).
"""

from __future__ import annotations

import torch

from engine.kv_cache import cached_decode
from engine.variants.base import FLOAT_BYTES, Output, Variant, dense_pattern, dense_scores


class KVCache(Variant):
    name = "kv_cache"
    title = "KV-cache decoding"
    paper = "Autoregressive decoding with cached keys and values (e.g. Pope et al. 2022)"
    time_complexity = "O(t·d) per token, O(n²·d) for n"
    memory_complexity = "O(n·d)"
    causal_support = "always"
    map_note = "Exact causal weights, one decoding step per row."

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        out, lse = cached_decode(q, k, v)
        if not want_map:
            return Output(out)
        p = torch.exp(dense_scores(q, k, True) - lse[..., None])
        return Output(
            out, p, dense_pattern(q.shape[-2], True), notes=["Decoding is causal by construction."]
        )

    def flops(self, n, d, hp):
        return 2.0 * n * n * d + 2.5 * n * n

    def memory(self, n, d, hp):
        return 2.0 * n * d * FLOAT_BYTES
