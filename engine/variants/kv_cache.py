"""KV-cache decoding: generate token by token, with and without a cache, and the variant.

At step t a decoder needs q_t and the keys/values of positions 0…t. Without a cache it
re-projects the whole prefix (K = X_{≤t} W_K, V = X_{≤t} W_V) at every step: Σ_t O(t·d_model·d)
= O(n²·d_model·d) for n tokens. With a cache it projects only x_t, appends k_t, v_t to
preallocated buffers and attends q_t against them: O(d_model·d + t·d) per token. For one
layer that re-projection is all a cache saves; in an L-layer model every lower layer's
prefix would be recomputed too, so the saving there is larger.

As a variant (``KVCache``): causal attention computed one token at a time, step t
attending q_t to the cached k_0…k_t, v_0…v_t (:func:`cached_decode`): O(t·d) per token,
O(n²·d) for all n tokens, an O(n·d) cache instead of an n × n map. Both paths attend
through engine.kernels.decode_step and must reproduce full causal attention exactly;
the map rows are exp(s_ij − lse_i).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from engine import gate, kernels
from engine.errors import InputError
from engine.masks import softmax_from_lse
from engine.params import Param
from engine.variants.base import FLOAT_BYTES, SEED, Output, Variant, dense_pattern

LENGTH_LIMIT = 512


def cached_decode(q, k, v):
    """Causal attention as n decoding steps against a growing cache → ``(out, lse)``.

    ``q, k, v [B, H, n, D]``; the cache is a preallocated ``[B, H, n, D]`` buffer whose
    first t + 1 rows are visible at step t (a slice, not a copy).
    """
    B, H, n, D = q.shape
    k_cache, v_cache = torch.empty_like(k), torch.empty_like(v)
    out, lse = torch.empty_like(q), q.new_empty(B, H, n)
    for t in range(n):
        k_cache[:, :, t], v_cache[:, :, t] = k[:, :, t], v[:, :, t]
        o, l = kernels.decode_step(
            q[:, :, t : t + 1], k_cache[:, :, : t + 1], v_cache[:, :, : t + 1]
        )
        out[:, :, t], lse[:, :, t] = o[:, :, 0], l[:, :, 0]
    return out, lse


@dataclass
class DecodeRun:
    """Per-token seconds and outputs of one generation, with or without the cache."""

    step_seconds: list[float]
    outputs: torch.Tensor  # (B, H, n, D)


D_MODEL, HEADS = 256, 4  # the demonstration's layer (the Variants lab says so)
# What a caller may ask of that layer (d_model divisible by heads: SeededLayer says so)
LAYER = (
    Param("d_model", "d_model", D_MODEL, 2, 1024),
    Param("heads", "Heads", HEADS, 1, 64),
    SEED,
)


class SeededLayer:
    """One untrained, seeded attention layer: x ``[B, n, d_model]`` → per-head q, k, v."""

    def __init__(self, d_model: int = D_MODEL, heads: int = HEADS, seed: int = 0):
        if d_model % heads:
            raise InputError("kv_cache.heads", d_model=d_model, heads=heads)
        g = torch.Generator().manual_seed(seed)
        self.h, self.d = heads, d_model // heads
        self.W = torch.randn(3, d_model, d_model, generator=g) / d_model**0.5  # W_Q, W_K, W_V

    def project(self, x: torch.Tensor, which: int) -> torch.Tensor:
        B, n, _ = x.shape
        return (x @ self.W[which]).view(B, n, self.h, self.d).transpose(1, 2)  # (B, h, n, d)


def generate(layer: SeededLayer, x: torch.Tensor, *, use_cache: bool) -> DecodeRun:
    """Decode every position of ``x [B, n, d_model]`` one step at a time, timing each step."""
    B, n, _ = x.shape
    outputs = x.new_empty(B, layer.h, n, layer.d)
    if use_cache:
        k_cache = x.new_empty(B, layer.h, n, layer.d)
        v_cache = torch.empty_like(k_cache)
    times = []
    for t in range(n):
        t0 = time.perf_counter()
        q_t = layer.project(x[:, t : t + 1], 0)
        if use_cache:
            k_cache[:, :, t : t + 1] = layer.project(x[:, t : t + 1], 1)
            v_cache[:, :, t : t + 1] = layer.project(x[:, t : t + 1], 2)
            k_seen, v_seen = k_cache[:, :, : t + 1], v_cache[:, :, : t + 1]
        else:  # re-project the whole prefix, as a loop without a cache must
            k_seen, v_seen = layer.project(x[:, : t + 1], 1), layer.project(x[:, : t + 1], 2)
        o, _ = kernels.decode_step(q_t, k_seen, v_seen)
        outputs[:, :, t] = o[:, :, 0]
        times.append(time.perf_counter() - t0)
    return DecodeRun(times, outputs)


REPEATS = 3  # each way decoded this many times, interleaved; a step's time is the fastest


def compare(n: int, *, d_model: int = D_MODEL, heads: int = HEADS, seed: int = 0) -> dict:
    """Generate n tokens both ways: per-token times, speedup and agreement with full attention.

    A step's time is the fastest of ``REPEATS`` runs of each way, taken in turn. Timed
    once, a step that met a pause of the machine (another session, the chat model loading)
    drew an 80 ms spike over steps of 0.1–1 ms: the chart's scale was the spike's, and the
    no-cache line's linear growth, what the chart is for, lay flat along its floor. The
    median of three still left 25 spikes in 256 steps on a busy machine (two slow runs of
    three); the fastest left 1. A pause only ever adds time, so the least is the step's own
    cost (the timeit module's advice: "the min() of the result is probably the only number
    you should be interested in")."""
    n = gate.within(n, 1, LENGTH_LIMIT, "kv_cache.length", limit=LENGTH_LIMIT, n=n)
    d_model, heads, seed = (p.check(x) for p, x in zip(LAYER, (d_model, heads, seed), strict=True))
    layer = SeededLayer(d_model, heads, seed)
    x = torch.randn(1, n, d_model, generator=torch.Generator().manual_seed(seed + 1))
    runs = [[generate(layer, x, use_cache=c) for c in (True, False)] for _ in range(REPEATS)]
    with_cache, without = runs[0]  # the outputs are the same in every run
    step_cache, step_no_cache = (
        torch.tensor([run[way].step_seconds for run in runs]).amin(0).tolist() for way in (0, 1)
    )
    q, k, v = (layer.project(x, i) for i in range(3))
    full, _ = kernels.attention(q, k, v, causal=True)
    return {
        "n": n,
        "repeats": REPEATS,
        "step_seconds_cache": step_cache,
        "step_seconds_no_cache": step_no_cache,
        "total_cache_s": sum(step_cache),
        "total_no_cache_s": sum(step_no_cache),
        "speedup": sum(step_no_cache) / max(sum(step_cache), 1e-12),
        "max_abs_diff_cache_vs_full": float((with_cache.outputs - full).abs().max()),
        "max_abs_diff_no_cache_vs_full": float((without.outputs - full).abs().max()),
    }


class KVCache(Variant):
    name = "kv_cache"
    not_in_grid = "full causal attention decoded one token at a time: the numbers of full"
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
        p = softmax_from_lse(q, k, lse, causal=True).to(q.dtype)
        return Output(
            out, p, dense_pattern(q.shape[-2], True), notes=["Decoding is causal by construction."]
        )

    def flops(self, n, d, hp):
        return 2.0 * n * n * d + 2.5 * n * n

    def memory(self, n, d, hp):
        return 2.0 * n * d * FLOAT_BYTES
