"""Figures of the Variants lab: maps side by side, differences, pattern overlays, cost charts."""

from __future__ import annotations

import math

import numpy as np
from kit.i18n import t

from views.heatmap import FONT, figure, heatmap

MAX_CELLS = 128  # a map wider than this is average-pooled for display, and says so


def display_pool(z: np.ndarray, max_cells: int = MAX_CELLS) -> tuple[np.ndarray, int]:
    """Average-pool a square ``[n, n]`` map into ≤ max_cells per side; returns (map, factor)."""
    n = z.shape[-1]
    f = max(1, math.ceil(n / max_cells))
    if f == 1:
        return z, 1
    m = math.ceil(n / f) * f
    padded = np.full((m, m), np.nan)
    padded[:n, :n] = z
    return np.nanmean(padded.reshape(m // f, f, m // f, f), axis=(1, 3)), f


def _labels(labels, f: int) -> list[str]:
    if f == 1:
        return list(labels)
    return [
        f"{i * f}–{min((i + 1) * f, len(labels)) - 1}" for i in range(math.ceil(len(labels) / f))
    ]


def map_figure(
    amap,
    head: int = 0,
    *,
    title: str,
    diverging: bool = False,
    z: np.ndarray | None = None,
    value_name: str = "α",
):
    """One head of an AttentionMap (or ``z`` in its place), pooled for display when large."""
    z = amap.weights[0, head] if z is None else z
    pooled, f = display_pool(z)
    flags = list(amap.flags) + ([f"display pooled ×{f}"] if f > 1 else [])
    return heatmap(
        pooled,
        _labels(amap.key_labels, f),
        _labels(amap.query_labels, f),
        title=title,
        flags=flags,
        diverging=diverging,
        value_name=value_name,
        height=380,
        annotate=False,
    )


def overlay_figure(full_map, pattern_map, head: int = 0, *, title: str):
    """Full attention with the cells the variant cannot see greyed out."""
    fig = map_figure(full_map, head, title=title)
    hidden, f = display_pool((pattern_map.weights[0, head] == 0).astype(float))
    grey = "rgba(128,128,128,0.75)"
    shade = dict(
        type="heatmap",
        z=np.where(hidden > 0.5, 1.0, np.nan),
        x=fig.data[0].x,
        y=fig.data[0].y,
        colorscale=[[0, grey], [1, grey]],
        showscale=False,
        hoverinfo="skip",
    )
    return figure([fig.data[0], shade], fig.layout)


def loglog_figure(
    rows: list[dict], y: str, *, title: str, y_title: str, predicted: str | None = None
):
    """One line per variant of ``y`` against n on log-log axes (predicted as dashes)."""
    lines = []
    for name in dict.fromkeys(r["variant"] for r in rows):
        pts = sorted((r for r in rows if r["variant"] == name), key=lambda r: r["n"])
        ns = [r["n"] for r in pts]
        lines.append(
            dict(
                type="scatter",
                x=ns,
                y=[r[y] for r in pts],
                mode="lines+markers",
                name=name,
                legendgroup=name,
            )
        )
        if predicted:
            lines.append(
                dict(
                    type="scatter",
                    x=ns,
                    y=[r[predicted] for r in pts],
                    mode="lines",
                    name=t("views.variants.model_line", name=name),
                    legendgroup=name,
                    line=dict(dash="dash"),
                    opacity=0.6,
                )
            )
    layout = dict(
        title=dict(text=title),
        font=FONT,
        height=440,
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis=dict(title=dict(text=t("views.variants.length_axis")), type="log"),
        yaxis=dict(title=dict(text=y_title), type="log"),
    )
    return figure(lines, layout)


def per_token_figure(result: dict):
    """Decoding time per token vs position, with and without the KV cache."""
    lines = []
    for key, name in (
        ("step_seconds_no_cache", t("views.variants.no_cache")),
        ("step_seconds_cache", t("views.variants.kv_cache")),
    ):
        ms = 1000 * np.asarray(result[key])
        lines.append(
            dict(type="scatter", x=np.arange(1, len(ms) + 1), y=ms, mode="lines", name=name)
        )
    layout = dict(
        title=dict(text=t("views.variants.per_token_title")),
        font=FONT,
        height=380,
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis=dict(title=dict(text=t("views.variants.position_t"))),
        yaxis=dict(title=dict(text=t("views.variants.ms_per_token"))),
    )
    return figure(lines, layout)
