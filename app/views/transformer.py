"""Figures for the Transformer page: the layer × head grid, the neuron view, and what
removing each head does (the section "Does it matter?")."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from kit.i18n import t

from views.heatmap import (
    BAR_PX,
    DIVERGING,
    SEQUENTIAL,
    axes,
    bar_ticks,
    cell_domains,
    figure,
    flag_text,
    map_scale,
    panel_titles,
    rows_plot_px,
    subplot_ref,
    unique_labels,
)
from views.style import FONT, legend_below

GRID_SIDE = 32  # thumbnails show at most 32 × 32 cells; longer inputs are block-averaged


def _label(text: str, x: float, y: float, **kw) -> dict:
    return dict(text=text, x=x, y=y, xref="paper", yref="paper", showarrow=False, **kw)


def head_grid(amap, title: str) -> go.Figure:
    """Every (layer, head) of an AttentionMap as a small heatmap; rows are layers, on the
    map's kind's one scale (:func:`views.heatmap.map_scale`: α on 0–1, a signed or implied
    map diverging and named by its quantity), as every other grid of maps.

    The thumbnails are tiles of ONE heatmap, NaN between them: a browser draws one trace
    on one pair of axes several times faster than L × H subplots (each with its own axes,
    clip path and drag layers), and this grid is redrawn on every new input.
    """
    shown = amap.pooled(GRID_SIDE)
    rows, cols = _layout(shown)
    f = shown.pooling // amap.pooling
    z, hover = _tiles(shown)
    flags = list(amap.flags) + ([f"thumbnails pooled ×{f}"] if f > 1 else [])
    s = map_scale(z, flags)
    hidden = dict(showticklabels=False, ticks="", showgrid=False, zeroline=False, automargin=False)
    trace = dict(
        type="heatmap",
        z=z,
        text=hover.tolist(),
        coloraxis="coloraxis",
        hoverongaps=False,
        hovertemplate=f"%{{text}}<br>{s['name']} = %{{z:.3f}}<extra></extra>",
    )
    height = int(min(1400, 140 + 110 * rows * max(1, 6 / cols)))
    margin = dict(l=40, r=10, t=70, b=10)
    plot_h = height - margin["t"] - margin["b"]
    # The bar as long as a grid of maps' (map_grid): over MiniLM's 6 layers it ran the whole
    # 900-px plot with a label every 0.05, nineteen numbers beside the maps on a projector.
    bar_h = min(BAR_PX, plot_h)
    bar = dict(title=dict(text=s["name"]), len=bar_h / plot_h, thickness=14)
    bar |= bar_ticks(s["zmin"], s["zmax"], bar_h)  # Plotly kept its 0.05 step in 300 px
    scale = dict(cmin=s["zmin"], cmax=s["zmax"], colorbar=bar)
    colours = dict(colorscale=DIVERGING, reversescale=True) if s["diverging"] else {}
    note = f" · {s['note']}" if s["note"] else ""
    layout = dict(
        title=dict(text=f"{title}{note}  <sup>[{flag_text(flags)}]</sup>"),
        font=FONT,
        coloraxis=dict(dict(colorscale=SEQUENTIAL) | colours, **scale),
        height=height,
        margin=margin,
        annotations=_tile_labels(shown),
        xaxis=hidden,
        yaxis=dict(hidden, autorange="reversed"),
    )
    return figure([trace], layout)


def _layout(amap) -> tuple[int, int]:
    """(rows, columns) of tiles: layers down and heads across, or, for a map of one head
    per layer (the mean over heads, rollout), the layers across: a column of full-width
    tiles would fill several screens with a few large squares."""
    L, H = amap.shape[:2]
    return (1, L) if H == 1 else (L, H)


def _place(amap, layer: int, h: int) -> tuple[int, int]:
    return (0, layer) if amap.shape[1] == 1 else (layer, h)


def _tile_grid(amap) -> tuple[int, int, int, int]:
    """(gap_q, gap_k, n_rows, n_cols): blank cells between two tiles down and across, and
    the size of the one array that holds every tile."""
    rows, cols = _layout(amap)
    q, k = amap.shape[2:]
    gap_q, gap_k = max(1, q // 10), max(1, k // 10)
    return gap_q, gap_k, rows * (q + gap_q) - gap_q, cols * (k + gap_k) - gap_k


def _tiles(amap) -> tuple[np.ndarray, np.ndarray]:
    """Every (layer, head) map laid out as a tile of one array, NaN between tiles, and the
    hover text of each cell (its layer, head, query and key)."""
    L, H, q, k = amap.shape
    gap_q, gap_k, n_rows, n_cols = _tile_grid(amap)
    z = np.full((n_rows, n_cols), np.nan, np.float32)
    hover = np.full((n_rows, n_cols), "", dtype=object)
    query, key = t("views.axis.query"), t("views.axis.key")
    qi, ki = np.meshgrid(np.arange(q), np.arange(k), indexing="ij")
    for layer in range(L):
        for h in range(H):
            row, col = _place(amap, layer, h)
            r, c = row * (q + gap_q), col * (k + gap_k)
            z[r : r + q, c : c + k] = amap.weights[layer, h]
            head = f"{amap.layer_labels[layer]} {amap.head_labels[h]}<br>"
            hover[r : r + q, c : c + k] = np.char.add(
                np.char.add(f"{head}{query} ", qi.astype(str)),
                np.char.add(f" · {key} ", ki.astype(str)),
            )
    return z, hover


def _tile_labels(amap) -> list[dict]:
    """Names above the columns of tiles (heads, or layers when each has one head) and
    beside the rows (layers, or that one head's name)."""
    L, H, q, k = amap.shape
    gap_q, gap_k, n_rows, n_cols = _tile_grid(amap)
    across, down = (
        (amap.layer_labels, amap.head_labels) if H == 1 else (amap.head_labels, amap.layer_labels)
    )
    labels = [
        _label(name, (c * (k + gap_k) + k / 2) / n_cols, 1.0, yanchor="bottom")
        for c, name in enumerate(across)
    ]
    labels += [
        _label(name, 1.0, 1 - (r * (q + gap_q) + q / 2) / n_rows, xanchor="left", textangle=90)
        for r, name in enumerate(down)
    ]
    return labels


def _cells(z, dims: list[str], y: list[str], bound: float, n: int) -> dict:
    """One heatmap panel of the neuron view: rows ``y`` × dimensions, centred on 0."""
    return dict(
        type="heatmap",
        z=z,
        x=dims,
        y=y,
        zmin=-bound,
        zmax=bound,
        colorscale=DIVERGING,
        reversescale=True,
        showscale=False,
        hovertemplate=f"%{{y}} {t('views.alignment.dim')} %{{x}}: %{{z:.3f}}<extra></extra>",
        **subplot_ref(n),
    )


def _bars(x, labels: list[str], name: str, colour: str) -> dict:
    """Horizontal bars, one per key, in the fourth panel (scores, then weights)."""
    return dict(
        type="bar",
        x=x,
        y=labels,
        orientation="h",
        name=name,
        marker=dict(color=colour),
        **subplot_ref(4),
    )


def neuron_figure(nv, query_label: str, key_labels: Sequence[str]) -> go.Figure:
    """bertviz's neuron view for one query: q_i, each k_j, q_i∘k_j, q_i·k_j/√d_k and α_ij.

    ``nv`` is the engine's :class:`engine.models.attentionviz.NeuronView`; this only draws it.
    """
    d_k = nv.q.shape[0]
    labels = unique_labels(list(key_labels))
    dims = [str(i) for i in range(d_k)]
    m = float(max(np.abs(nv.q).max(), np.abs(nv.k).max(), 1e-9))
    m_prod = float(max(np.abs(nv.product).max(), 1e-9))
    cols = cell_domains([0.4, 0.4, 0.2], 0.04)
    # The lower panels' titles wrapped to their columns (at 1024 px with the sidebar open
    # "q ∘ k_j (sums to q·k_j)" ran into "q·k_j / √d_k and α_ij"), the rows apart by their lines.
    names = (t("views.neuron.keys"), t("views.neuron.product"), t("views.neuron.scores"))
    notes, lines = panel_titles(names, cols, rows_plot_px(labels), FONT["size"])
    height = int(min(1000, 260 + 24 * len(nv.k))) + 20 * (lines - 1)
    gap = (20 * lines + 12) / (height - 70)
    top, bottom = cell_domains([0.12, 0.88], gap, reverse=True)
    category = dict(type="category")
    rows_axis = dict(category, autorange="reversed")
    layout_axes = (
        axes(1, (cols[0][0], cols[1][1]), top, x=dict(showticklabels=False), y=category)
        | axes(2, cols[0], bottom, y=rows_axis)
        | axes(3, cols[1], bottom, y=dict(rows_axis, showticklabels=False))
        | axes(4, cols[2], bottom, y=dict(rows_axis, showticklabels=False))
    )

    data = [
        _cells(nv.q[None, :], dims, unique_labels([query_label]), m, 1),
        _cells(nv.k, dims, labels, m, 2),
        _cells(nv.product, dims, labels, m_prod, 3),
        _bars(nv.scores, labels, "q·k/√d_k", "#8c8c8c"),
        _bars(nv.alpha, labels, "α (softmax)", "#1f4e9c"),
    ]
    query = t("views.neuron.query", label=query_label)
    notes.append(_label(query, (cols[0][0] + cols[1][1]) / 2, top[1], yanchor="bottom"))
    for n in notes[:3]:
        n["y"] = bottom[1]
    layout = dict(
        font=FONT,
        barmode="group",
        height=height,
        legend=legend_below(),
        margin=dict(l=10, r=10, t=60, b=10),
        annotations=notes,
        **layout_axes,
    )
    return figure(data, layout)


def _order(z: np.ndarray, descending: bool) -> list[int]:
    """Flat indices of ``z`` from the head that matters most, heads not reached left out."""
    flat = z.ravel() * (-1 if descending else 1)
    return [int(i) for i in np.argsort(flat, kind="stable") if np.isfinite(flat[i])]


def ablation_rows(found: dict, kind: str, k: int = 5) -> tuple[list[dict], list[tuple]]:
    """The ``k`` heads that matter most and their (layer, head): for our Transformer those
    whose removal lowers log p(translation) most, with the translation re-decoded without
    them; for MiniLM those that move the sentence embedding most, with the token moved most."""
    ours = "delta_log_prob" in found
    z = np.asarray(found["delta_log_prob"][kind] if ours else found["shift"], dtype=float)
    rows, heads = [], []
    for i in _order(z, descending=not ours)[:k]:
        layer, head = divmod(i, z.shape[1])
        row = {t("causal.col_head"): f"L{layer} H{head}"}
        if ours:
            row[t("transformer.col_delta_log_p")] = round(float(z[layer, head]), 3)
            row[t("causal.col_delta_loss")] = round(
                float(found["delta_loss"][kind][layer, head]), 3
            )
            changed = bool(found["changed"][kind][layer, head])
            row[t("transformer.col_changed")] = t("causal.yes") if changed else t("causal.no")
            row[t("transformer.col_ablated")] = found["ablated"][kind][layer][head]
        else:
            moved = found["token_shift"][layer, head]
            row[t("transformer.col_shift")] = round(float(z[layer, head]), 4)
            row[t("transformer.col_moved")] = found["tokens"][int(np.nanargmax(moved))]
            row[t("transformer.col_token_shift")] = round(float(np.nanmax(moved)), 4)
        rows.append(row)
        heads.append((layer, head))
    return rows, heads
