"""Figures of the positional-encoding page: curves, tables and similarity maps."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from kit.i18n import t
from kit.presenter import palette

from engine import positional
from views.heatmap import FONT, axes, cell_domains, figure, heatmap, subplot_ref

PANEL_PX = 62  # one dimension's plot: a wave and its three ticks read at a glance
NOTE_PX = 28  # the panel's name above it, in the projector's 18-px type
DOTS_UP_TO = 160  # whole positions drawn as dots up to here; beyond, they would fuse
SAMPLES_PER_POSITION = 8  # the smooth turn between two whole positions
MAX_SAMPLES = 1200  # a panel's line no finer than a wide screen's pixels


def curves_figure(pe: np.ndarray, dims: list[int]) -> go.Figure:
    """PE(pos, d) against the position, one panel per chosen dimension d, stacked on one
    position axis, each named with its wavelength 2π/ω_i.

    Overlaid, four fast waves drawn through their integer samples were a zigzag tangle
    (sin pos, period 6.3, turns a sixth of a circle between samples) and the theme paired
    unrelated dimensions by colour. Here a panel holds one clock: its smooth turn over
    real positions, the encoding's values at whole positions as dots, and the colour of
    its frequency i, shared by the sin/cos pair and no other. Panels run from the fastest
    clock down, whatever order the dimensions were picked in."""
    dims = sorted(dims)
    (n, d_model), rows = pe.shape, max(len(dims), 1)
    omega = positional.frequencies(d_model)
    plots_px = rows * PANEL_PX + (rows - 1) * NOTE_PX  # the panels and the notes between
    ys = cell_domains([1] * rows, NOTE_PX / plots_px, reverse=True)
    colours = palette("qualitative")
    pairs = sorted({d // 2 for d in dims})
    data, layout, notes = [], {}, []
    for row, d in enumerate(dims, start=1):
        i, fn = d // 2, ("sin", "cos")[d % 2]
        colour = colours[pairs.index(i) % len(colours)]
        data += _clock(pe, d, colour, row)
        name = t("views.positional.curve", d=d, fn=fn, i=i)
        wavelength = 2 * np.pi / omega[i]
        turn = t(
            "views.positional.wavelength",
            p=f"{wavelength:,.1f}" if wavelength < 100 else f"{wavelength:,.0f}",
        )
        notes.append(
            dict(
                text=f"{name} · {turn}",
                showarrow=False,
                xref="paper",
                yref="paper",
                x=0,
                y=ys[row - 1][1],
                xanchor="left",
                yanchor="bottom",
            )
        )
        last = row == len(dims)
        x = dict(
            range=[-0.5, n - 0.5], showticklabels=last, **({} if row == 1 else {"matches": "x"})
        )
        if last:
            x["title"] = dict(text=t("views.axis.position"))
        y = dict(range=[-1.2, 1.2], tickvals=[-1, 0, 1], zeroline=True)
        layout |= axes(row, (0, 1), ys[row - 1], x=x, y=y)
    layout |= dict(
        annotations=notes,
        font=FONT,
        height=plots_px + NOTE_PX + 10 + 50,
        margin=dict(l=40, r=10, t=NOTE_PX + 10, b=50),
        showlegend=False,
    )
    return figure(data, layout)


def _clock(pe: np.ndarray, d: int, colour: str, row: int) -> list[dict]:
    """One dimension's traces: up to ``DOTS_UP_TO`` positions, the function over real
    positions (a line no finer than a wide screen's pixels) and its values at whole
    positions as dots (the hover reads these); beyond, the samples alone, as a line."""
    (n, d_model), where = pe.shape, subplot_ref(row)
    pos, values = np.arange(n, dtype=np.float32), pe[:, d].astype(np.float32)  # half the bytes
    if n > DOTS_UP_TO:
        return [
            dict(type="scatter", x=pos, y=values, mode="lines", line=dict(color=colour), **where)
        ]
    x = np.linspace(0, n - 1, min(SAMPLES_PER_POSITION * (n - 1) + 1, MAX_SAMPLES))
    smooth = positional.encode(x, d_model, [d])[:, 0].astype(np.float32)
    x = x.astype(np.float32)
    line = dict(color=colour, width=1.5)
    return [
        dict(type="scatter", x=x, y=smooth, mode="lines", line=line, hoverinfo="skip", **where),
        dict(
            type="scatter",
            x=pos,
            y=values,
            mode="markers",
            marker=dict(color=colour, size=5),
            **where,
        ),
    ]


# Positions named at round steps, about a dozen an axis: Plotly thins a category axis by
# whatever step fits, and 100 positions read 0, 3, 6 … 99.
ROUND_STEPS = (1, 2, 5, 10, 20, 50, 100, 200, 500)
POSITION_LABELS = 12


def round_positions(fig: go.Figure, n: int, *axes: str) -> go.Figure:
    """``fig`` with its position ``axes`` ("xaxis", "yaxis") labelled 0, step, 2·step …"""
    step = next((s for s in ROUND_STEPS if s * POSITION_LABELS >= n), ROUND_STEPS[-1])
    return fig.update_layout({a: dict(tickmode="linear", tick0=0, dtick=step) for a in axes})


def table_figure(table: np.ndarray, title: str, height: int = 520) -> go.Figure:
    """Positions down, dimensions across."""
    fig = heatmap(
        table,
        [f"d{i}" for i in range(table.shape[1])],
        [str(p) for p in range(table.shape[0])],
        title=title,
        x_title=t("views.axis.dimension"),
        y_title=t("views.axis.position"),
        value_name="PE",
        diverging=True,
        annotate=False,
        height=height,
    )
    return round_positions(fig, table.shape[0], "yaxis")


def similarity_figure(sim: np.ndarray, title: str, value_name: str, **kw) -> go.Figure:
    """A position × position similarity."""
    labels = [str(p) for p in range(sim.shape[0])]
    fig = heatmap(
        sim,
        labels,
        labels,
        title=title,
        x_title=t("views.positional.position_j"),
        y_title=t("views.positional.position_i"),
        value_name=value_name,
        annotate=False,
        **kw,
    )
    return round_positions(fig, sim.shape[0], "xaxis", "yaxis")


def rotation_figure(M: np.ndarray, k: int) -> go.Figure:
    """The first dimensions of M_k: 2 × 2 rotation blocks on the diagonal."""
    show = M.shape[0]
    dims = [f"d{i}" for i in range(show)]
    return heatmap(
        M,
        dims,
        dims,
        title=t("views.positional.rotation_title", k=k, n=show),
        x_title=t("views.positional.input_dim"),
        y_title=t("views.positional.output_dim"),
        value_name="M",
        diverging=True,
        annotate=show <= 8,
    )
