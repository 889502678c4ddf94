"""Recall against state: how many bytes a model keeps to answer, as in Zoology and Based.

Zoology (Arora et al. 2023, arXiv 2312.04927) and Based (Arora et al. 2024, arXiv
2402.18668) plot associative-recall accuracy (MQAR) against the memory a model holds
while it reads a sequence: the KV cache for softmax attention (growing with the tokens
read), the recurrent state for linear-recurrent models (fixed). This module gives that
memory for every cell of the variant-quality grid, from each variant's own model:

    state(n) = n_layers × bytes one layer holds after n tokens (float32)

each variant states it, ``Variant.cache_bytes(n, d, H, hp)``, with its reason as the
docstring's first line (what a decoder of the variant keeps to produce the next token:
GQA's G key/value heads, MLA's latent + RoPE key, a window's last w tokens, the d×d
state of RetNet / GLA / DeltaNet, Based's (1 + d' + d'²)·(d + 1) per head; by default
the keys and values of every token read).

``bytes_per_token`` = state(n) / n: constant for a KV cache, falling as 1/n for a fixed
state. ``kind`` is measured, not labelled: "grows" when state(2n) > state(n), else
"fixed" (a recurrent state, or a window that stopped growing).
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from engine import checkpoints, gate
from engine.errors import InputError
from engine.variants.base import Variant
from engine.variants.registry import REGISTRY, get

# Zoology's recall–memory figure, its points read off its pixels (scripts/digitise_zoology.py)
PUBLISHED = checkpoints.ROOT / "assets" / "published" / "zoology-recall-memory.json"
PUBLISHED_MAX_BYTES = 256_000


def layer_bytes(variant: str, hp: dict, n: int, d: int, heads: int) -> int:
    """Bytes one layer of ``variant`` (parameters ``hp``) holds after reading n tokens."""
    v = get(variant)
    return int(v.cache_bytes(n, d, heads, v.resolve(hp)))


def source(variant: str) -> str:
    """Where the number comes from: the first line of the variant's ``cache_bytes``, or of
    its ``cache_bytes_per_token`` where the cache holds every token read."""
    v = type(get(variant))
    method = v.cache_bytes if v.cache_bytes is not Variant.cache_bytes else v.cache_bytes_per_token
    doc = (method.__doc__ or "").strip().splitlines()
    return doc[0] if doc else "Variant.cache_bytes"


def state(variant: str, hp: dict, n: int, config: dict) -> dict:
    """The model's state after n tokens: total and per token bytes, kind, source.

    ``config`` is the grid model's (VariantModelConfig.to_dict(): d_model, n_heads,
    n_layers).
    """
    heads, layers = config["n_heads"], config["n_layers"]
    d = config["d_model"] // heads
    total = layers * layer_bytes(variant, hp, n, d, heads)
    doubled = layers * layer_bytes(variant, hp, 2 * n, d, heads)
    return {
        "state_bytes": total,
        "bytes_per_token": total / n,
        "kind": "grows" if doubled > total else "fixed",
        "source": source(variant),
    }


def table(cells: list[dict], budgets: dict, shapes: dict) -> list[dict]:
    """One row per (variant, recall task): accuracy per seed, mean, and the state.

    ``cells`` are the evaluation's (variant, task, seed, accuracy, width = d_model);
    ``shapes[(variant, task, width)]`` the cells' length n, model config and, where known,
    the parameters they ran with (else ``budgets[variant]``: MLA's latent follows the
    width, Variant.grid_hp). Only the
    recall tasks (mqar-*) count, as in Zoology's figure; the width sweep gives a variant
    one row per width, so its state grows along the chart's x axis.
    """
    groups = defaultdict(dict)
    for c in cells:
        if c["task"].startswith("mqar"):
            groups[c["variant"], c["task"], c.get("width", 64)][c["seed"]] = c["accuracy"]
    rows = []
    for (variant, task, width), seeds in sorted(groups.items()):
        n, config, *ran = shapes[variant, task, width]
        hp = ran[0] if ran else budgets.get(variant, {})
        accs = [seeds[s] for s in sorted(seeds)]
        rows.append(
            {
                "variant": variant,
                "task": task,
                "width": width,
                "n": n,
                "seeds": sorted(seeds),
                "accuracy": accs,
                "mean": round(statistics.fmean(accs), 4),
                **state(variant, hp, n, config),
            }
        )
    return rows


def published() -> dict | None:
    """Zoology's published recall–memory points with where and how they were read (source,
    setting, state definition), or None when the file is missing or not such a file."""
    try:
        found = gate.json_text(PUBLISHED.read_bytes(), max_bytes=PUBLISHED_MAX_BYTES)
        for p in found["points"]:
            str(p["model"]), float(p["state_bytes"]), float(p["accuracy"])
        return found
    except (OSError, InputError, KeyError, TypeError, ValueError):
        return None


# A variant "recalls" at a point where its accuracy, mean over seeds, reaches this (the
# bar of issue 31); under PARTIAL it is no better than a guess among a few values.
RECALLS = 0.9
PARTIAL = 0.1
VERDICT_TASK = "mqar-256-16"  # Zoology's tuning point: every variant has a cell there
VERDICT_WIDTH = 64  # … at this width, where the ablation's folders train their cells


def outcome_of(mean: float) -> str:
    """``recalls`` (mean ≥ RECALLS), ``partial`` (≥ PARTIAL) or ``chance``."""
    return "recalls" if mean >= RECALLS else "partial" if mean >= PARTIAL else "chance"


def verdict(rows: list[dict], tuning: list[dict], task: str = VERDICT_TASK) -> list[dict]:
    """One row per variant of a plan: does it recall, at what state, with which recipe.

    ``rows`` are the plan's :func:`table` rows (its evaluation's ``recall_state``),
    ``tuning`` its learning-rate runs (``variant_lm.tuning``). Per variant: its best mean
    accuracy on ``task`` (and each seed's), the outcome (``recalls`` ≥ RECALLS,
    ``partial`` ≥ PARTIAL, else ``chance``), the smallest state among its points that
    recall (any task and width, with the formula it is counted by), the short convolution
    and the kept rate with every rate's validation accuracy, and how many points it has.
    """
    by_variant: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_variant[r["variant"]].append(r)
    runs: dict[str, list[dict]] = defaultdict(list)
    for run in tuning:
        runs[run["variant"]].append(run)
    out = []
    for variant, points in by_variant.items():
        at_task = [r for r in points if r["task"] == task]
        best = max(at_task or points, key=lambda r: r["mean"])
        recalling = [r for r in points if r["mean"] >= RECALLS]
        smallest = min(recalling, key=lambda r: r["state_bytes"]) if recalling else None
        kept = next((r for r in runs[variant] if r["kept"]), None)
        outcome = outcome_of(best["mean"])
        out.append(
            {
                "variant": variant,
                "outcome": outcome,
                "task": best["task"],
                "width": best["width"],
                "accuracy": best["accuracy"],
                "mean": best["mean"],
                "smallest_state": smallest
                and {k: smallest[k] for k in ("task", "width", "state_bytes", "mean")},
                "formula": source(variant),
                "conv": kept["conv"] if kept else None,
                "lr": kept["lr"] if kept else None,
                "validation_by_lr": {r["lr"]: r["validation_accuracy"] for r in runs[variant]},
                "points": len(points),
            }
        )
    order = {"recalls": 0, "partial": 1, "chance": 2}
    return sorted(out, key=lambda v: (order[v["outcome"]], -v["mean"], v["variant"]))


def not_on_grid(found: list[dict]) -> list[str]:
    """The grid's variants (every one not marked ``not_in_grid``) with no verdict row in
    ``found`` yet: the plan has not trained them."""
    have = {v["variant"] for v in found}
    return [name for name, v in REGISTRY.items() if not v.not_in_grid and name not in have]


def ablations(plans: dict[str, dict], recipe: str) -> dict[str, dict[str, float]]:
    """Every other recipe folder's best mean per variant on the verdict's task (the
    convolution off, one rate, the old grid's steps): what each part of the recipe
    contributes."""
    return {
        other: {v["variant"]: v["mean"] for v in verdict(data["recall_state"], [])}
        for other, data in sorted(plans.items())
        if other != recipe
    }


# A recipe folder in words, in English (RESULTS); the page passes its language's phrases,
# the same keys under variants_verdict.* in its message files.
RECIPE_PHRASES = {
    "recipe_folder": "`{folder}`: {conv}, {rates}, {steps} steps",
    "recipe_conv": "a width-{k} convolution",
    "recipe_no_conv": "no convolution",
    "recipe_one_rate": "one rate ({lr})",
    "recipe_best_of": "the best of {n} rates",
}


def recipe_words(folder: str, recipe: dict | None, say=None) -> str:
    """``conv0-lr0.003``: no convolution, one rate (0.003), 2,000 steps (its folder's name
    does not say the steps). ``say(key, **values)`` gives a phrase of RECIPE_PHRASES."""
    if recipe is None:
        return f"`{folder}`"
    say = say or (lambda key, **values: RECIPE_PHRASES[key].format(**values))
    conv = say("recipe_conv", k=recipe["conv"]) if recipe["conv"] else say("recipe_no_conv")
    lrs = recipe["lrs"]
    one = len(lrs) == 1
    rates = say("recipe_one_rate", lr=f"{lrs[0]:g}") if one else say("recipe_best_of", n=len(lrs))
    steps = f"{recipe['steps']:,}"
    return say("recipe_folder", folder=folder, conv=conv, rates=rates, steps=steps)


def folder_recipe(data: dict) -> dict | None:
    """What one recipe folder's cells were trained with, read from its evaluation's cells
    (a folder holds one recipe): ``{"conv", "lrs", "steps"}``, or None without cells. The
    folder's name says the convolution and the rates; the steps it only says when they are
    not the plan's (``-steps360``), so a reader of a column is told them here."""
    cell = next((c for c in data.get("cells", []) if "recipe" in c and "steps" in c), None)
    if cell is None:
        return None
    return {"conv": cell["recipe"]["conv"], "lrs": cell["recipe"]["lrs"], "steps": cell["steps"]}
