"""Cached computations of the Variants lab (engine calls only; no layout here).

The trained-Transformer input goes through :func:`trained_qkv` and :func:`trained_translation`
only, so the page never names the module that plugs a variant into the model.
"""

from __future__ import annotations

import json
import time

import streamlit as st

TRAINED_CHECKPOINT = "transformer-dates-sinusoidal"


def trained_available() -> bool:
    from engine.variants import swap

    return swap.available(TRAINED_CHECKPOINT)


def trained_max_length() -> int:
    from engine.variants import swap

    return swap.max_length(TRAINED_CHECKPOINT)


def trained_qkv(text: str):
    """q, k, v and labels of the trained dates Transformer's first encoder layer."""
    from engine.variants import swap

    return swap.layer_qkv(text, TRAINED_CHECKPOINT)


def trained_translation(text: str, variant: str, hp: dict | None = None) -> str:
    """The trained Transformer's translation with ``variant`` in every encoder layer."""
    from engine.variants import swap

    return swap.translate(text, variant, hp, name=TRAINED_CHECKPOINT)


@st.cache_data(max_entries=8, show_spinner=False)
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
    """(traces, rows) of the chosen variants and full attention on one input."""
    from engine.variants import compare as cmp
    from engine.variants import inputs

    if source == "trained":
        q, k, v, labels = trained_qkv(text)
    elif source == "text":
        q, k, v, labels = inputs.text_layer(text, heads=heads, d=d)
    else:
        n, structure, sharpness, seed = synthetic
        q, k, v, labels = inputs.synthetic(
            n, d, heads, structure=structure, sharpness=sharpness, seed=seed
        )
    params = json.loads(params_json)
    traces, rows = cmp.run_all(list(names), q, k, v, labels, causal=causal, params=params)
    if source == "trained":
        reference = trained_translation(text, "full")
        for row in rows:
            row["translation"] = trained_translation(
                text, row["variant"], params.get(row["variant"])
            )
            row["same_as_full"] = row["translation"] == reference
    return traces, rows


@st.cache_data(max_entries=4, show_spinner=False)
def pooled_map(n: int, structure: str, reduce: str):
    """Pooled map, block, seconds, measured peak bytes and the path that ran."""
    from engine import kernels, profile
    from engine.variants.inputs import long_qk

    q, k = long_qk(n, structure=structure)
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
    return pooled.numpy(), block, seconds, peak, kernels.active_path(q.device)


@st.cache_data(max_entries=4, show_spinner=False)
def kv_compare(n: int):
    from engine import kv_cache, profile  # core helper: engine.variants.kv_cache

    with profile.single_thread():
        return kv_cache.compare(n)


@st.cache_data(max_entries=8, show_spinner=False)
def int8_rows(n: int, d: int, outlier: float, block: int, seed: int) -> list[dict]:
    """Cosine / relative L1 of SageAttention-style and naive INT8 against fp32."""
    import torch

    from engine import kernels
    from engine.quantization import int8_attention, output_agreement  # → engine.variants.int8
    from engine.variants.inputs import synthetic

    q, k, v, _ = synthetic(n, d, 2, structure="random", seed=seed)
    k = k + torch.linspace(0, outlier, d)  # a per-channel bias shared by every token
    ref, _ = kernels.attention(q, k, v)  # exact fp32 attention, the reference
    rows = []
    for scheme in ("sage", "naive"):
        out, _ = int8_attention(q, k, v, scheme=scheme, block=block)
        rows.append({"scheme": scheme, **output_agreement(out, ref)})
    return rows


def kv_length_limit() -> int:
    from engine.kv_cache import LENGTH_LIMIT  # core helper: engine.variants.kv_cache

    return LENGTH_LIMIT
