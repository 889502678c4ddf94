"""Cached computations of the Variants lab (engine calls only; no layout here)."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import streamlit as st
from kit import queue
from kit.i18n import t

TRAINED_CHECKPOINT = "transformer-dates-sinusoidal"  # the "trained" input source
QUALITY_FILE = "variants-eval.json"  # written by python -m engine.evaluate variants --save
SWAP_MAX_TOKENS = 64  # every variant in all six layers, and their maps kept for the view


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
    layer: int = 0,
    upload: bytes | None = None,
):
    """(traces, rows) of the chosen variants and full attention on one input (queued).

    ``minilm``: Q/K/V of MiniLM ``layer``, head ``heads`` for ``text``; ``npz``: the
    uploaded file's q, k, v.
    """
    from state.transformer import translator

    model = translator(TRAINED_CHECKPOINT) if source == "trained" else None
    model = minilm() if source == "minilm" else model
    digest = hashlib.sha1(upload).hexdigest() if upload is not None else None
    args = (source, text, synthetic, names, params_json, causal, heads, d, layer)
    return queue.run(
        t("state.queue_variants"),
        _compare,
        model,
        *args,
        upload=upload,
        key=repr((*args, digest)),
    )


def _compare(tr, source, text, synthetic, names, params_json, causal, heads, d, layer, upload):
    from engine import kernels
    from engine.variants import compare as cmp
    from engine.variants import in_pretrained, inputs

    if source == "trained":
        from engine.models import transformer

        q, k, v, labels = transformer.layer_qkv(tr, text)
    elif source == "minilm":
        q, k, v, labels = in_pretrained.layer_qkv(tr, text, layer=layer, head=heads)
    elif source == "npz":
        q, k, v = in_pretrained.load_qkv_npz(upload)
        labels = [str(i) for i in range(q.shape[-2])]
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


def minilm():
    """all-MiniLM-L6-v2, loaded once per process (shared with the Transformer page)."""
    from engine.models import pretrained as hf
    from state.transformer import pretrained

    return pretrained(str(hf.minilm_path()), hf.MINILM)


def quality_path() -> Path:
    from engine import checkpoints

    return checkpoints.CHECKPOINT_DIR / QUALITY_FILE


def quality_results(path: Path | None = None) -> dict:
    """The shipped variant-quality results, or an InputError saying what is wrong."""
    from engine.text import InputError

    path = quality_path() if path is None else path
    try:
        data = _read_quality(str(path), path.stat().st_mtime)
    except FileNotFoundError:
        raise InputError(t("variants.quality_missing", path=path.name)) from None
    except (ValueError, KeyError, TypeError):
        raise InputError(t("variants.quality_corrupt", path=path.name)) from None
    return data


@st.cache_data(max_entries=4, show_spinner=False)
def _read_quality(path: str, mtime: float) -> dict:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    for key in ("cells", "table", "lra_published", "tasks"):
        if not isinstance(data[key], list | dict):
            raise ValueError(key)
    for row in data["table"].values():
        for cell in row.values():
            float(cell["mean"]), float(cell["spread"]), float(cell["ms_per_step"])
    return data


def quality_rows(data: dict) -> list[dict]:
    """One row per variant × task: accuracy over seeds, cost, LRA's published figure."""
    lra = data["lra_published"]["average_accuracy"]
    flops = {(c["variant"], c["task"]): c["attention_flops_per_layer"] for c in data["cells"]}
    rows = []
    for variant, tasks in data["table"].items():
        for task, cell in tasks.items():
            accs = [
                c["accuracy"] for c in data["cells"] if (c["variant"], c["task"]) == (variant, task)
            ]
            rows.append(
                {
                    "variant": variant,
                    "task": task,
                    "accuracy": float(cell["mean"]),
                    "spread": float(cell["spread"]),
                    "min": min(accs, default=cell["mean"]),
                    "max": max(accs, default=cell["mean"]),
                    "seeds": len(cell["seeds"]),
                    "ms_per_step": float(cell["ms_per_step"]),
                    "peak_rss_mib": float(cell["peak_rss_mib"]),
                    "flops": float(flops.get((variant, task), 0.0)),
                    "lra_published": float(lra.get(variant, float("nan"))),
                }
            )
    return rows


@st.cache_data(max_entries=64, show_spinner=False)
def quality_trace(task: str, variant: str, seed: int):
    """One trained cell on its task's first test example (a Trace)."""
    from engine.variants.quality import trained_trace

    return trained_trace(task, variant, seed)


def swap(text: str, names: tuple, budgets_json: str) -> dict:
    """Every chosen variant in every MiniLM layer on ``text`` (queued)."""
    model = minilm()
    args = (text, names, budgets_json)
    return queue.run(t("variants.queue_swap"), _swap, model, *args, key=repr(args))


def _swap(m, text: str, names: tuple, budgets_json: str) -> dict:
    from engine.models import pretrained as hf
    from engine.text import InputError
    from engine.variants import in_pretrained

    if text.strip() and len(text) <= hf.MAX_CHARS:
        n = len(m.tokenizer(text)["input_ids"])
        if n > SWAP_MAX_TOKENS:
            raise InputError(t("variants.swap_too_long", n=n, limit=SWAP_MAX_TOKENS))
    return in_pretrained.swap(m, text, names, json.loads(budgets_json))


@st.cache_data(max_entries=64, show_spinner=False)
def swap_token_count(text: str) -> int:
    """MiniLM tokens of ``text`` ([CLS] and [SEP] included), for the budgets' defaults."""
    from engine.models import pretrained as hf

    if len(text) > hf.MAX_CHARS:
        return 0
    return len(minilm().tokenizer(text)["input_ids"])


@st.cache_data(max_entries=4, show_spinner=False)
def npz_length(data: bytes) -> int:
    """N of an uploaded q, k, v file, or the InputError that says what is wrong with it."""
    from engine.variants.in_pretrained import load_qkv_npz

    return int(load_qkv_npz(data)[0].shape[-2])
