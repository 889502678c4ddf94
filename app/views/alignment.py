"""Figures for the Alignment page: α heatmaps with gold links, the decoding step by step,
the additive score's parts, and the BLEU-by-length curves. They draw a Trace; nothing
here computes attention."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from views.heatmap import DIVERGING, FONT, SEQUENTIAL, heatmap, unique_labels

# Okabe–Ito colours: distinguishable with every common colour-vision deficiency.
SURE, POSSIBLE, ACCENT = "#D55E00", "#56B4E9", "#E69F00"


def alignment_figure(
    weights: np.ndarray,
    src: Sequence[str],
    tgt: Sequence[str],
    *,
    title: str = "",
    flags: Sequence[str] = (),
    sure=(),
    possible=(),
    height: int | None = None,
) -> go.Figure:
    """α_ij with the source on x and the target on y; gold links drawn on top when given
    (sure: orange squares, possible-only: blue circles)."""
    fig = heatmap(
        weights,
        src,
        tgt,
        title=title,
        x_title="source word j",
        y_title="target word i",
        value_name="α_ij",
        zmin=0,
        zmax=1,
        flags=flags,
        height=height,
    )
    xs, ys = unique_labels(list(src)), unique_labels(list(tgt))
    possible_only = set(possible) - set(sure)
    for links, name, symbol, colour in (
        (sure, "gold: sure", "square-open", SURE),
        (possible_only, "gold: possible", "circle-open", POSSIBLE),
    ):
        links = [(j, i) for j, i in links if j < len(xs) and i < len(ys)]
        if links:
            fig.add_trace(
                go.Scatter(
                    x=[xs[j] for j, _ in links],
                    y=[ys[i] for _, i in links],
                    mode="markers",
                    name=name,
                    hoverinfo="name",
                    marker=dict(symbol=symbol, size=22, color=colour, line=dict(width=3)),
                )
            )
    if sure or possible:
        fig.update_layout(
            legend=dict(orientation="h", x=1, xanchor="right", y=1.0, yanchor="bottom")
        )
    return fig


def steps_animation(alpha: np.ndarray, src: Sequence[str], steps: Sequence[str]) -> go.Figure:
    """α_i over the source words, one frame per decoding step, with Plotly's play button."""
    xs = unique_labels(list(src))

    def bar(i):
        return go.Bar(
            x=xs, y=alpha[i], marker_color=ACCENT, hovertemplate="%{x}: α = %{y:.3f}<extra></extra>"
        )

    def label(i):
        return f"step {i + 1}: emits “{steps[i]}”"

    frames = [
        go.Frame(data=[bar(i)], name=str(i), layout=dict(title=label(i))) for i in range(len(steps))
    ]
    fig = go.Figure(data=[bar(0)], frames=frames)
    fig.update_layout(
        title=label(0),
        font=FONT,
        height=420,
        margin=dict(l=10, r=10, t=60, b=10),
        yaxis=dict(range=[0, 1], title="α_ij"),
        xaxis=dict(title="source word j", tickangle=-45),
        updatemenus=[
            dict(
                type="buttons",
                showactive=False,
                x=0,
                y=-0.35,
                xanchor="left",
                buttons=[
                    dict(
                        label="▶ Play",
                        method="animate",
                        args=[None, dict(frame=dict(duration=700, redraw=True), fromcurrent=True)],
                    ),
                    dict(
                        label="Pause",
                        method="animate",
                        args=[[None], dict(mode="immediate", frame=dict(duration=0))],
                    ),
                ],
            )
        ],
        sliders=[
            dict(
                active=0,
                y=-0.35,
                x=0.2,
                len=0.8,
                currentvalue=dict(prefix="step "),
                steps=[
                    dict(
                        label=str(i + 1),
                        method="animate",
                        args=[
                            [str(i)],
                            dict(mode="immediate", frame=dict(duration=0, redraw=True)),
                        ],
                    )
                    for i in range(len(steps))
                ],
            )
        ],
    )
    return fig


def vector_strip(v: np.ndarray, title: str, name: str) -> go.Figure:
    """One vector as a coloured strip (diverging: sign matters)."""
    v = np.asarray(v, dtype=float)[None, :]
    fig = heatmap(
        v,
        [str(k) for k in range(v.shape[1])],
        [name],
        title=title,
        x_title="dimension",
        y_title="",
        value_name=name,
        diverging=True,
        annotate=False,
        height=200,
    )
    fig.update_xaxes(showticklabels=False)
    return fig


def additive_parts_figure(vectors: dict, src: Sequence[str], step: int) -> go.Figure:
    """e_ij = v_aᵀ tanh(W_a s_{i−1} + U_a h_j) at step i, one source word per row:
    U_a h_j, the tanh of the sum, v_a ⊙ tanh (whose sum is e_ij), e_ij, α_ij."""
    Uh = vectors["U_a h"]  # (K, d_a)
    t = vectors["tanh"][step]  # (K, d_a)
    contrib = t * vectors["v_a"][None, :]  # (K, d_a): Σ over d_a gives e_ij
    e = vectors["e"][step]
    alpha = np.exp(e - e.max())
    alpha /= alpha.sum()
    ys = unique_labels(list(src))
    titles = ("U_a h_j", "tanh(W_a s_{i−1} + U_a h_j)", "v_a ⊙ tanh(·)", "e_ij", "α_ij")
    fig = make_subplots(
        rows=1,
        cols=5,
        shared_yaxes=True,
        subplot_titles=titles,
        column_widths=[0.24, 0.24, 0.24, 0.14, 0.14],
        horizontal_spacing=0.02,
    )
    dims = [str(k) for k in range(Uh.shape[1])]
    for col, z in ((1, Uh), (2, t), (3, contrib)):
        m = float(np.abs(z).max()) or 1.0
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=dims,
                y=ys,
                colorscale=DIVERGING,
                zmin=-m,
                zmax=m,
                showscale=False,
                hovertemplate="%{y} · dim %{x}: %{z:.3f}<extra></extra>",
            ),
            row=1,
            col=col,
        )
    for col, x, colour, sym in ((4, e, SURE, "e"), (5, alpha, ACCENT, "α")):
        fig.add_trace(
            go.Bar(
                x=x,
                y=ys,
                orientation="h",
                marker_color=colour,
                hovertemplate=f"%{{y}}: {sym} = %{{x:.3f}}<extra></extra>",
            ),
            row=1,
            col=col,
        )
    fig.update_xaxes(showticklabels=False, row=1, col=1)
    fig.update_xaxes(showticklabels=False, row=1, col=2)
    fig.update_xaxes(showticklabels=False, row=1, col=3)
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_layout(
        font=FONT,
        showlegend=False,
        margin=dict(l=10, r=10, t=50, b=10),
        height=int(min(900, max(320, 120 + 28 * len(ys)))),
    )
    return fig


def bleu_by_length_figure(results: dict[str, dict]) -> go.Figure:
    """BLEU per source-length bucket, one line per model (Bahdanau et al. Figure 2)."""
    fig = go.Figure()
    dashes = ("solid", "dash", "dot", "dashdot", "longdash")
    for k, (name, r) in enumerate(results.items()):
        buckets = list(r["bleu_by_length"])
        fig.add_trace(
            go.Scatter(
                x=buckets,
                y=[r["bleu_by_length"][b]["bleu"] for b in buckets],
                name=name,
                mode="lines+markers",
                line=dict(dash=dashes[k % len(dashes)], width=3),
                marker=dict(size=10),
                hovertemplate="%{x} words: BLEU %{y:.1f}<extra>" + name + "</extra>",
            )
        )
    fig.update_layout(
        font=FONT,
        height=420,
        xaxis_title="source sentence length (words)",
        yaxis=dict(title="BLEU (test split)", range=[0, 102]),
        legend=dict(orientation="h", y=-0.3),
        margin=dict(l=10, r=10, t=30, b=10),
        colorway=[SURE, POSSIBLE, ACCENT, "#009E73", "#CC79A7"],
    )
    return fig


__all__ = [
    "SEQUENTIAL",
    "additive_parts_figure",
    "alignment_figure",
    "bleu_by_length_figure",
    "steps_animation",
    "vector_strip",
]
