"""Recall against state: how many bytes a model keeps to answer, as in Zoology and Based.

Zoology (Arora et al. 2023, arXiv 2312.04927) and Based (Arora et al. 2024, arXiv
2402.18668) plot associative-recall accuracy (MQAR) against the memory a model holds
while it reads a sequence: the KV cache for softmax attention (growing with the tokens
read), the recurrent state for linear-recurrent models (fixed). This module gives that
memory for every cell of the variant-quality grid, from each variant's own model:

    state(n) = n_layers × bytes one layer holds after n tokens (float32)

- variants of 2023–2026 state it themselves: ``Variant.cache_bytes(n, d, H, hp)`` (GQA's
  G key/value heads, MLA's latent + RoPE key, the s + w tokens of window + sinks, the
  d×d state of RetNet / GLA / DeltaNet, Based's (1 + d' + d'²)·(d + 1) per head);
- the 2020-era variants do not, so :data:`LEGACY` writes theirs down here, each with the
  reason (what a decoder of that variant must keep to produce the next token).

``bytes_per_token`` = state(n) / n: constant for a KV cache, falling as 1/n for a fixed
state. ``kind`` is measured, not labelled: "grows" when state(2n) > state(n), else
"fixed" (a recurrent state, or a window that stopped growing).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable

from engine.variants.base import FLOAT_BYTES
from engine.variants.registry import get


def _kv(tokens: Callable[[int, dict], int]):
    """Per layer: keys and values of ``tokens(n, hp)`` tokens, every head (2·H·d each)."""
    return lambda n, d, heads, hp: 2 * heads * d * tokens(n, hp) * FLOAT_BYTES


# (per-layer bytes after n tokens, why): what a decoder of the variant keeps.
LEGACY: dict[str, tuple[Callable[[int, int, int, dict], int], str]] = {
    "full": (_kv(lambda n, hp: n), "KV cache of every token read"),
    "flash": (_kv(lambda n, hp: n), "KV cache of every token read (exact attention)"),
    "reformer": (_kv(lambda n, hp: n), "KV cache of every token: a later hash bucket may hold any"),
    "bigbird": (_kv(lambda n, hp: n), "KV cache of every token: random blocks may be any block"),
    "longformer": (
        _kv(lambda n, hp: min(n, hp["window"] + hp["globals"])),
        "the last w tokens and the g global ones",
    ),
    "chunked": (
        _kv(lambda n, hp: min(n, hp["chunk"] + hp["overlap"])),
        "the current chunk and the overlap before it",
    ),
    "sparse": (
        _kv(lambda n, hp: min(n, hp["block"] + hp["summary"] * (n // hp["block"]))),
        "the own block and the summary tokens of every earlier block",
    ),
    "linformer": (
        _kv(lambda n, hp: min(n, hp["k"])),
        "the k pooled keys and values (bidirectional: no decoding form)",
    ),
    "performer": (
        lambda n, d, heads, hp: heads * hp["features"] * (d + 1) * FLOAT_BYTES,
        "φ(K)ᵀ[V 1]: m × (d + 1) per head (the causal form's state)",
    ),
    "linear": (
        lambda n, d, heads, hp: heads * d * (d + 1) * FLOAT_BYTES,
        "Σ φ(k)vᵀ and Σ φ(k): d × (d + 1) per head",
    ),
    "mamba": (
        lambda n, d, heads, hp: heads * d * hp["d_state"] * FLOAT_BYTES,
        "h: N numbers per channel, d channels per head",
    ),
}


def layer_bytes(variant: str, hp: dict, n: int, d: int, heads: int) -> int:
    """Bytes one layer of ``variant`` (parameters ``hp``) holds after reading n tokens."""
    v = get(variant)
    resolved = v.resolve(hp)
    if hasattr(v, "cache_bytes"):
        return int(v.cache_bytes(n, d, heads, resolved))
    if variant not in LEGACY:
        raise KeyError(f"no memory model for {variant!r}")
    return int(LEGACY[variant][0](n, d, heads, resolved))


def source(variant: str) -> str:
    """Where the number comes from: the variant's own method, or this module's reason."""
    if hasattr(get(variant), "cache_bytes"):
        doc = (get(variant).cache_bytes.__doc__ or "").strip().splitlines()
        return doc[0] if doc else "Variant.cache_bytes"
    return LEGACY[variant][1]


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
    ``shapes[(variant, task, width)]`` the cells' length n and model config. Only the
    recall tasks (mqar-*) count, as in Zoology's figure; the width sweep gives a variant
    one row per width, so its state grows along the chart's x axis.
    """
    groups = defaultdict(dict)
    for c in cells:
        if c["task"].startswith("mqar"):
            groups[c["variant"], c["task"], c.get("width", 64)][c["seed"]] = c["accuracy"]
    rows = []
    for (variant, task, width), seeds in sorted(groups.items()):
        n, config = shapes[variant, task, width]
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
                **state(variant, budgets.get(variant, {}), n, config),
            }
        )
    return rows
