"""The attention-basics walkthrough, one step at a time: each step's text and figures."""

from __future__ import annotations

import math

import plotly.graph_objects as go

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
]


def entropy_figure(tokens, entropy, entropy_unscaled, uniform: float) -> go.Figure:
    """Row entropy with and without scaling; the dashed line is a uniform row."""
    ys = unique_labels(tokens)
    bars = [
        dict(type="bar", x=list(x), y=ys, orientation="h", name=name, marker=dict(color=c))
        for x, name, c in (
            (entropy, "scaled", "#1f77b4"),
            (entropy_unscaled, "unscaled", "#ff7f0e"),
        )
    ]
    uniform_line = dict(
        type="line", x0=uniform, x1=uniform, y0=0, y1=1, yref="paper", line=dict(dash="dash")
    )
    layout = dict(
        title=dict(text="Row entropy (nats)"),
        barmode="group",
        font=FONT,
        yaxis=dict(autorange="reversed", type="category"),
        height=fitted_height(len(ys)),
        margin=dict(l=10, r=10, t=60, b=10),
        legend=dict(orientation="h"),
        shapes=[uniform_line],
        annotations=[
            dict(text="uniform", x=uniform, y=1, yref="paper", showarrow=False, yanchor="bottom")
        ],
    )
    return figure(bars, layout)


def _matrix(z, x, y, title, value_name, **kw):
    return heatmap(
        z, x, y, title=title, x_title="dimension", y_title="token", value_name=value_name, **kw
    )


def step(index: int, trace) -> tuple[str, list[tuple[str, go.Figure]]]:
    """(markdown above the figures, [(key, figure)] side by side) for walkthrough step ``index``."""
    tokens, d_k = trace.inputs["tokens"], trace.inputs["d_k"]
    head, n_heads = trace.inputs["head"], trace.inputs["n_heads"]
    v, m = trace.vectors, trace.metrics
    dims = [f"d{i}" for i in range(v["X"].shape[1])]
    kdims = [f"d{i}" for i in range(d_k)]
    if index == 0:
        text = "One fixed random vector per word, plus the sinusoidal positional encoding."
        return text, [
            ("fig-x", _matrix(v["X"], dims, tokens, "X = embedding + PE", "x", diverging=True))
        ]
    if index == 1:
        text = f"Q = X W^Q, K = X W^K, V = X W^V for head {head}: each is tokens × d_k."
        return text, [
            (f"fig-{n}", _matrix(v[n], kdims, tokens, n, n.lower(), diverging=True, annotate=False))
            for n in ("Q", "K", "V")
        ]
    if index == 2:
        text = "score_ij = q_i · k_j: how well query i matches key j."
        fig = heatmap(
            v["scores"], tokens, tokens, title="scores = Q Kᵀ", value_name="score", diverging=True
        )
        return text, [("fig-scores", fig)]
    if index == 3:
        text = (
            f"Dot products of d_k = {d_k} random components grow like √d_k: here their spread "
            f"is {m['score_std']:.2f}, and {m['scaled_std']:.2f} after dividing by "
            f"√{d_k} = {math.sqrt(d_k):.2f}."
        )
        fig = heatmap(
            v["scaled"], tokens, tokens, title="QKᵀ / √d_k", value_name="score", diverging=True
        )
        return text, [("fig-scaled", fig)]
    if index == 4:
        text = "Each row becomes a distribution over the keys: the attention weights α."
        return text, [
            ("fig-softmax", attention_figure(trace.maps["softmax"], title="α = softmax(QKᵀ/√d_k)"))
        ]
    if index == 5:
        text = "Each output row is Σ_j α_ij v_j: a mixture of the value vectors."
        return text, [
            ("fig-out", _matrix(v["output"], kdims, tokens, "output = α V", "out", diverging=True))
        ]
    if index == 6:
        text = (
            f"Without 1/√d_k the softmax **saturates**: the mean largest weight per row rises "
            f"from **{m['mean_max_weight']:.2f}** to **{m['mean_max_weight_unscaled']:.2f}**, "
            f"and the mean row entropy falls from **{m['mean_entropy']:.2f}** to "
            f"**{m['mean_entropy_unscaled']:.2f}** nats (uniform = {m['uniform_entropy']:.2f}). "
            "Saturated rows have near-zero gradients, which is why the paper scales."
        )
        entropy = entropy_figure(tokens, v["entropy"], v["entropy_unscaled"], m["uniform_entropy"])
        unscaled = attention_figure(trace.maps["unscaled"], title="softmax(QKᵀ), unscaled")
        return text, [("fig-unscaled", unscaled), ("fig-entropy", entropy)]
    if index == 7:
        text = "A decoder may not look ahead: keys after the query get exactly zero weight."
        return text, [
            ("fig-causal", attention_figure(trace.maps["causal"], title="causal softmax(QKᵀ/√d_k)"))
        ]
    amap = trace.maps["all_heads"]
    return "", [
        (
            f"fig-head-{h}",
            attention_figure(amap, 0, h, title=f"head {h}", annotate=False, height=320),
        )
        for h in range(n_heads)
    ]
