"""Cached computations of the Variants lab (engine calls only; no layout here).

The models come from the registry (its default for a task, loaded once per process through
``state.models``); the shipped results through ``engine.models.variant_lm``; every long run
through ``kit.queue``. Pages get rows, Traces and AttentionMaps back, and draw them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import time

import numpy as np
import streamlit as st
from kit import queue
from kit.errors import PageError
from kit.i18n import DEFAULT, engine_text, language, param_label, t, variant_title

from engine import kernels, profile
from engine.errors import InputError
from engine.models import in_pretrained, registry
from engine.models import variant_lm as quality
from engine.trace import AttentionMap
from engine.variants import REGISTRY, inputs, int8, kv_cache
from engine.variants import compare as cmp
from state import models

# Long sequences' lengths offered, within the engine's (inputs.LONG_LENGTH_LIMITS; tested).
LONG_LENGTHS = (256, 1024, 2048, 4096, 8192, 16384, 32768)
SWAP_MAX_TOKENS = 64  # every variant in all six layers, and their maps kept for the view
FULL = "full (reference)"  # the reference Trace's name in compare's answer
SWEEP_KEY = "variants-sweep"  # this session's cost sweep: its request, items and status


_DETAIL = re.compile(r"\s*[(（].*$")  # a title's parenthesis: "Mamba (selective SSM)"


def variant_name(name: str) -> str:
    """How the lab's maps, legends and axes name a variant: in English its id (the name the
    English pages, tables and results use), in another language its translated title
    without the parenthesis; an id the registry lacks stays as it is."""
    if language() == DEFAULT or name not in REGISTRY:
        return name
    return _DETAIL.sub("", variant_title(REGISTRY[name]))


def trained_name() -> str | None:
    """The trained dates Transformer behind the "trained" input, or None when not shipped."""
    try:
        return models.default("dates", "transformer")
    except InputError:  # no model of that task is shipped here
        return None


def trained_max_length() -> int:
    return models.loaded(trained_name()).max_src


def date_warning(text: str):
    """What the dates Transformer says of ``text`` itself (not a date it can read, below its
    measured confidence), else None: the lab's table compares the variants' translations."""
    return models.trace(trained_name(), text).outputs.get("warning")


def minilm_config() -> dict:
    """MiniLM's layers and heads as its card states them (no model loaded)."""
    return models.card(models.default("sentence", "pretrained")).config


def minilm():
    """The pretrained sentence encoder (MiniLM), loaded once per process."""
    return models.loaded(models.default("sentence", "pretrained"))


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
    model = models.loaded(trained_name()) if source == "trained" else None
    if source == "minilm":
        swap_tokens(text)  # the swap's token limit, checked in one place
        model = minilm()
    digest = hashlib.sha1(upload).hexdigest() if upload is not None else None
    args = (source, text, synthetic, names, params_json, causal, heads, d, layer)
    traces, rows = queue.run(
        t("state.queue_variants"),
        _compare,
        model,
        *args,
        upload=upload,
        key=repr((*args, digest)),
    )
    # A refused or trivially exact variant says so in the reader's language.
    return traces, [{**r, "note": engine_text(r["note"]) if r.get("note") else None} for r in rows]


def _qkv(tr, source, text, synthetic, heads, d, layer, upload):

    if source == "trained":
        return models.card(trained_name()).attention_inputs(text, model=tr)
    if source == "minilm":
        card = models.card(models.default("sentence", "pretrained"))
        return card.attention_inputs(text, model=tr, layer=layer, head=heads)
    if source == "npz":
        q, k, v = inputs.load_qkv_npz(upload)
        return q, k, v, [str(i) for i in range(q.shape[-2])]
    if source == "text":
        return inputs.text_layer(text, heads=heads, d=d)
    n, structure, sharpness, seed = synthetic
    return inputs.synthetic(n, d, heads, structure=structure, sharpness=sharpness, seed=seed)


def _compare(tr, source, text, synthetic, names, params_json, causal, heads, d, layer, upload):

    q, k, v, labels = _qkv(tr, source, text, synthetic, heads, d, layer, upload)
    params = json.loads(params_json)
    if source != "trained":  # the lab's own inputs run where the kernels are fastest
        device = kernels.default_device()
        q, k, v = q.to(device), k.to(device), v.to(device)
    traces, rows = cmp.run_all(list(names), q, k, v, labels, causal=causal, params=params)
    if source == "trained":
        card = models.card(trained_name())

        def translation(name: str, hp=None) -> str:  # the whole model with the variant inside
            swapped = card.trace(text, model=tr, attend=name, attend_hp=hp)
            return swapped.outputs["translation"]

        reference = translation("full")
        for row in filter(lambda r: "rel_error" in r, rows):  # refused rows stay unscored
            row["translation"] = translation(row["variant"], params.get(row["variant"]))
            row["same_as_full"] = row["translation"] == reference
    return traces, rows


def compare_panels(traces: dict, names: list[str], view: str, head: int):
    """Compare's map panels of ``head`` for ``names`` (keys of :func:`compare`'s traces)
    and the variants ``view`` cannot draw.

    ``maps``: each map as it is; ``difference``: the variant's map minus full attention
    (Δα); ``overlay``: full attention where the variant can see, NaN elsewhere, for the
    variants that have a pattern (the others are returned by name).
    """
    ref = traces[FULL].maps["attention"].weights[0, head]
    panels, no_pattern = [], []
    for name in names:
        tr, amap = traces[name], traces[name].maps["attention"]
        title = t("variants.full") if name == FULL else variant_name(name)
        panel = dict(x=amap.key_labels, y=amap.query_labels, title=title, flags=amap.flags)
        if view == "maps":
            panels.append({**panel, "z": amap.weights[0, head]})
        elif view == "difference":
            diff = cmp.difference(tr, traces[FULL])[0, head]
            panels.append({**panel, "z": diff, "title": t("variants.minus_full", name=title)})
        elif "pattern" in tr.maps:
            hidden = tr.maps["pattern"].weights[0, head] == 0
            z = np.where(hidden, np.nan, ref)
            panels.append({**panel, "z": z, "title": t("variants.overlay_title", name=title)})
        else:
            no_pattern.append(name)
    return panels, no_pattern


def long_map(n: int, structure: str, reduce: str):
    """The pooled map of a long input as an AttentionMap, and what the run measured."""

    pooled, block, seconds, peak, path = queue.run(
        t("state.queue_long"), _pooled_map, n, structure, reduce
    )
    labels = [f"{i * block}" for i in range(pooled.shape[-1])]
    amap = AttentionMap(
        weights=pooled,
        query_labels=labels,
        key_labels=labels,
        kind="self",
        pooling=block,
        normalized=False,
        note=t("variants.long_note", reduce=t(f"variants.pool_{reduce}"), block=block),
    )
    full_bytes = n * n * 4  # the float32 map it never stores
    stats = dict(path=path, block=block, s=f"{seconds:.2f}", share=f"{100 * peak / full_bytes:.1f}")
    return amap, stats | dict(peak=f"{peak / 2**20:.1f}", full=f"{full_bytes / 2**20:.0f}")


def _pooled_map(n: int, structure: str, reduce: str):

    q, k = (x.to(kernels.default_device()) for x in inputs.long_qk(n, structure=structure))
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
    return result[0].cpu().numpy(), block, seconds, peak, kernels.active_path(q.device)


def predictions(picked, lengths, d: int, budget: float) -> list[dict]:
    """The cost model's memory and FLOPs for every variant × n, before anything runs."""

    rows = []
    for n in sorted(lengths):
        for v in picked:
            memory = profile.predict_bytes(v, n, d, 1)
            rows.append(
                {
                    "variant": v,
                    "n": n,
                    "predicted_memory": profile.human_bytes(memory),
                    "predicted_mib": memory / 2**20,
                    "predicted_gflop": profile.flops(v, n, d, 1) / 1e9,
                    "over_budget": memory > budget,
                }
            )
    return rows


def sweep_session(request: tuple | None) -> tuple[list, str]:
    """This session's cost sweep: (items, status), status one of idle, done or stopped.

    A new ``request`` (variants, lengths, d, time budget, memory budget) is kept until it
    has run, so a rerun while the sweep runs waits for the same queued job.
    """
    held = st.session_state.setdefault(SWEEP_KEY, {"items": [], "status": "idle"})
    if request is not None:
        held["request"] = request
    if pending := held.get("request"):
        items, stopped = queue.run(
            t("state.queue_sweep"), _sweep, *pending, cancel_label=t("state.stop_sweep")
        )
        held.update(items=items, status="stopped" if stopped else "done", request=None)
    return held["items"], held["status"]


def _sweep(picked, lengths, d, time_budget, budget, *, cancel, progress):

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


def sweep_tables(items: list) -> dict[str, list[dict]]:
    """A sweep's measurements, fitted exponents and skipped cells, as table rows."""

    points = [p for p in items if isinstance(p, profile.Point)]
    measured = [
        {**r, "peak_mib": r["peak_bytes"] / 2**20, "predicted_mib": r["predicted_bytes"] / 2**20}
        for r in profile.as_rows(points)
    ]
    return {
        "measured": measured,
        "exponents": profile.as_rows(profile.summarize(points)) if points else [],
        "table": [{k: v for k, v in r.items() if k != "times_s"} for r in measured],
        "skipped": profile.as_rows([s for s in items if isinstance(s, profile.Skip)]),
    }


def kv_compare(n: int) -> tuple[dict, list[dict]]:
    """Decoding with and without the KV cache, and its per-token timings as rows (queued)."""
    res = queue.run(t("state.queue_kv"), _kv_compare, n)
    steps = zip(res["step_seconds_cache"], res["step_seconds_no_cache"], strict=True)
    runs = res["repeats"]  # a download says its numbers are medians, and of how many runs
    rows = [
        {"t": i + 1, "ms_cache_median": 1000 * a, "ms_no_cache_median": 1000 * b, "runs": runs}
        for i, (a, b) in enumerate(steps)
    ]
    return res, rows


def _kv_compare(n: int):

    with profile.single_thread():
        return kv_cache.compare(n)


@st.cache_data(max_entries=8, show_spinner=False)
def int8_rows(n: int, d: int, outlier: float, block: int, seed: int) -> list[dict]:
    """Cosine / relative L1 of SageAttention-style and naive INT8 against fp32."""
    return int8.compare(n, d, outlier, block, seed)


@st.cache_data(max_entries=8, show_spinner=False)
def int8_sweep(n: int, d: int, block: int, seed: int) -> list[dict]:
    """Both schemes at each bias of the engine's sweep: how each one's error grows."""
    return int8.sweep(n, d, block, seed)


def kv_layer() -> dict:
    """The seeded layer the KV-cache demonstration decodes with, as its intro states it."""
    return {"d_model": kv_cache.D_MODEL, "heads": kv_cache.HEADS}


def kv_length_limit() -> int:

    return kv_cache.LENGTH_LIMIT


@st.cache_data(ttl=60, show_spinner=False)
def quality_results() -> dict:
    """The shipped variant-quality grid, or an InputError that says how to write it."""

    data = quality.results()
    try:
        for key in ("cells", "table", "lra_published", "tasks"):
            if not isinstance(data[key], list | dict):
                raise TypeError(key)
        for row in data["table"].values():
            for cell in row.values():
                float(cell["mean"]), float(cell["spread"]), float(cell["ms_per_step"])
    except (KeyError, TypeError, ValueError):  # None (missing or not JSON) lands here too
        raise PageError(t("variants.quality_missing")) from None
    return data


def last_seed(data: dict, task: str) -> int:
    """The highest seed every variant of ``task`` was trained with (the table's seeds)."""
    seeds = [set(row[task]["seeds"]) for row in data["table"].values() if task in row]
    common = set.intersection(*seeds) if seeds else {0}
    return max(common | {0})


def task_variants(data: dict, task: str) -> list[str]:
    """The variants with a trained cell on ``task``, in the table's order."""
    return [v for v in data["table"] if task in data["table"][v]]


def frozen_variants(data: dict) -> list[str]:
    """The variants whose cells kept their own weights seeded (``--frozen-variant`` in the
    command each cell records): the flag the table's grid needs to be trained again."""
    flag = quality.FROZEN_FLAG
    return sorted({c["variant"] for c in data["cells"] if flag in c.get("command", "")})


@st.cache_data(ttl=60, show_spinner=False)
def plan_tuning() -> list[dict]:
    """The Zoology plan's learning-rate tuning runs trained so far (re-read each minute:
    the plan may be training)."""
    return quality.tuning("zoology")


@st.cache_data(ttl=60, show_spinner=False)
def plan_results() -> dict[str, dict]:
    """The Zoology plan's saved evaluations, by recipe folder (re-read each minute)."""
    return quality.plan_results("zoology")


def plan_recipe(tuning: list[dict]) -> str:
    return quality.recipe_folder(tuning)


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


def quality_table(data: dict, rows: list[dict]) -> list[dict]:
    """One line per variant: accuracy ± spread and cost per task, LRA's published average."""
    wide = {}
    for r in rows:
        line = wide.setdefault(r["variant"], {"variant": variant_name(r["variant"])})
        line[r["task"]] = f"{r['accuracy']:.3f} ± {r['spread']:.3f}"
        line[f"{r['task']} ms/step"] = r["ms_per_step"]
        line[f"{r['task']} MiB"] = r["peak_rss_mib"]
    published = t("variants.quality_published")
    for variant, line in wide.items():
        lra = data["lra_published"]["average_accuracy"].get(variant)
        line[published] = f"{lra:.2f}" if lra is not None else "—"
    return list(wide.values())


# A resource, not data: every rerun read 23 Traces back as copies (at n = 512 each holds
# 4 MB of maps), ≈ 1 s of a task pick. Views only read them. One seed of every task's
# variants (4 × 23) fits, so moving between tasks never recomputes.
@st.cache_resource(max_entries=96, show_spinner=False)
def quality_trace(task: str, variant: str, seed: int):
    """One trained cell on the held-out example its timeline shows (a Trace, shared: read
    only), through the cell's card."""

    card = registry.cell(quality.checkpoint_name(task, variant, seed))
    return card.trace(card.examples[0].input)


# A task's first pick computed its 23 Traces on the spot: 0.2 s at n = 128, 1.1 s at
# n = 512, on top of the pick itself. Once the Quality section is open, one thread per
# process and seed computes every task's Traces into the shared cache while the reader
# reads the table (≈ 2 s of one core, ≈ 90 MiB: the cache's own size).
@st.cache_resource(max_entries=2, show_spinner=False)
def warm_quality(cells: tuple[tuple[str, str], ...], seed: int):
    """Start computing ``(task, variant)`` cells' Traces for ``seed`` in the background
    (once per process); the thread, or None where no server runs."""
    steps = [functools.partial(quality_trace, task, v, seed) for task, v in cells]
    return queue.background("quality-warm", steps)


def quality_panels(traces: dict, layer: int, head: int) -> list[dict]:
    """One map panel per trained variant: its (layer, head) map on the test example."""
    panels = []
    for name, tr in traces.items():
        m = tr.maps["attention"]
        title = variant_name(name)
        panel = dict(x=m.key_labels, y=m.query_labels, title=title, flags=m.flags)
        panels.append({**panel, "z": m.weights[layer, head]})
    return panels


def quality_read(traces: dict, layer: int, head: int, query: int, key: int | None) -> list:
    """Per trained variant: where its ``query`` looks, what it answers, its test accuracy."""
    table = []
    for name, tr in traces.items():
        w = tr.maps["attention"].weights[layer, head]
        at = tr.outputs["asked"].index(query)
        table.append(
            {
                "variant": variant_name(name),
                "weight_on_key": float(w[query, key]) if key is not None else float("nan"),
                "strongest_key": int(w[query].argmax()),
                "answer": tr.outputs["answers"][at],
                "prediction": tr.outputs["predictions"][at],
                "test_accuracy": float(tr.outputs["accuracy_test"]),
            }
        )
    return table


@st.cache_data(max_entries=64, show_spinner=False)
def swap_tokens(text: str) -> int:
    """MiniLM tokens of ``text`` ([CLS] and [SEP] included): the swap's one length check.

    Over ``SWAP_MAX_TOKENS`` is an InputError; the character limit and empty text are the
    engine's to check when the model runs.
    """

    n = len(minilm().tokenizer(text)["input_ids"])
    if n > SWAP_MAX_TOKENS:
        raise PageError(t("variants.swap_too_long", n=n, limit=SWAP_MAX_TOKENS))
    return n


def swap(text: str, names: tuple, budgets_json: str) -> dict:
    """Every chosen variant in every MiniLM layer on ``text`` (queued)."""
    swap_tokens(text)
    args = (text, names, budgets_json)
    return queue.run(t("variants.queue_swap"), _swap, minilm(), *args, key=repr(args))


def _swap(m, text: str, names: tuple, budgets_json: str) -> dict:

    return in_pretrained.swap(m, text, names, json.loads(budgets_json))


def swap_panels(res: dict, layer: int, head: int) -> list[dict]:
    """The swap's map panels of (``layer``, ``head``): the original model's, then each
    variant's, titled in the reader's language."""
    tokens = res["tokens"]
    z = res["original_maps"][layer, head]
    panels = [dict(z=z, x=tokens, y=tokens, title=t("variants.swap_original"))]
    for name, r in res["results"].items():
        flags = ["exact"] if r.map_exact else ["implied"] if r.map_implied else []
        title = variant_name(name)
        panels.append(dict(z=r.maps[layer, head], x=tokens, y=tokens, title=title, flags=flags))
    return panels


def _budget(name: str, params: dict) -> str:
    """A variant's budget as "k = 12": its parameters' ids in English (the names the
    exports and the URL use), their labels in another language."""
    declared = {p.name: p for p in REGISTRY[name].params} if name in REGISTRY else {}

    def said(k: str) -> str:
        return k if language() == DEFAULT or k not in declared else param_label(declared[k], name)

    return ", ".join(f"{said(k)} = {v}" for k, v in params.items() if k != "seed") or "–"


def swap_rows(results: dict) -> list[dict]:
    """One row per swapped variant: cosine, worst layer, exactness, budget, notes."""
    return [
        {
            "variant": variant_name(name),
            "cosine": r.cosine,
            "max_layer_error": max(r.layer_errors),
            "exact": r.exact,
            "budget": _budget(name, r.params),
            "note": "; ".join(engine_text(n) for n in r.notes),
        }
        for name, r in results.items()
    ]


@st.cache_data(max_entries=4, show_spinner=False)
def npz_length(data: bytes) -> int:
    """N of an uploaded q, k, v file, or the InputError that says what is wrong with it."""

    return int(inputs.load_qkv_npz(data)[0].shape[-2])
