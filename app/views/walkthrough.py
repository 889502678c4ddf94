"""Figures specific to the attention-basics walkthrough."""

from __future__ import annotations

import plotly.graph_objects as go

from views.heatmap import FONT, fitted_height, unique_labels


def entropy_figure(tokens, entropy, entropy_unscaled, uniform: float) -> go.Figure:
    """Row entropy with and without scaling; the dashed line is a uniform row."""
    ys = unique_labels(tokens)
    fig = go.Figure()
    fig.add_bar(x=list(entropy), y=ys, orientation="h", name="scaled", marker_color="#1f77b4")
    fig.add_bar(
        x=list(entropy_unscaled), y=ys, orientation="h", name="unscaled", marker_color="#ff7f0e"
    )
    fig.add_vline(x=uniform, line_dash="dash", annotation_text="uniform")
    fig.update_layout(
        title="Row entropy (nats)",
        barmode="group",
        font=FONT,
        yaxis=dict(autorange="reversed", type="category"),
        height=fitted_height(len(ys)),
        margin=dict(l=10, r=10, t=60, b=10),
        legend=dict(orientation="h"),
    )
    return fig
