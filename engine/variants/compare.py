"""Run several variants on one input and tabulate how each differs from full attention."""

from __future__ import annotations

import numpy as np
import torch

from engine.errors import InputError
from engine.messages import Message
from engine.trace import Trace
from engine.variants import map_distance
from engine.variants.registry import get

MAX_COMPARE_N = 512
TRIVIAL = 1e-6  # relative error at which a budget covered every key: exact, trivially


def run_all(
    names, q, k, v, labels, *, causal: bool = False, params: dict | None = None, topk: int = 5
) -> tuple[dict[str, Trace], list[dict]]:
    """Traces for ``names`` plus full attention, and one row of metrics per variant.

    Each variant is compared with full attention under its own causality (Mamba and
    KV-cache decoding are causal whatever ``causal`` says).
    """
    n = q.shape[-2]
    if n > MAX_COMPARE_N:
        raise InputError("compare.too_long", limit=MAX_COMPARE_N, n=n)
    if not names:
        raise InputError("compare.no_variants")
    params = params or {}
    refs = {c: get("full").trace(q, k, v, labels=labels, causal=c) for c in {False, True}}
    traces, rows = {}, []
    for name in names:
        variant = get(name)
        if variant.needs_training:  # the Chat page's rule: what needs training is not scored
            rows.append(_refused(variant, causal))
            continue
        tr = variant.trace(q, k, v, labels=labels, causal=causal, hp=params.get(name))
        ref = refs[tr.inputs["causal"]]
        out = torch.from_numpy(tr.vectors["output"])
        row = {
            "variant": name,
            "title": variant.title,
            "causal": tr.inputs["causal"],
            "map": ", ".join(tr.maps["attention"].flags),
            "rel_error": map_distance.relative_error(out, torch.from_numpy(ref.vectors["output"])),
            **map_distance.compare_maps(
                ref.maps["attention"], tr.maps["attention"], tr.maps.get("pattern"), k=topk
            ),
            "time_complexity": variant.time_complexity,
            "flops": tr.metrics["flops"],
            "compute_ms": 1000 * tr.timings["compute_s"],
            "approximates_full": variant.approximates_full,
            "note": None,
        }
        if variant.approximates_full and row["rel_error"] <= TRIVIAL:
            row["note"] = Message("compare.trivially_exact", title=variant.title)
        tr.metrics.update(
            {
                key: float(val)
                for key, val in row.items()
                if key in ("rel_error", "kl", "js", "missed_mass") and val is not None
            }
        )
        traces[name], rows = tr, [*rows, row]
    traces["full (reference)"] = refs[causal]
    return traces, rows


def _refused(variant, causal: bool) -> dict:
    """A row that says why a variant is not scored: its method learns parts (projections,
    gates, decays, uptrained heads) that these inputs would fill with seeded or pooled
    stand-ins, so its numbers would describe another model. Its trained cells are in the
    grid (``python -m engine.evaluate variants``)."""
    return {
        "variant": variant.name,
        "title": variant.title,
        "causal": causal,
        "time_complexity": variant.time_complexity,
        "approximates_full": variant.approximates_full,
        "note": Message(
            "compare.needs_training", title=variant.title, why=Message(variant.needs_training)
        ),
    }


def difference(trace: Trace, ref: Trace) -> np.ndarray:
    """Variant map − full map ``[B, H, n, n]`` (for a diverging heatmap)."""
    return trace.maps["attention"].weights - ref.maps["attention"].weights
