"""Figures of the Chat model page: one generation step, layer × head grids, sinks, cache cost.

Everything here draws what the engine returned; nothing is recomputed. Weights go to the
browser rounded to 3 decimals (float32, base64): a step's figures are a few tens of KB.
Each ``*_figure`` function builds one figure; sections.chat draws them as the page and a
lesson step show them.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
from kit.i18n import t
from kit.presenter import palette

from views.heatmap import figure, heatmap, kind_scale, log_axis, unique_labels
from views.style import FONT, legend_below

DECIMALS = 3


def head_labels(n_heads: int, n_kv_heads: int) -> list[str]:
    """Query heads named with their key/value group: in Llama's ``repeat_kv`` query head h
    reads KV head h // (H / H_kv), so consecutive heads share one group."""
    per = max(1, n_heads // max(1, n_kv_heads))
    return [t("chat.fig_head_in_group", head=h, group=h // per) for h in range(n_heads)]


def _group_lines(n: int, per: int, *, across: str = "x") -> list[dict]:
    """White rules between key/value groups on a category axis of ``n`` heads: drawn across
    the plot's x (between rows) or across its y (between columns)."""
    along = "y" if across == "x" else "x"
    return [
        {
            "type": "line",
            f"{across}ref": "paper",
            f"{across}0": 0,
            f"{across}1": 1,
            f"{along}0": r - 0.5,
            f"{along}1": r - 0.5,
            "line": {"color": "white", "width": 4},
        }
        for r in range(per, n, per)
    ]


SINK_SHARE = 0.3  # the first key's mean weight from which it dominates a figure


def sink_keys(keys: Sequence[str], rows: np.ndarray) -> tuple[list[str], float | None]:
    """The key labels with the first one marked as the attention sink when it takes at
    least SINK_SHARE of the mean weight (StreamingLLM): a bright first column is where
    every head parks attention, whatever the token, not "the model attends to Maria".
    Returns the labels and the sink's share (None where it does not dominate)."""
    share = float(np.asarray(rows)[..., 0].mean()) if len(keys) > 1 else 0.0
    if share < SINK_SHARE:
        return list(keys), None
    return [t("chat.sink_label", token=keys[0]), *keys[1:]], share


def step_layers_figure(rows: np.ndarray, keys: Sequence[str], title: str):
    """The new query's attention over the cache, one row per layer ([L, K], heads aggregated)."""
    layers = [f"L{i}" for i in range(rows.shape[0])]
    return heatmap(
        np.round(rows, DECIMALS),
        keys,
        layers,
        title=title,
        y_title=t("chat.fig_layer"),
        zmin=0.0,
        zmax=1.0,
        annotate=False,
    )


def gqa_figure(rows: np.ndarray, keys: Sequence[str], n_kv_heads: int, title: str):
    """One layer's query heads ([H, K]) drawn in their key/value groups, a rule between groups."""
    n_heads = rows.shape[0]
    fig = heatmap(
        np.round(rows, DECIMALS),
        keys,
        head_labels(n_heads, n_kv_heads),
        title=title,
        y_title=t("chat.fig_query_head"),
        zmin=0.0,
        zmax=1.0,
        annotate=False,
        height=max(300, 150 + 30 * n_heads),
    )
    fig.update_layout(shapes=_group_lines(n_heads, max(1, n_heads // max(1, n_kv_heads))))
    return fig


def top_figure(top: Sequence[Sequence], chosen: str, title: str):
    """The top-k next-token probabilities at one step; the token the run kept is highlighted."""
    tokens = unique_labels([str(tok) for tok, _ in top])
    probs = [round(float(p), DECIMALS) for _, p in top]
    colours = palette("qualitative")
    marker = [colours[1] if str(tok) == chosen else colours[0] for tok, _ in top]
    data = [
        dict(
            type="bar",
            x=probs,
            y=tokens,
            orientation="h",
            marker=dict(color=marker),
            hovertemplate="%{y}: p = %{x:.3f}<extra></extra>",
        )
    ]
    layout = dict(
        title=dict(text=title),
        font=FONT,
        height=max(240, 90 + 34 * len(tokens)),
        margin=dict(l=10, r=10, t=50, b=40),
        xaxis=dict(title=dict(text=t("chat.fig_probability")), range=[0, 1]),
        yaxis=dict(autorange="reversed", type="category", automargin=True),
    )
    return figure(data, layout)


def cache_figure(kv_tokens: Sequence[int], kv_bytes: Sequence[int], step: int, title: str):
    """KV-cache size after each step (bytes; tokens in the hover), the current step marked."""
    steps = list(range(1, len(kv_bytes) + 1))
    mib = [b / 2**20 for b in kv_bytes]
    tokens = [int(n) for n in kv_tokens]
    colours = palette("qualitative")
    hover = t("chat.fig_cache_hover")
    data = [
        dict(
            type="scatter",
            mode="lines+markers",
            x=steps,
            y=mib,
            customdata=tokens,
            line=dict(color=colours[0]),
            hovertemplate=hover + "<extra></extra>",
            showlegend=False,
        ),
        dict(
            type="scatter",
            mode="markers",
            x=[step + 1],
            y=[mib[step]],
            customdata=[tokens[step]],
            marker=dict(size=16, color=colours[1], symbol="diamond"),
            hovertemplate=hover + "<extra></extra>",
            showlegend=False,
        ),
    ]
    layout = dict(
        title=dict(text=title),
        font=FONT,
        height=300,
        margin=dict(l=60, r=10, t=50, b=50),
        xaxis=dict(title=dict(text=t("chat.fig_step")), dtick=max(1, len(steps) // 10)),
        yaxis=dict(title=dict(text="MiB"), rangemode="tozero"),
    )
    return figure(data, layout)


def layer_head_figure(
    values: np.ndarray, n_kv_heads: int, title: str, value_name: str, *, zmax: float | None = None
):
    """A [L, H] score per layer and head: layers across, as in the per-layer line charts
    beside it (and ROME's causal traces), heads down, named with their key/value group.
    With a row per layer, 30 rows of 26 px, the map was taller than a projector's screen
    and its first screen showed layers 0–10: all dark, the induction heads of L17–18 below."""
    values = np.asarray(values, dtype=float)
    n_layers, n_heads = values.shape
    fig = heatmap(
        np.round(values.T, DECIMALS),
        layer_positions(n_layers),
        head_labels(n_heads, n_kv_heads),
        title=title,
        x_title=t("chat.fig_layer"),
        y_title=t("chat.fig_query_head"),
        value_name=value_name,
        zmin=0.0,
        zmax=zmax,
        annotate=False,
    )
    per = max(1, n_heads // max(1, n_kv_heads))
    fig.update_layout(shapes=_group_lines(n_heads, per))
    return fig


def layer_positions(n_layers: int) -> list[str]:
    """A layer axis across a map: 0, 1, 2 …, named level at every 2nd, 5th or 10th."""
    return [str(i) for i in range(n_layers)]


def lines_figure(
    x: Sequence,
    series: dict[str, Sequence[float]],
    title: str,
    x_title: str,
    y_title: str,
    *,
    log_y: bool = False,
    y_range: Sequence[float] | None = None,
):
    """One line per named series over a shared x (layers, or cache budgets)."""
    colours = palette("qualitative")
    data = [
        dict(
            type="scatter",
            mode="lines+markers",
            x=list(x),
            y=[None if v is None else round(float(v), 4) for v in ys],
            name=html.escape(name),
            line=dict(color=colours[i % len(colours)]),
            hovertemplate=f"{html.escape(name)}<br>%{{x}}: %{{y:.3f}}<extra></extra>",
        )
        for i, (name, ys) in enumerate(series.items())
    ]
    values = [v for ys in series.values() for v in ys]  # 1-2-5 where under two decades
    yaxis = log_axis(values, title=dict(text=y_title)) if log_y else dict(title=dict(text=y_title))
    if y_range is not None:
        yaxis["range"] = list(y_range)
    layout = dict(
        title=dict(text=title),
        font=FONT,
        height=380,
        margin=dict(l=70, r=10, t=50, b=50),
        legend=legend_below(),
        xaxis=dict(title=dict(text=x_title)),
        yaxis=yaxis,
    )
    return figure(data, layout)


def head_map_figure(weights: np.ndarray, tokens: Sequence[str], title: str):
    """One head's map on the user's own text (queries down, keys across)."""
    z = np.round(weights, DECIMALS)
    return heatmap(z, tokens, tokens, annotate=False, **kind_scale(z, title))


def kept_figure(kept: Sequence[Sequence[int]], tokens: Sequence[str], title: str):
    """What the cache holds at each step: steps down, text positions across, kept = 1."""
    n = max((max(k) for k in kept if k), default=0) + 1
    z = np.zeros((len(kept), n), dtype=np.float32)
    for s, positions in enumerate(kept):
        z[s, list(positions)] = 1.0
    fig = heatmap(
        z,
        list(tokens)[:n],
        [str(s + 1) for s in range(len(kept))],
        title=title,
        y_title=t("chat.fig_step"),
        value_name=t("chat.fig_kept"),
        zmin=0.0,
        zmax=1.0,
        annotate=False,
    )
    fig.update_traces(showscale=False)
    return fig


def sweep_figure(rows: Sequence[dict], metric: str, names: dict[str, str], full: str, title: str):
    """One measure against the cache budget, a line per policy (perplexity on a log axis,
    with the full cache's as a flat line)."""
    budgets = sorted({r["budget"] for r in rows})
    series = {
        names[p]: [
            next(r[metric] for r in rows if r["policy"] == p and r["budget"] == b) for b in budgets
        ]
        for p in dict.fromkeys(r["policy"] for r in rows)
    }
    if metric == "ppl":
        series[full] = [rows[0]["ppl_full"]] * len(budgets)
    y_title = t(f"chat.metric_{metric}")
    fig = lines_figure(budgets, series, title, t("chat.fig_budget"), y_title, log_y=metric == "ppl")
    fig.update_layout(xaxis=dict(type="log", tickvals=budgets, ticktext=[str(b) for b in budgets]))
    return fig


def head_grid_figure(values: np.ndarray, n_kv_heads: int, title: str, value_name: str):
    """:func:`layer_head_figure` with a layer to click: Streamlit reports clicks on scatter
    points but not on heatmap cells (streamlit/streamlit#8760), so an invisible point sits
    at each cell's centre (``customdata`` [layer, head]) and ``hoverdistance = -1`` lets a
    click anywhere pick the nearest centre, which on a grid is the clicked cell's own.

    The cells stay a heatmap: drawn as square markers sized by the rows, the 9 heads
    stood as thin bars with wide gaps wherever a column was wider than a row was tall
    (every screen narrower than the figure's height asks). The points go in layer-major
    order, as ``values`` is: the i-th is layer i // H, head i % H."""
    fig = layer_head_figure(values, n_kv_heads, title, value_name, zmax=1.0)
    cell = fig.data[0]
    n_layers, n_heads = np.shape(values)
    layer, head = np.divmod(np.arange(n_layers * n_heads), n_heads)
    hidden = dict(marker=dict(opacity=0))  # a selection would otherwise restyle the points
    points = dict(
        type="scatter",
        mode="markers",
        x=[cell.x[i] for i in layer],
        y=[cell.y[h] for h in head],
        customdata=np.stack([layer, head], 1).tolist(),
        marker=dict(size=8, opacity=0, color=np.round(values, DECIMALS).astype(np.float32).ravel()),
        selected=hidden,
        unselected=hidden,
        hovertemplate=cell.hovertemplate.replace("%{z:.4f}", "%{marker.color:.3f}"),
        showlegend=False,
    )
    shown = {**cell.to_plotly_json(), "hoverinfo": "skip", "hovertemplate": None}
    layout = {**fig.layout.to_plotly_json(), "hoverdistance": -1}
    # The cells' own extent: autoranged, the points' markers padded 30 columns by 30 px.
    layout["xaxis"] = {**layout["xaxis"], "range": [-0.5, n_layers - 0.5]}
    layout["yaxis"] = {**layout["yaxis"], "range": [n_heads - 0.5, -0.5], "autorange": False}
    return figure([shown, points], layout)


def clicked_head(event) -> str | None:
    """``"layer.head"`` of the head clicked in :func:`head_grid_figure`, if one is."""
    points = (getattr(event, "selection", None) or {}).get("points") or []
    data = points[0].get("customdata") if points else None
    return f"{int(data[0])}.{int(data[1])}" if data and len(data) == 2 else None


def variants_figure(ran: Sequence[dict], titles: dict[str, str]):
    """Perplexity with each variant inside the model (bars from 0), full attention dashed."""
    full = ran[0]["ppl_full"]
    names = [titles[r["variant"]] for r in ran]
    data = [
        dict(
            type="bar",
            x=[round(r["ppl"], 3) for r in ran],
            y=unique_labels(names),
            orientation="h",
            hovertemplate="%{y}: %{x:.2f}<extra></extra>",
            showlegend=False,
        )
    ]
    layout = dict(
        title=dict(text=t("chat.fig_variants_title", n=ran[0]["n_tokens"])),
        font=FONT,
        height=max(260, 110 + 34 * len(ran)),
        margin=dict(l=10, r=10, t=50, b=50),
        xaxis=dict(title=dict(text=t("chat.metric_ppl")), rangemode="tozero"),
        yaxis=dict(autorange="reversed", type="category", automargin=True),
        shapes=[
            dict(type="line", yref="paper", y0=0, y1=1, x0=full, x1=full, line=dict(dash="dash"))
        ],
    )
    return figure(data, layout)
