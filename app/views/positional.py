"""Figures of the positional-encoding page: curves, tables and similarity maps."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from kit.i18n import t

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
            name=t("views.positional.curve", d=d, fn="sin" if d % 2 == 0 else "cos", i=d // 2),
        )
        for d in dims
    ]
    layout = dict(
        xaxis=dict(title=dict(text=t("views.axis.position"))),
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
        x_title=t("views.axis.dimension"),
        y_title=t("views.axis.position"),
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
        x_title=t("views.positional.position_j"),
        y_title=t("views.positional.position_i"),
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
        title=t("views.positional.rotation_title", k=k, n=show),
        x_title=t("views.positional.input_dim"),
        y_title=t("views.positional.output_dim"),
        value_name="M",
        diverging=True,
        annotate=show <= 8,
    )
