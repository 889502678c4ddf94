"""Figures of the positional-encoding page: curves, tables and similarity maps."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from views.heatmap import FONT, figure, heatmap


def curves_figure(pe: np.ndarray, dims: list[int]) -> go.Figure:
    """PE(pos, d) against the position for each chosen dimension d."""
    pos = np.arange(pe.shape[0])
    lines = [
        dict(
            type="scatter",
            x=pos,
            y=pe[:, d],
            mode="lines",
            name=f"dim {d} ({'sin' if d % 2 == 0 else 'cos'}, i={d // 2})",
        )
        for d in dims
    ]
    layout = dict(
        xaxis=dict(title=dict(text="position")),
        yaxis=dict(title=dict(text="PE")),
        font=FONT,
        height=420,
        margin=dict(l=10, r=10, t=30, b=10),
    )
    return figure(lines, layout)


def table_figure(table: np.ndarray, title: str, height: int = 520) -> go.Figure:
    """Positions down, dimensions across."""
    return heatmap(
        table,
        [f"d{i}" for i in range(table.shape[1])],
        [str(p) for p in range(table.shape[0])],
        title=title,
        x_title="dimension",
        y_title="position",
        value_name="PE",
        diverging=True,
        annotate=False,
        height=height,
    )


def similarity_figure(sim: np.ndarray, title: str, value_name: str, **kw) -> go.Figure:
    """A position × position similarity."""
    labels = [str(p) for p in range(sim.shape[0])]
    return heatmap(
        sim,
        labels,
        labels,
        title=title,
        x_title="position j",
        y_title="position i",
        value_name=value_name,
        annotate=False,
        **kw,
    )


def rotation_figure(M: np.ndarray, k: int) -> go.Figure:
    """The first dimensions of M_k: 2 × 2 rotation blocks on the diagonal."""
    show = M.shape[0]
    dims = [f"d{i}" for i in range(show)]
    return heatmap(
        M,
        dims,
        dims,
        title=f"M_{k}, first {show} dimensions (2×2 rotation blocks)",
        x_title="input dim",
        y_title="output dim",
        value_name="M",
        diverging=True,
        annotate=show <= 8,
    )
