"""Figures of the Watch-attention-learn page: the probe's head maps at one saved step, and
the training curves with that step and the phase-change window marked (plotly; drawing
only — every number comes from the shipped timeline)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from kit.i18n import t

from views.heatmap import axes, cell_domains, figure, log_axis, map_grid, subplot_ref

COLOURS = {2: "#0072B2", 1: "#D55E00"}  # Okabe–Ito blue and vermillion: colour-blind safe
WINDOW = "rgba(230, 159, 0, 0.18)"  # the phase-change band (Okabe–Ito orange)
LOSS_PX = 200  # the live figure's loss curve, above its head maps


def head_panels(maps: np.ndarray, layers) -> list[dict]:
    """``maps [L, H, T, T]`` as map panels over the probe's positions (the caption names its
    tokens), one per head of ``layers``."""
    positions = [str(i) for i in range(maps.shape[-1])]
    return [
        dict(z=m, x=positions, y=positions, title=t("learning.fig.head", layer=layer, head=h))
        for layer, heads in zip(layers, maps, strict=True)
        for h, m in enumerate(heads)
    ]


def head_maps_figure(maps: np.ndarray, title: str) -> go.Figure:
    """Every (layer, head) of ``maps [L, H, T, T]``, a row per layer where the width allows."""
    return map_grid(head_panels(maps, range(len(maps))), columns=maps.shape[1], title=title)


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
        x_axis = log_axis(showticklabels=last, **({} if n == 1 else {"matches": "x"}))
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
    """A live run so far: its held-out loss at the snapshots taken (log step axis) above
    the head maps ``heads [H, T, T]`` of ``layer`` at the latest one."""
    fig = map_grid(head_panels(heads[None], [layer]), title=title, header_px=LOSS_PX)
    plot_h = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    band = (1 - (LOSS_PX - 60) / plot_h, 1)
    n = len(fig.data) + 1
    curve = dict(x=np.maximum(steps, 1), y=loss, mode="lines+markers", showlegend=False)
    fig.add_scatter(**curve, line=dict(color=COLOURS[2]), **subplot_ref(n))
    loss_axis = dict(title=dict(text=t("learning.fig.curve_loss")))
    fig.update_layout(axes(n, (0.12, 0.9), band, x=log_axis(), y=loss_axis))
    return fig
