"""The attention-basics walkthrough, one step at a time: each step's text and figures."""

from __future__ import annotations

import math

import plotly.graph_objects as go
from kit.i18n import t

from views.heatmap import FONT, attention_figure, figure, fitted_height, heatmap, unique_labels

STEPS = [
    "1 · Embeddings X",
    "2 · Queries, keys, values",
    "3 · Scores QKᵀ",
    "4 · Scaling by 1/√d_k",
    "5 · Softmax",
    "6 · Weighted values",
    "Without the scaling",
    "With a causal mask",
    "All heads",
]  # the steps' identities (in the URL and the widget's state); shown through step_name


def step_name(step: str) -> str:
    """A step's name in the reader's language."""
    return t(f"views.walkthrough.step{STEPS.index(step)}")


def entropy_figure(tokens, entropy, entropy_unscaled, uniform: float) -> go.Figure:
    """Row entropy with and without scaling; the dashed line is a uniform row."""
    ys = unique_labels(tokens)
    bars = [
        dict(type="bar", x=list(x), y=ys, orientation="h", name=name, marker=dict(color=c))
        for x, name, c in (
            (entropy, t("views.walkthrough.scaled"), "#1f77b4"),
            (entropy_unscaled, t("views.walkthrough.unscaled"), "#ff7f0e"),
        )
    ]
    uniform_line = dict(
        type="line", x0=uniform, x1=uniform, y0=0, y1=1, yref="paper", line=dict(dash="dash")
    )
    layout = dict(
        title=dict(text=t("views.walkthrough.entropy_title")),
        barmode="group",
        font=FONT,
        yaxis=dict(autorange="reversed", type="category"),
        height=fitted_height(len(ys)),
        margin=dict(l=10, r=10, t=60, b=10),
        legend=dict(orientation="h"),
        shapes=[uniform_line],
        annotations=[
            dict(
                text=t("views.walkthrough.uniform"),
                x=uniform,
                y=1,
                yref="paper",
                showarrow=False,
                yanchor="bottom",
            )
        ],
    )
    return figure(bars, layout)


def _matrix(z, x, y, title, value_name, **kw):
    return heatmap(
        z,
        x,
        y,
        title=title,
        x_title=t("views.axis.dimension"),
        y_title=t("views.axis.token"),
        value_name=value_name,
        **kw,
    )


def step(index: int, trace) -> tuple[str, list[tuple[str, go.Figure]]]:
    """(markdown above the figures, [(key, figure)] side by side) for walkthrough step ``index``."""
    tokens, d_k = trace.inputs["tokens"], trace.inputs["d_k"]
    head, n_heads = trace.inputs["head"], trace.inputs["n_heads"]
    v, m = trace.vectors, trace.metrics
    dims = [f"d{i}" for i in range(v["X"].shape[1])]
    kdims = [f"d{i}" for i in range(d_k)]
    if index == 0:
        text = t("views.walkthrough.text0")
        return text, [
            (
                "fig-x",
                _matrix(v["X"], dims, tokens, t("views.walkthrough.x_title"), "x", diverging=True),
            )
        ]
    if index == 1:
        text = t("views.walkthrough.text1", head=head)
        return text, [
            (f"fig-{n}", _matrix(v[n], kdims, tokens, n, n.lower(), diverging=True, annotate=False))
            for n in ("Q", "K", "V")
        ]
    if index == 2:
        text = t("views.walkthrough.text2")
        fig = heatmap(
            v["scores"],
            tokens,
            tokens,
            title=t("views.walkthrough.scores_title"),
            value_name=t("views.walkthrough.score"),
            diverging=True,
        )
        return text, [("fig-scores", fig)]
    if index == 3:
        text = t(
            "views.walkthrough.text3",
            d_k=d_k,
            spread=f"{m['score_std']:.2f}",
            scaled=f"{m['scaled_std']:.2f}",
            root=f"{math.sqrt(d_k):.2f}",
        )
        fig = heatmap(
            v["scaled"],
            tokens,
            tokens,
            title="QKᵀ / √d_k",
            value_name=t("views.walkthrough.score"),
            diverging=True,
        )
        return text, [("fig-scaled", fig)]
    if index == 4:
        text = t("views.walkthrough.text4")
        return text, [
            ("fig-softmax", attention_figure(trace.maps["softmax"], title="α = softmax(QKᵀ/√d_k)"))
        ]
    if index == 5:
        text = t("views.walkthrough.text5")
        return text, [
            (
                "fig-out",
                _matrix(
                    v["output"],
                    kdims,
                    tokens,
                    t("views.walkthrough.output_title"),
                    "out",
                    diverging=True,
                ),
            )
        ]
    if index == 6:
        text = t(
            "views.walkthrough.text6",
            **{k: f"{m[k]:.2f}" for k in ("mean_max_weight", "mean_max_weight_unscaled")}
            | {k: f"{m[k]:.2f}" for k in ("mean_entropy", "mean_entropy_unscaled")},
            uniform=f"{m['uniform_entropy']:.2f}",
        )
        entropy = entropy_figure(tokens, v["entropy"], v["entropy_unscaled"], m["uniform_entropy"])
        unscaled = attention_figure(
            trace.maps["unscaled"], title=t("views.walkthrough.unscaled_title")
        )
        return text, [("fig-unscaled", unscaled), ("fig-entropy", entropy)]
    if index == 7:
        text = t("views.walkthrough.text7")
        return text, [
            (
                "fig-causal",
                attention_figure(trace.maps["causal"], title=t("views.walkthrough.causal_title")),
            )
        ]
    amap = trace.maps["all_heads"]
    return "", [
        (
            f"fig-head-{h}",
            attention_figure(
                amap, 0, h, title=t("views.walkthrough.head", h=h), annotate=False, height=320
            ),
        )
        for h in range(n_heads)
    ]
