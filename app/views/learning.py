"""Figures of the Watch-attention-learn page: the probe's head maps at one saved step, and
the training curves with that step and the phase-change window marked (plotly; drawing
only — every number comes from the shipped timeline)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from kit.i18n import t
from plotly.subplots import make_subplots

from views.heatmap import SEQUENTIAL, axes, cell_domains, figure, subplot_ref

COLOURS = {2: "#0072B2", 1: "#D55E00"}  # Okabe–Ito blue and vermillion: colour-blind safe
WINDOW = "rgba(230, 159, 0, 0.18)"  # the phase-change band (Okabe–Ito orange)


def head_maps_figure(maps: np.ndarray, title: str, *, stacked: bool = False) -> go.Figure:
    """``maps [L, H, T, T]`` as an L × H grid of heatmaps over the probe's positions;
    ``stacked`` puts every head in one column (a narrow figure beside a wide one).

    Plain plotly.js dicts, unvalidated (``views.heatmap.figure``): this figure is redrawn
    on every slider move, and make_subplots alone costs more than the rest of the rerun."""
    n_layers, n_heads = maps.shape[:2]
    rows, cols = (n_layers * n_heads, 1) if stacked else (n_layers, n_heads)
    ys = cell_domains([1] * rows, 0.1, reverse=True)
    xs = cell_domains([1] * cols, 0.06)
    # Positions only on hover: a token label per cell would multiply the bytes sent on
    # every slider move by ten; the caption names the probe's tokens.
    hover = t("learning.fig.map_hover") + "<extra></extra>"
    data, layout, notes = [], {}, []
    for n, (layer, head) in enumerate(np.ndindex(n_layers, n_heads), start=1):
        r, c = divmod(n - 1, cols)
        data.append(
            dict(
                type="heatmap",
                z=maps[layer, head].astype(np.float32),
                coloraxis="coloraxis",
                hovertemplate=hover,
                **subplot_ref(n),
            )
        )
        layout |= axes(n, xs[c], ys[r], y=dict(autorange="reversed"))
        notes.append(
            dict(
                text=t("learning.fig.head", layer=layer, head=head),
                showarrow=False,
                xref="paper",
                yref="paper",
                x=sum(xs[c]) / 2,
                y=ys[r][1],
                xanchor="center",
                yanchor="bottom",
                font=dict(size=13),
            )
        )
    layout |= dict(
        title=dict(text=title),
        annotations=notes,
        coloraxis=dict(colorscale=SEQUENTIAL, cmin=0, cmax=1, colorbar=dict(title=dict(text="α"))),
        height=300 * max(rows, 2) + 80,
        margin=dict(l=40, r=10, t=90, b=30),
    )
    return figure(data, layout)


def curves_figure(
    series: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]],
    current: int,
    window: dict | None,
) -> go.Figure:
    """One panel per measure, each holding a line per model (2 layers, 1 layer):
    ``series[measure][n_layers] = (steps, values)``. Steps on a log axis (step 0 drawn at
    1); the current step a dashed line, the phase-change window a shaded band. Plain
    unvalidated dicts, like :func:`head_maps_figure`: it is redrawn on every slider move."""
    measures = list(series)
    ys = cell_domains([1] * len(measures), 0.045, reverse=True)
    data, layout, shapes, notes = [], {}, [], []
    for n, measure in enumerate(measures, start=1):
        for n_layers, (steps, values) in series[measure].items():
            data.append(
                dict(
                    type="scatter",
                    x=np.maximum(steps, 1),
                    y=values,
                    mode="lines+markers",
                    name=t("learning.fig.model", layers=n_layers),
                    legendgroup=str(n_layers),
                    showlegend=n == 1,
                    line=dict(color=COLOURS[n_layers]),
                    marker=dict(size=5),
                    **subplot_ref(n),
                )
            )
        last = n == len(measures)
        x_axis = dict(type="log", showticklabels=last, **({} if n == 1 else {"matches": "x"}))
        if last:
            x_axis["title"] = dict(text=t("learning.fig.step_axis"))
        layout |= axes(n, (0, 1), ys[n - 1], x=x_axis)
        ref = "" if n == 1 else str(n)
        band = dict(xref=f"x{ref}", yref=f"y{ref} domain", y0=0, y1=1)
        if window is not None:  # shapes take steps on a log axis; annotations take log10
            x0, x1 = max(window["start"], 1), window["end"]
            shapes.append(
                dict(type="rect", x0=x0, x1=x1, fillcolor=WINDOW, line=dict(width=0), **band)
            )
        at = max(current, 1)
        shapes.append(dict(type="line", x0=at, x1=at, line=dict(dash="dash", color="#444"), **band))
        notes.append(
            dict(
                text=t(f"learning.fig.curve_{measure}"),
                showarrow=False,
                xref="paper",
                yref="paper",
                x=0.5,
                y=ys[n - 1][1],
                xanchor="center",
                yanchor="bottom",
                font=dict(size=13),
            )
        )
    if window is not None:
        notes.append(
            dict(
                text=t("learning.fig.window"),
                showarrow=False,
                xref="x",
                yref="y domain",
                x=np.log10(max(window["start"], 1)),
                y=0,
                xanchor="left",
                yanchor="bottom",
                font=dict(size=12),
            )
        )
    layout |= dict(
        shapes=shapes,
        annotations=notes,
        height=190 * len(measures) + 90,
        margin=dict(l=50, r=10, t=60, b=50),
        legend=dict(orientation="h", y=1.04, x=0),
        hovermode="x unified",
    )
    return figure(data, layout)


def live_figure(
    steps: np.ndarray, loss: np.ndarray, heads: np.ndarray, layer: int, title: str
) -> go.Figure:
    """A live run so far: its held-out loss at the snapshots taken (log step axis) and the
    head maps ``heads [H, T, T]`` of ``layer`` at the latest one."""
    n_heads = heads.shape[0]
    names = [t("learning.fig.curve_loss")]
    names += [t("learning.fig.head", layer=layer, head=h) for h in range(n_heads)]
    fig = make_subplots(1, 1 + n_heads, subplot_titles=names, horizontal_spacing=0.06)
    fig.add_trace(
        go.Scatter(
            x=np.maximum(steps, 1),
            y=loss,
            mode="lines+markers",
            showlegend=False,
            line=dict(color=COLOURS[2]),
        ),
        1,
        1,
    )
    for h in range(n_heads):
        fig.add_trace(go.Heatmap(z=heads[h].astype(np.float32), coloraxis="coloraxis"), 1, h + 2)
        fig.update_yaxes(autorange="reversed", row=1, col=h + 2)
    fig.update_xaxes(type="log", row=1, col=1)
    fig.update_layout(
        title=dict(text=title),
        coloraxis=dict(colorscale=SEQUENTIAL, cmin=0, cmax=1, colorbar=dict(title="α")),
        height=340,
        margin=dict(l=40, r=10, t=80, b=30),
    )
    return fig
