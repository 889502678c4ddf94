"""AttentionViz-style scatter of one head's queries and keys in one 2-D embedding."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from kit.i18n import t
from kit.presenter import presenting

from views.heatmap import SEQUENTIAL, figure
from views.style import FONT, legend_below

QUERY_SYMBOL, KEY_SYMBOL = "circle", "diamond-open"
# A point's token above it: small on a screen, where tokens sit close; larger on a
# projector, where 11 px read as specks from the back of a room.
LABEL_PX, PRESENTER_LABEL_PX = 11, 14
TOKEN_COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


def qk_scatter(
    emb,
    query_labels: Sequence[str],
    key_labels: Sequence[str],
    *,
    colour_by: str = "position",
    title: str = "",
    label_px: int | None = None,
) -> go.Figure:
    """Queries as filled circles, keys as open diamonds; colour = position or token; each
    named in ``label_px`` type (default: the screen's, or the projector's when presenting)."""
    label_px = label_px or (PRESENTER_LABEL_PX if presenting() else LABEL_PX)
    data = []
    parts = (
        ("query", t("views.qk.queries"), emb.queries_2d, list(query_labels), QUERY_SYMBOL),
        ("key", t("views.qk.keys"), emb.keys_2d, list(key_labels), KEY_SYMBOL),
    )
    vocab = {t: i for i, t in enumerate(dict.fromkeys([*query_labels, *key_labels]))}
    n_max = max(len(query_labels), len(key_labels), 2) - 1
    for role, plural, xy, labels, symbol in parts:
        pos = np.arange(len(labels))
        if colour_by == "position":
            marker = dict(
                color=pos,
                colorscale=SEQUENTIAL,
                cmin=0,
                cmax=n_max,
                colorbar=dict(title=t("views.axis.position")) if role == "query" else None,
                showscale=role == "query",
            )
        else:
            marker = dict(color=[TOKEN_COLOURS[vocab[t] % len(TOKEN_COLOURS)] for t in labels])
        data.append(
            dict(
                type="scatter",
                x=xy[:, 0],
                y=xy[:, 1],
                mode="markers+text",
                name=plural,
                text=[html.escape(t) for t in labels],
                textposition="top center",
                textfont=dict(size=label_px),
                marker=dict(symbol=symbol, size=12, line=dict(width=2), **marker),
                customdata=pos,
                hovertemplate=t("views.qk.hover_" + role)
                + " %{text} ("
                + t("views.axis.position")
                + " %{customdata})<extra></extra>",
            )
        )
    layout = dict(
        title=dict(text=title),
        font=FONT,
        height=560,
        xaxis=dict(title=dict(text="UMAP 1")),
        yaxis=dict(title=dict(text="UMAP 2")),
        legend=legend_below(),
        margin=dict(l=10, r=10, t=60, b=10),
    )
    return figure(data, layout)


def dot_distance_figure(emb, mask: np.ndarray | None = None) -> go.Figure:
    """Each allowed (query, key) pair: its dot product against its embedded distance."""
    allowed = np.ones_like(emb.dot, bool) if mask is None else np.asarray(mask, bool)
    points = dict(
        type="scattergl",
        x=emb.dot[allowed],
        y=emb.distance[allowed],
        mode="markers",
        marker=dict(size=5, opacity=0.5, color="#1f4e9c"),
        hovertemplate="q·k = %{x:.2f}<br>" + t("views.qk.distance") + " = %{y:.2f}<extra></extra>",
    )
    layout = dict(
        title=dict(text=t("views.qk.pearson", r=f"{emb.correlation:+.2f}")),
        xaxis=dict(title=dict(text="q · k")),
        yaxis=dict(title=dict(text=t("views.qk.embedded_distance"))),
        font=FONT,
        height=380,
        margin=dict(l=10, r=10, t=60, b=10),
    )
    return figure([points], layout)
