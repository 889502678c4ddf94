"""Figures of the Variants lab: maps side by side, differences, pattern overlays, cost charts."""

from __future__ import annotations

import math
import warnings

import numpy as np
from kit.i18n import t

from views.heatmap import (
    FONT,
    axes,
    cell_domains,
    figure,
    flag_text,
    heatmap,
    subplot_ref,
    unique_labels,
)

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
    with warnings.catch_warnings():  # an all-blank block (hidden keys) stays blank
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(padded.reshape(m // f, f, m // f, f), axis=(1, 3)), f


def pooled_labels(labels, f: int) -> list[str]:
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
        pooled_labels(amap.key_labels, f),
        pooled_labels(amap.query_labels, f),
        title=title,
        flags=flags,
        diverging=diverging,
        value_name=value_name,
        height=380,
        annotate=False,
    )


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


GRID_CELLS = 64  # a small-multiple panel is ~300 px wide: more cells than this are not seen
TICKS_MAX = 32  # more tick labels than this overlap in one panel


def _panel_heatmap(i: int, z, xs, ys, top: float, diverging: bool, value_name: str) -> dict:
    return dict(
        type="heatmap",
        z=z.astype(np.float32),
        x=xs,
        y=ys,
        zmin=-top if diverging else 0.0,
        zmax=top,
        colorscale="RdBu" if diverging else "Viridis",
        reversescale=diverging,
        showscale=i == 1,
        colorbar=dict(title=dict(text=value_name), len=0.5),
        hovertemplate="%{y} → %{x}<br>" + value_name + " = %{z:.4f}<extra></extra>",
        **subplot_ref(i),
    )


def _ring(i: int, x, y) -> dict:
    """A red ring on one cell of panel ``i`` (the key a query should find)."""
    return dict(
        type="scatter",
        x=[x],
        y=[y],
        mode="markers",
        marker=dict(symbol="circle-open", size=14, color="red", line=dict(width=3)),
        hoverinfo="skip",
        showlegend=False,
        **subplot_ref(i),
    )


def _panel_title(text: str, x_dom, y_dom) -> dict:
    return dict(
        text=text,
        x=sum(x_dom) / 2,
        y=y_dom[1],
        xref="paper",
        yref="paper",
        xanchor="center",
        yanchor="bottom",
        showarrow=False,
        font=dict(size=13),
    )


def map_grid(
    panels: list[dict],
    *,
    columns: int = 4,
    value_name: str = "α",
    diverging: bool = False,
    marker: tuple[int, int] | None = None,
    grey_gaps: bool = False,
):
    """Small multiples in one figure: one panel per ``dict(z, x, y, title, flags)``.

    NaN cells are blank (grey with ``grey_gaps``: the keys a pattern cannot see).

    One figure with many heatmaps paints far faster than as many figures. Each panel is
    average-pooled to ≤ GRID_CELLS a side (said in its title); ``marker`` = (query, key)
    rings that cell in every panel (the key a query should find). Colour scale shared.
    """
    rows = math.ceil(len(panels) / columns)
    xs_dom = cell_domains([1] * columns, 0.04)
    ys_dom = cell_domains([1] * rows, 0.12 / max(rows, 1), reverse=True)
    data, layout, notes = [], {}, []
    top = max((float(np.nanmax(np.abs(p["z"]))) for p in panels), default=1.0) or 1.0
    for i, p in enumerate(panels, start=1):
        z, f = display_pool(np.asarray(p["z"], dtype=float), GRID_CELLS)
        xs = unique_labels(pooled_labels(p["x"], f))
        ys = unique_labels(pooled_labels(p["y"], f))
        flags = list(p.get("flags", ())) + ([f"display pooled ×{f}"] if f > 1 else [])
        signed = diverging or "signed" in flags  # a signed map on the diverging scale
        data.append(_panel_heatmap(i, z, xs, ys, top, signed, value_name))
        if marker is not None:
            data.append(_ring(i, xs[marker[1] // f], ys[marker[0] // f]))
        c, r = (i - 1) % columns, (i - 1) // columns
        # Tick labels are most of a redraw's cost in the browser: the first panel names
        # the tokens (when they fit), the others rely on it and on the hover.
        ticks = i == 1 and len(xs) <= TICKS_MAX
        x_axis = dict(type="category", showticklabels=ticks, tickangle=-45, showgrid=False)
        y_axis = dict(type="category", autorange="reversed", showticklabels=ticks, showgrid=False)
        layout.update(axes(i, xs_dom[c], ys_dom[r], x=x_axis, y=y_axis))
        title = p["title"] + (f" [{flag_text(flags)}]" if flags else "")
        notes.append(_panel_title(title, xs_dom[c], ys_dom[r]))
    margin = dict(l=10, r=10, t=40, b=10)
    layout.update(font=FONT, annotations=notes, height=int(60 + 300 * rows), margin=margin)
    if grey_gaps:
        layout["plot_bgcolor"] = "rgba(128,128,128,0.75)"
    return figure(data, layout)


def accuracy_cost_figure(rows: list[dict], cost: str, *, title: str, x_title: str):
    """Accuracy (mean over seeds, bars: the seeds' range) against a cost, one point each."""
    pts = [r for r in rows if r[cost] and r[cost] > 0]
    data = [
        dict(
            type="scatter",
            x=[r[cost] for r in pts],
            y=[r["accuracy"] for r in pts],
            error_y=dict(
                type="data",
                symmetric=False,
                array=[r["max"] - r["accuracy"] for r in pts],
                arrayminus=[r["accuracy"] - r["min"] for r in pts],
            ),
            text=[r["variant"] for r in pts],
            mode="markers+text",
            textposition="top center",
            marker=dict(size=12),
            hovertemplate="%{text}: %{y:.3f} at %{x:.3g}<extra></extra>",
        )
    ]
    layout = dict(
        title=dict(text=title),
        font=FONT,
        height=460,
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis=dict(title=dict(text=x_title), type="log"),
        yaxis=dict(title=dict(text=t("variants.accuracy_axis")), range=[-0.05, 1.1]),
    )
    return figure(data, layout)


def layer_error_figure(errors: dict[str, list[float]]):
    """Relative error of each layer's output against the original model, one line each."""
    lines = [
        dict(
            type="scatter",
            x=list(range(1, len(e) + 1)),
            y=e,
            mode="lines+markers",
            name=name,
        )
        for name, e in errors.items()
    ]
    layout = dict(
        title=dict(text=t("variants.swap_layer_title")),
        font=FONT,
        height=400,
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis=dict(title=dict(text=t("variants.swap_layer_axis")), dtick=1),
        yaxis=dict(title=dict(text=t("variants.swap_error_axis"))),
    )
    return figure(lines, layout)


def cosine_figure(cosines: dict[str, float]):
    """The sentence embedding's cosine against the original model, one bar per variant."""
    names = list(cosines)
    bars = dict(
        type="bar",
        x=[cosines[n] for n in names],
        y=names,
        orientation="h",
        text=[f"{cosines[n]:.4f}" for n in names],
        textposition="auto",
    )
    layout = dict(
        title=dict(text=t("variants.swap_cosine_title")),
        font=FONT,
        height=int(120 + 32 * len(names)),
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis=dict(title=dict(text="cosine"), range=[min(0.0, *cosines.values()), 1.0]),
        yaxis=dict(autorange="reversed", type="category"),
    )
    return figure([bars], layout)
