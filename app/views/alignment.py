"""Figures for the Alignment and Compare pages: α heatmaps with gold links, the decoding
step by step, the additive score's parts, differences between two alignments and the
BLEU-by-length curves. They draw what the Trace holds; nothing here computes attention.

Every figure is built from plotly.js property names with validation skipped
(`_validate=False`): a page redraws them on each edit and validation was most of the cost.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from kit.i18n import t
from kit.presenter import presenting

from views.heatmap import (
    DIVERGING,
    FONT,
    heatmap,
    map_grid,
    panel_titles,
    rows_plot_px,
    unique_labels,
)
from views.style import ACCENT, POSSIBLE, SURE

# Okabe–Ito colours: distinguishable with every common colour-vision deficiency.


PRESENTER_SUB_TITLE_PX = 20  # titles written with <sub> on a projector: the <sub> at 14 px


def _figure(data: list[dict], layout: dict) -> go.Figure:
    return go.Figure(data=data, layout=layout, _validate=False)


def _gold_markers(xs, ys, sure, possible) -> list[dict]:
    """Sure links as orange squares, possible-only links as blue circles."""
    out = []
    possible_only = set(possible) - set(sure)
    for links, name, symbol, colour in (
        (sure, t("views.alignment.gold_sure"), "square-open", SURE),
        (possible_only, t("views.alignment.gold_possible"), "circle-open", POSSIBLE),
    ):
        links = sorted((j, i) for j, i in links if j < len(xs) and i < len(ys))
        if links:
            out.append(
                dict(
                    type="scatter",
                    x=[xs[j] for j, _ in links],
                    y=[ys[i] for _, i in links],
                    mode="markers",
                    name=name,
                    hoverinfo="name",
                    marker=dict(symbol=symbol, size=22, color=colour, line=dict(width=3)),
                )
            )
    return out


def alignment_figure(
    weights: np.ndarray,
    src: Sequence[str],
    tgt: Sequence[str],
    *,
    title: str = "",
    flags: Sequence[str] = (),
    sure=(),
    possible=(),
    height: int | None = None,
    annotate: bool | None = None,
) -> go.Figure:
    """α_ij with the source on x and the target on y; gold links drawn on top when given
    (sure: orange squares, possible-only: blue circles). ``annotate=False`` leaves the
    numbers to the hover, for panels too small to read them."""
    base = heatmap(
        weights,
        src,
        tgt,
        title=title,
        x_title=t("views.axis.source_word"),
        y_title=t("views.axis.target_word"),
        value_name="α_ij",
        zmin=0,
        zmax=1,
        flags=flags,
        height=height,
        annotate=annotate,
    )
    markers = _gold_markers(unique_labels(list(src)), unique_labels(list(tgt)), sure, possible)
    if not markers:
        return base
    layout = base.layout.to_plotly_json()
    layout["legend"] = dict(orientation="h", x=1, xanchor="right", y=1.0, yanchor="bottom")
    return _figure([base.data[0].to_plotly_json(), *markers], layout)


def alignment_grid(panels: Sequence[dict], *, columns: int = 3) -> go.Figure:
    """Several alignments in one figure (:func:`views.heatmap.map_grid`), gold links on top.

    Each panel: weights, src, tgt, title (its lines), and optionally sure / possible gold
    links.
    """
    maps = []
    for p in panels:
        xs, ys = unique_labels(list(p["src"])), unique_labels(list(p["tgt"]))
        gold = _gold_markers(xs, ys, p.get("sure", ()), p.get("possible", ()))
        title = "<br>".join(p["title"])
        maps.append(dict(z=p["weights"], x=p["src"], y=p["tgt"], title=title, traces=gold))
    return map_grid(maps, columns=columns, value_name="α_ij")


def difference_figure(
    delta: np.ndarray, src: Sequence[str], tgt: Sequence[str], *, title: str, height=None
) -> go.Figure:
    """α_A − α_B on the same axes, from −1 to 1 (the colour bar gives the sign)."""
    return heatmap(
        delta,
        src,
        tgt,
        title=title,
        x_title=t("views.axis.source_word"),
        y_title=t("views.axis.target_word"),
        value_name="Δα",
        diverging=True,
        zmin=-1,
        zmax=1,
        height=height,
    )


def steps_animation(
    alpha: np.ndarray, src: Sequence[str], steps: Sequence[str], start: int = 0
) -> go.Figure:
    """α_i over the source words at decoding step ``start`` (the page's step slider), one
    frame per step behind Plotly's play button, the step named in the title. No slider of
    its own: beside the page's, a second picker moved the bars while the text below them
    still spoke of the page's step."""
    xs = unique_labels(list(src))

    def bar(i):
        return dict(
            type="bar",
            x=xs,
            y=alpha[i].tolist(),
            marker=dict(color=ACCENT),
            hovertemplate="%{x}: α = %{y:.3f}<extra></extra>",
        )

    def label(i):
        return t("views.alignment.step_emits", i=i + 1, word=steps[i])

    layout = dict(
        title=dict(text=label(start)),
        font=FONT,
        height=420,
        margin=dict(l=10, r=10, t=60, b=10),
        yaxis=dict(range=[0, 1], title=dict(text="α_ij")),
        xaxis=dict(title=dict(text=t("views.axis.source_word")), tickangle=-45, type="category"),
        updatemenus=[_play_buttons()],
    )
    frames = [
        dict(data=[bar(i)], name=str(i), layout=dict(title=dict(text=label(i))))
        for i in range(len(steps))
    ]
    return go.Figure(data=[bar(start)], layout=layout, frames=frames, _validate=False)


def _play_buttons() -> dict:
    """Plotly's play / pause buttons over the animation's frames."""
    play = dict(frame=dict(duration=700, redraw=True), fromcurrent=True)
    pause = dict(mode="immediate", frame=dict(duration=0))
    buttons = [
        dict(label=t("views.alignment.play"), method="animate", args=[None, play]),
        dict(label=t("views.alignment.pause"), method="animate", args=[[None], pause]),
    ]
    return dict(
        type="buttons",
        direction="left",
        showactive=False,
        x=0,
        y=-0.35,
        xanchor="left",
        buttons=buttons,
    )


def vector_strip(v: np.ndarray, title: str, name: str) -> go.Figure:
    """One vector as a coloured strip (diverging: sign matters)."""
    v = np.asarray(v, dtype=float)[None, :]
    fig = heatmap(
        v,
        [str(k) for k in range(v.shape[1])],
        [name],
        title=title,
        x_title=t("views.axis.dimension"),
        y_title="",
        value_name=name,
        diverging=True,
        annotate=False,
        height=200,
    )
    fig.layout.xaxis.showticklabels = False
    return fig


def additive_parts_figure(
    vectors: dict, alpha: np.ndarray, src: Sequence[str], step: int
) -> go.Figure:
    """e_ij = v_aᵀ tanh(W_a s_{i−1} + U_a h_j) at step i, one source word per row:
    U_a h_j, the tanh of the sum, v_a ⊙ tanh (whose sum is e_ij), e_ij, and α_ij as the
    model returned it (``alpha``: the step's row of the alignment map)."""
    Uh = vectors["U_a h"]  # (K, d_a)
    tanh = vectors["tanh"][step]  # (K, d_a)
    contrib = tanh * vectors["v_a"][None, :]  # (K, d_a): Σ over d_a gives e_ij
    e = vectors["e"][step]
    ys = unique_labels(list(src))
    titles = (
        "U<sub>a</sub>h<sub>j</sub>",
        "tanh(W<sub>a</sub>s<sub>i−1</sub> + U<sub>a</sub>h<sub>j</sub>)",
        "v<sub>a</sub> ⊙ tanh(·)",
        "e<sub>ij</sub>",
        "α<sub>ij</sub>",
    )
    widths = (0.24, 0.24, 0.24, 0.14, 0.14)
    gap = 0.02
    usable = 1 - gap * (len(widths) - 1)
    domains, x0 = [], 0.0
    for w in widths:
        domains.append([x0, x0 + w * usable])
        x0 += w * usable + gap
    dims = [str(k) for k in range(Uh.shape[1])]
    data, dim = [], t("views.alignment.dim")
    for col, z in enumerate((Uh, tanh, contrib), start=1):
        m = float(np.abs(z).max()) or 1.0
        data.append(
            dict(
                type="heatmap",
                z=np.asarray(z, dtype=float),
                x=dims,
                y=ys,
                xaxis=f"x{col}",
                yaxis="y",
                colorscale=DIVERGING,
                reversescale=True,
                zmin=-m,
                zmax=m,
                showscale=False,
                hovertemplate=f"%{{y}} · {dim} %{{x}}: %{{z:.3f}}<extra></extra>",
            )
        )
    for col, x, colour, sym in ((4, e, SURE, "e"), (5, alpha, ACCENT, "α")):
        data.append(
            dict(
                type="bar",
                x=np.asarray(x, dtype=float),
                y=ys,
                xaxis=f"x{col}",
                yaxis="y",
                orientation="h",
                marker=dict(color=colour),
                hovertemplate=f"%{{y}}: {sym} = %{{x:.3f}}<extra></extra>",
            )
        )
    return _figure(data, _parts_layout(titles, domains, ys))


def _parts_layout(titles: Sequence[str], domains: list, rows: list[str]) -> dict:
    """Side-by-side panels on one shared row axis (the source words), each titled, its title
    wrapped to its panel: at 1024 px with the sidebar open a panel is ~100 px and
    "tanh(W_a s_{i−1} + U_a h_j)" ran over both its neighbours' titles."""
    # Plotly draws a <sub> at 70 %: 11 px of a 16-px title, specks on a projector; 14 of 20.
    size = PRESENTER_SUB_TITLE_PX if presenting() else FONT["size"]
    notes, lines = panel_titles(titles, domains, rows_plot_px(rows), size)
    line = round(1.25 * size)
    layout = dict(
        font=FONT,
        showlegend=False,
        margin=dict(l=10, r=10, t=10 + line * (lines + 1), b=10),
        height=int(min(900, max(320, 120 + 28 * len(rows)))) + line * (lines - 1),
        yaxis=dict(autorange="reversed", type="category"),
        annotations=notes,
    )
    for col, d in enumerate(domains, start=1):
        # The bars' value axes: three ticks, so one panel's last never meets the next's first.
        ticks = dict(showticklabels=True, nticks=3) if col > 3 else dict(showticklabels=False)
        layout["xaxis" if col == 1 else f"xaxis{col}"] = dict(domain=d, anchor="y", **ticks)
    return layout


__all__ = [
    "additive_parts_figure",
    "alignment_figure",
    "alignment_grid",
    "difference_figure",
    "steps_animation",
    "vector_strip",
]
