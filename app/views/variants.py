"""Figures of the Variants lab beside its maps (views.heatmap draws those): cost charts."""

from __future__ import annotations

import numpy as np
from kit.i18n import t

from views.heatmap import FONT, figure, log_axis

# A variant's marker when the colours run out: colour and shape together tell 40 apart.
SYMBOLS = ("circle", "diamond", "square", "triangle-up")


def loglog_figure(
    rows: list[dict], y: str, *, title: str, y_title: str, predicted: str | None = None
):
    """One line per variant of ``y`` against n on log-log axes (predicted as dashes)."""
    lines = []
    for name in dict.fromkeys(r["variant"] for r in rows):
        pts = sorted((r for r in rows if r["variant"] == name), key=lambda r: r["n"])
        ns = [r["n"] for r in pts]
        lines.append(
            dict(
                type="scatter",
                x=ns,
                y=[r[y] for r in pts],
                mode="lines+markers",
                name=name,
                legendgroup=name,
            )
        )
        if predicted:
            lines.append(
                dict(
                    type="scatter",
                    x=ns,
                    y=[r[predicted] for r in pts],
                    mode="lines",
                    name=t("views.variants.model_line", name=name),
                    legendgroup=name,
                    line=dict(dash="dash"),
                    opacity=0.6,
                )
            )
    layout = dict(
        title=dict(text=title),
        font=FONT,
        height=440,
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis=log_axis(title=dict(text=t("views.variants.length_axis"))),
        yaxis=log_axis(title=dict(text=y_title)),
    )
    return figure(lines, layout)


def per_token_figure(result: dict):
    """Decoding time per token vs position, with and without the KV cache."""
    lines = []
    for key, name in (
        ("step_seconds_no_cache", t("views.variants.no_cache")),
        ("step_seconds_cache", t("views.variants.kv_cache")),
    ):
        ms = 1000 * np.asarray(result[key])
        lines.append(
            dict(type="scatter", x=np.arange(1, len(ms) + 1), y=ms, mode="lines", name=name)
        )
    layout = dict(
        title=dict(text=t("views.variants.per_token_title")),
        font=FONT,
        height=380,
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis=dict(title=dict(text=t("views.variants.position_t"))),
        yaxis=dict(title=dict(text=t("views.variants.ms_per_token"))),
    )
    return figure(lines, layout)


def accuracy_cost_figure(rows: list[dict], cost: str, *, title: str, x_title: str):
    """Accuracy (mean over seeds, bars: the seeds' range) against a cost, one point per
    variant named in the legend (labels beside the points piled into each other)."""
    pts = [r for r in rows if r[cost] and r[cost] > 0]
    data = [
        dict(
            type="scatter",
            x=[r[cost]],
            y=[r["accuracy"]],
            error_y=dict(
                type="data",
                symmetric=False,
                array=[r["max"] - r["accuracy"]],
                arrayminus=[r["accuracy"] - r["min"]],
            ),
            name=r["variant"],
            mode="markers",
            marker=dict(size=12, symbol=SYMBOLS[i // 10 % len(SYMBOLS)]),
            hovertemplate=r["variant"] + ": %{y:.3f} at %{x:.3g}<extra></extra>",
        )
        for i, r in enumerate(pts)
    ]
    layout = dict(
        title=dict(text=title),
        font=FONT,
        height=600,
        margin=dict(l=10, r=10, t=60, b=10),
        legend=dict(orientation="h", y=-0.2),  # below: beside, it takes a third of the width
        xaxis=log_axis(title=dict(text=x_title)),
        yaxis=dict(title=dict(text=t("variants.accuracy_axis")), range=[-0.05, 1.1]),
    )
    return figure(data, layout)


def layer_error_figure(errors: dict[str, list[float]]):
    """Relative error of each layer's output against the original model, one line each."""
    lines = [
        dict(
            type="scatter",
            x=list(range(1, len(e) + 1)),
            y=e,
            mode="lines+markers",
            name=name,
        )
        for name, e in errors.items()
    ]
    layout = dict(
        title=dict(text=t("variants.swap_layer_title")),
        font=FONT,
        height=400,
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis=dict(title=dict(text=t("variants.swap_layer_axis")), dtick=1),
        yaxis=dict(title=dict(text=t("variants.swap_error_axis"))),
    )
    return figure(lines, layout)


def cosine_figure(cosines: dict[str, float]):
    """The sentence embedding's cosine against the original model, one bar per variant."""
    names = list(cosines)
    bars = dict(
        type="bar",
        x=[cosines[n] for n in names],
        y=names,
        orientation="h",
        text=[f"{cosines[n]:.4f}" for n in names],
        textposition="auto",
    )
    layout = dict(
        title=dict(text=t("variants.swap_cosine_title")),
        font=FONT,
        height=int(120 + 32 * len(names)),
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis=dict(title=dict(text="cosine"), range=[min(0.0, *cosines.values()), 1.0]),
        yaxis=dict(autorange="reversed", type="category"),
    )
    return figure([bars], layout)
