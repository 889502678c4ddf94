"""Cached computations of the Variants lab (engine calls only; no layout here)."""

from __future__ import annotations

import json
import time

import streamlit as st
from kit import queue
from kit.i18n import t

TRAINED_CHECKPOINT = "transformer-dates-sinusoidal"  # the "trained" input source


def trained_available() -> bool:
    from engine import checkpoints

    return TRAINED_CHECKPOINT in checkpoints.available("transformer-dates")


def trained_max_length() -> int:
    from state.transformer import translator

    return translator(TRAINED_CHECKPOINT).max_src


def compare(
    source: str,
    text: str,
    synthetic: tuple,
    names: tuple,
    params_json: str,
    causal: bool,
    heads: int,
    d: int,
):
    """(traces, rows) of the chosen variants and full attention on one input (queued)."""
    from state.transformer import translator

    tr = translator(TRAINED_CHECKPOINT) if source == "trained" else None
    args = (source, text, synthetic, names, params_json, causal, heads, d)
    return queue.run(t("state.queue_variants"), _compare, tr, *args, key=repr(args))


def _compare(tr, source, text, synthetic, names, params_json, causal, heads, d):
    from engine import kernels
    from engine.variants import compare as cmp
    from engine.variants import inputs

    if source == "trained":
        from engine.models import transformer

        q, k, v, labels = transformer.layer_qkv(tr, text)
    elif source == "text":
        q, k, v, labels = inputs.text_layer(text, heads=heads, d=d)
    else:
        n, structure, sharpness, seed = synthetic
        q, k, v, labels = inputs.synthetic(
            n, d, heads, structure=structure, sharpness=sharpness, seed=seed
        )
    params = json.loads(params_json)
    if source != "trained":  # the lab's own inputs run where the kernels are fastest
        device = kernels.default_device()
        q, k, v = q.to(device), k.to(device), v.to(device)
    traces, rows = cmp.run_all(list(names), q, k, v, labels, causal=causal, params=params)
    if source == "trained":
        reference = transformer.translate(tr, text, attend="full")
        for row in rows:
            name = row["variant"]
            row["translation"] = transformer.translate(
                tr, text, attend=name, attend_hp=params.get(name)
            )
            row["same_as_full"] = row["translation"] == reference
    return traces, rows


def pooled_map(n: int, structure: str, reduce: str):
    """Pooled map, block, seconds, measured peak bytes and the path that ran (queued)."""
    return queue.run(t("state.queue_long"), _pooled_map, n, structure, reduce)


def _pooled_map(n: int, structure: str, reduce: str):
    from engine import kernels, profile
    from engine.variants.inputs import long_qk

    q, k = (t.to(kernels.default_device()) for t in long_qk(n, structure=structure))
    cells = -(-n // 128)  # keys per cell for ≤ 128 cells a side …
    block = max(16, -(-cells // 16) * 16)  # … rounded up to the kernel's multiple of 16
    result = []
    profile.warm_tracker()
    with profile.single_thread():  # one run, timed and memory-tracked (a few hundred ops)
        t0 = time.perf_counter()
        peak = profile.peak_memory_bytes(
            lambda: result.append(kernels.pooled_attention_map(q, k, block=block, reduce=reduce))
        )
        seconds = time.perf_counter() - t0
    pooled = result[0]
    return pooled.cpu().numpy(), block, seconds, peak, kernels.active_path(q.device)


def sweep(picked: tuple, lengths: tuple, d: int, time_budget: float, budget: float):
    """(measured points and skips, stopped) of a cost sweep, queued; Stop keeps what ran."""
    return queue.run(
        t("state.queue_sweep"),
        _sweep,
        *(picked, lengths, d, time_budget, budget),
        cancel_label=t("state.stop_sweep"),
    )


def _sweep(picked, lengths, d, time_budget, budget, *, cancel, progress):
    from engine import profile

    items, total = [], max(1, len(picked) * len(lengths))
    points = profile.sweep(
        list(picked), list(lengths), d=d, time_budget_s=time_budget, memory_budget=budget
    )
    for item in points:
        items.append(item)
        progress(len(items), total, f"{item.variant} at n = {item.n}")
        if cancel.is_set():
            break
    return items, cancel.is_set()


def kv_compare(n: int):
    return queue.run(t("state.queue_kv"), _kv_compare, n)


def _kv_compare(n: int):
    from engine import profile
    from engine.variants import kv_cache

    with profile.single_thread():
        return kv_cache.compare(n)


@st.cache_data(max_entries=8, show_spinner=False)
def int8_rows(n: int, d: int, outlier: float, block: int, seed: int) -> list[dict]:
    """Cosine / relative L1 of SageAttention-style and naive INT8 against fp32."""
    import torch

    from engine import kernels
    from engine.variants.inputs import synthetic
    from engine.variants.int8 import int8_attention, output_agreement

    q, k, v, _ = synthetic(n, d, 2, structure="random", seed=seed)
    k = k + torch.linspace(0, outlier, d)  # a per-channel bias shared by every token
    ref, _ = kernels.attention(q, k, v)
    rows = []
    for scheme in ("sage", "naive"):
        out, _ = int8_attention(q, k, v, scheme=scheme, block=block)
        rows.append({"scheme": scheme, **output_agreement(out, ref)})
    return rows


def kv_length_limit() -> int:
    from engine.variants.kv_cache import LENGTH_LIMIT

    return LENGTH_LIMIT
