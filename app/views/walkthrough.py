"""The attention-basics walkthrough, one step at a time: each step's text and figures."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from kit.i18n import t
from kit.presenter import QUALITATIVE

from views.heatmap import (
    FONT,
    NARROW_PX,
    TITLE_FONT,
    bar_px,
    cell_domains,
    figure,
    fitted_height,
    heatmap,
    map_figure,
    map_grid,
    panel_title,
    unique_labels,
)

PANEL_GAP_PX = 12  # between Q, K and V: their maps apart, their ticks clear

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
            (entropy, t("views.walkthrough.scaled"), QUALITATIVE[0]),
            (entropy_unscaled, t("views.walkthrough.unscaled"), QUALITATIVE[1]),
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
    """A token × dimension matrix (X, Q, K, V, the output): signed, so diverging."""
    return heatmap(
        z,
        x,
        y,
        title=title,
        x_title=t("views.axis.dimension"),
        y_title=t("views.axis.token"),
        value_name=value_name,
        diverging=True,
        **kw,
    )


def _facts(trace) -> dict:
    """What every step reads from the walkthrough's Trace."""
    return dict(
        tokens=trace.inputs["tokens"],
        d_k=trace.inputs["d_k"],
        v=trace.vectors,
        m=trace.metrics,
        dims=[f"d{i}" for i in range(trace.vectors["X"].shape[1])],
        kdims=[f"d{i}" for i in range(trace.inputs["d_k"])],
    )


def _embeddings(trace, f):
    x = _matrix(f["v"]["X"], f["dims"], f["tokens"], t("views.walkthrough.x_title"), "x")
    return t("views.walkthrough.text0"), [("fig-x", x)]


def _queries_keys_values(trace, f):
    text = t("views.walkthrough.text1", head=trace.inputs["head"])
    return text, [("fig-qkv", _side_by_side([(n, f["v"][n]) for n in "QKV"], f))]


def _side_by_side(named, f) -> go.Figure:
    """Q, K and V in one figure on one scale (± the largest |value| of the three), the tokens
    named once and one colour bar. Three figures in three columns of a 535-px page each spent
    their width on the same token labels and a bar of their own, and cut both."""
    top = max(float(np.abs(z).max()) for _, z in named) or 1.0
    figs = [
        _matrix(z, f["kdims"], f["tokens"], "", n.lower(), annotate=False, zmin=-top, zmax=top)
        for n, z in named
    ]
    layout = figs[0].layout.to_plotly_json()
    bar = figs[0].data[0].colorbar.to_plotly_json()  # one bar, named by all three
    bar["title"] = dict(text=", ".join(n.lower() for n, _ in named))
    plot_px = NARROW_PX - layout["margin"]["l"] - 10 - bar_px(bar)
    domains = cell_domains([1] * len(named), PANEL_GAP_PX / plot_px)
    data, titles, x_axis = [], [], layout.pop("xaxis")
    for i, (fig, (name, _), dom) in enumerate(zip(figs, named, domains, strict=True), start=1):
        x = f"x{i if i > 1 else ''}"  # every panel on the first one's token axis, "y"
        data.append(fig.data[0].to_plotly_json() | dict(showscale=i == 1, xaxis=x, yaxis="y"))
        layout[x.replace("x", "xaxis")] = x_axis | dict(domain=list(dom), anchor="y")
        titles.append(panel_title(name, dom, 1, (dom[1] - dom[0]) * plot_px, TITLE_FONT))
    data[0]["colorbar"] = bar
    layout |= dict(annotations=titles)
    layout["margin"]["t"] = 40
    return figure(data, layout)


def _scores(trace, f):
    title, value = t("views.walkthrough.scores_title"), t("views.walkthrough.score")
    tokens = f["tokens"]
    fig = heatmap(f["v"]["scores"], tokens, tokens, title=title, value_name=value, diverging=True)
    return t("views.walkthrough.text2"), [("fig-scores", fig)]


def _scaling(trace, f):
    m, d_k = f["m"], f["d_k"]
    text = t(
        "views.walkthrough.text3",
        d_k=d_k,
        spread=f"{m['score_std']:.2f}",
        scaled=f"{m['scaled_std']:.2f}",
        root=f"{math.sqrt(d_k):.2f}",
    )
    value, tokens = t("views.walkthrough.score"), f["tokens"]
    fig = heatmap(
        f["v"]["scaled"], tokens, tokens, title="QKᵀ / √d_k", value_name=value, diverging=True
    )
    return text, [("fig-scaled", fig)]


def _softmax(trace, f):
    fig = map_figure(trace.maps["softmax"], title="α = softmax(QKᵀ/√d_k)")
    return t("views.walkthrough.text4"), [("fig-softmax", fig)]


def _weighted_values(trace, f):
    title = t("views.walkthrough.output_title")
    fig = _matrix(f["v"]["output"], f["kdims"], f["tokens"], title, "out")
    return t("views.walkthrough.text5"), [("fig-out", fig)]


def _without_scaling(trace, f):
    m, v = f["m"], f["v"]
    shown = ("mean_max_weight", "mean_max_weight_unscaled", "mean_entropy", "mean_entropy_unscaled")
    text = t(
        "views.walkthrough.text6",
        **{k: f"{m[k]:.2f}" for k in shown},
        uniform=f"{m['uniform_entropy']:.2f}",
    )
    entropy = entropy_figure(f["tokens"], v["entropy"], v["entropy_unscaled"], m["uniform_entropy"])
    title = t("views.walkthrough.unscaled_title")
    # Beside the entropy chart: half the page wide (its cells too narrow for their numbers).
    unscaled = map_figure(trace.maps["unscaled"], title=title, width_px=NARROW_PX // 2)
    return text, [("fig-unscaled", unscaled), ("fig-entropy", entropy)]


def _causal(trace, f):
    fig = map_figure(trace.maps["causal"], title=t("views.walkthrough.causal_title"))
    return t("views.walkthrough.text7"), [("fig-causal", fig)]


def _all_heads(trace, f):
    """Every head in one grid, two a row: four figures side by side left each ~64 px, too
    narrow for a single key label."""
    amap = trace.maps["all_heads"]
    panels = [
        dict(
            z=amap.weights[0, h],
            x=amap.key_labels,
            y=amap.query_labels,
            title=t("views.walkthrough.head", h=h),
            flags=[x for x in amap.flags if x != "exact"],
        )
        for h in range(trace.inputs["n_heads"])
    ]
    return "", [("fig-heads", map_grid(panels, columns=2))]


# One function per entry of STEPS, in order.
_STEP_VIEWS = (
    _embeddings,
    _queries_keys_values,
    _scores,
    _scaling,
    _softmax,
    _weighted_values,
    _without_scaling,
    _causal,
    _all_heads,
)


def step(index: int, trace) -> tuple[str, list[tuple[str, go.Figure]]]:
    """(markdown above the figures, [(key, figure)] side by side) for walkthrough step ``index``."""
    return _STEP_VIEWS[min(index, len(_STEP_VIEWS) - 1)](trace, _facts(trace))
