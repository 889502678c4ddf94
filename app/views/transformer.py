"""Figures for the Transformer page: the layer × head grid and the neuron view."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from views.heatmap import DIVERGING, FONT, SEQUENTIAL, unique_labels

GRID_SIDE = 32  # thumbnails show at most 32 × 32 cells; longer inputs are block-averaged


def pool(w: np.ndarray, side: int = GRID_SIDE) -> tuple[np.ndarray, int]:
    """Block-average the last two axes so neither exceeds ``side``; returns (w, factor)."""
    f = max(1, -(-max(w.shape[-2:]) // side))  # ceil
    if f == 1:
        return w, 1
    Q, K = w.shape[-2:]
    pad = [(0, 0)] * (w.ndim - 2) + [(0, (-Q) % f), (0, (-K) % f)]
    padded = np.pad(w, pad, constant_values=np.nan)
    shape = padded.shape[:-2] + (padded.shape[-2] // f, f, padded.shape[-1] // f, f)
    return np.nanmean(padded.reshape(shape), axis=(-3, -1)), f


def head_grid(amap, title: str) -> go.Figure:
    """Every (layer, head) of an AttentionMap as a small heatmap; rows are layers."""
    L, H = amap.shape[:2]
    w, f = pool(amap.weights)
    fig = make_subplots(
        rows=L,
        cols=H,
        horizontal_spacing=0.01,
        vertical_spacing=0.02,
        column_titles=list(amap.head_labels),
        row_titles=list(amap.layer_labels),
    )
    for layer in range(L):
        for h in range(H):
            fig.add_trace(
                go.Heatmap(
                    z=w[layer, h],
                    coloraxis="coloraxis",
                    hovertemplate=f"{amap.layer_labels[layer]} {amap.head_labels[h]}<br>"
                    "query %{y} · key %{x}<br>α = %{z:.3f}<extra></extra>",
                ),
                row=layer + 1,
                col=h + 1,
            )
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False, autorange="reversed")
    flags = list(amap.flags) + ([f"thumbnails pooled ×{f}"] if f > 1 else [])
    fig.update_layout(
        title=f"{title}  <sup>[{', '.join(flags)}]</sup>",
        font=FONT,
        coloraxis=dict(colorscale=SEQUENTIAL, cmin=0, cmax=1, colorbar=dict(title="α")),
        height=int(min(1400, 140 + 110 * L * max(1, 6 / H))),
        margin=dict(l=40, r=10, t=70, b=10),
    )
    return fig


def neuron_figure(
    q: np.ndarray,
    k: np.ndarray,
    query_label: str,
    key_labels: Sequence[str],
    mask: np.ndarray | None = None,
) -> go.Figure:
    """bertviz's neuron view for one query: q_i, each k_j, q_i∘k_j, q_i·k_j/√d_k and α_ij.

    q ``[d_k]``, k ``[K, d_k]``; ``mask`` ``[K]`` True where the query may attend.
    """
    d_k = q.shape[0]
    prod = q[None, :] * k  # (K, d_k); its row sums are the dot products
    scores = prod.sum(-1) / np.sqrt(d_k)
    allowed = np.ones(len(k), bool) if mask is None else np.asarray(mask, bool)
    e = np.where(allowed, np.exp(scores - scores[allowed].max()), 0.0)
    alpha = e / e.sum()
    labels = unique_labels(list(key_labels))
    fig = make_subplots(
        rows=2,
        cols=3,
        row_heights=[0.12, 0.88],
        column_widths=[0.4, 0.4, 0.2],
        specs=[[{"colspan": 2}, None, None], [{}, {}, {}]],
        horizontal_spacing=0.04,
        subplot_titles=(
            f"query q  ({query_label})",
            "keys k_j",
            "q ∘ k_j (sums to q·k_j)",
            "q·k_j / √d_k  and  α_ij",
        ),
    )
    m = float(max(np.abs(q).max(), np.abs(k).max(), 1e-9))
    m_prod = float(max(np.abs(prod).max(), 1e-9))
    dims = [str(i) for i in range(d_k)]
    cells = (
        (q[None, :], [query_label], m, 1, 1),
        (k, labels, m, 2, 1),
        (prod, labels, m_prod, 2, 2),
    )
    for z, y, bound, row, col in cells:
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=dims,
                y=y,
                zmin=-bound,
                zmax=bound,
                colorscale=DIVERGING,
                showscale=False,
                hovertemplate="%{y} dim %{x}: %{z:.3f}<extra></extra>",
            ),
            row=row,
            col=col,
        )
    fig.add_trace(
        go.Bar(x=scores, y=labels, orientation="h", name="q·k/√d_k", marker_color="#8c8c8c"),
        row=2,
        col=3,
    )
    fig.add_trace(
        go.Bar(x=alpha, y=labels, orientation="h", name="α (softmax)", marker_color="#1f4e9c"),
        row=2,
        col=3,
    )
    fig.update_yaxes(type="category", row=1, col=1)  # a token such as "3" is a label, not a number
    for col in (1, 2, 3):
        fig.update_yaxes(autorange="reversed", type="category", row=2, col=col)
    fig.update_yaxes(showticklabels=False, row=2, col=2)
    fig.update_yaxes(showticklabels=False, row=2, col=3)
    fig.update_xaxes(showticklabels=False, row=1, col=1)
    fig.update_layout(
        font=FONT,
        barmode="group",
        height=int(min(1000, 260 + 24 * len(k))),
        legend=dict(orientation="h", y=-0.05),
        margin=dict(l=10, r=10, t=60, b=10),
    )
    return fig


def bertviz_arguments(maps: dict) -> dict:
    """bertviz keyword arguments from a Trace's maps (encoder_self, decoder_self, cross)."""
    if set(maps) == {"encoder_self"} or set(maps) == {"decoder_self"}:
        (m,) = maps.values()
        return {"attention": m.weights, "tokens": list(m.query_labels)}
    args = {}
    if "encoder_self" in maps:
        args["encoder_attention"] = maps["encoder_self"].weights
        args["encoder_tokens"] = list(maps["encoder_self"].key_labels)
    if "decoder_self" in maps:
        args["decoder_attention"] = maps["decoder_self"].weights
        args["decoder_tokens"] = list(maps["decoder_self"].query_labels)
    if "cross" in maps:
        args["cross_attention"] = maps["cross"].weights
    return args
