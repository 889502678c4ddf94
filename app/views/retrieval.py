"""Figures of the Retrieval page: the addressing step, the retrieved passages, and the
passages × generated-tokens map of the chat model's attention mass.

Everything here draws what the engine returned; nothing is recomputed. The addressing
weights and the side-by-side view's mass are drawn on the Memory page's scale for MemN2N's
hop weights (Viridis, 0 to 1), so the two can be read together; the reading map alone is
on its kind's scale (``views.heatmap.kind_scale``). Passage and question text is user
text: escaped wherever it enters HTML (Plotly labels included, through
``views.heatmap.unique_labels``).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
from kit.fonts import label_px
from kit.i18n import t

from views.heatmap import (
    FONT,
    NARROW_PX,
    SEQUENTIAL,
    axes,
    cell_domains,
    drawn_px,
    figure,
    heatmap,
    kind_scale,
    map_tick_px,
    unique_labels,
)
from views.memory import STAR

DECIMALS = 3
LABEL_CHARS = 32
GAP_PX = 24  # between the weight column and the cosine bars: the column's name clear of "0"


def passage_label(number: int, text: str, support: bool) -> str:
    """``★ 3. Mary went to the kitchen.`` (★ on a known supporting fact), shortened."""
    short = text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"
    return f"{STAR if support else ' '} {number}. {short}"


def passage_labels(passages: Sequence[dict]) -> list[str]:
    """Axis labels of the passages a prompt holds, numbered as in the prompt."""
    return [passage_label(i + 1, p["text"], p["support"]) for i, p in enumerate(passages)]


def addressing_figure(
    labels: Sequence[str],
    weights: np.ndarray,
    scores: np.ndarray,
    retrieved: Sequence[bool],
    floor: float,
    title: str,
):
    """Each passage's softmax weight (a column on the hop weights' scale) beside its cosine
    to the question (bars; the retrieved ones dark, the similarity floor dashed)."""
    ys = unique_labels(labels)
    tick, margin, (left, right) = _addressing_geometry(ys)
    colours = ["#440154" if r else "#b8b8c8" for r in retrieved]
    data = [
        dict(
            type="heatmap",
            z=np.round(np.asarray(weights, np.float32)[:, None], DECIMALS),
            x=[t("retrieval.fig_weight")],
            y=ys,
            zmin=0.0,
            zmax=1.0,
            colorscale=SEQUENTIAL,
            showscale=False,
            texttemplate="%{z:.3f}",
            hovertemplate="%{y}<br>p = %{z:.4f}<extra></extra>",
        ),
        dict(
            type="bar",
            x=np.round(np.asarray(scores, np.float32), DECIMALS),
            y=ys,
            orientation="h",
            marker=dict(color=colours),
            xaxis="x2",
            yaxis="y2",
            hovertemplate="%{y}<br>cos = %{x:.3f}<extra></extra>",
        ),
    ]
    category = dict(type="category", autorange="reversed", automargin=False)
    category["tickfont"] = dict(size=tick)
    layout = dict(
        title=dict(text=title),
        font=FONT,
        height=int(min(900, max(260, 110 + 28 * len(ys)))),
        margin=margin,
        showlegend=False,
        shapes=[_floor_line(floor)],
        **axes(1, left, (0, 1), x=dict(type="category"), y=category),
        **axes(
            2,
            right,
            (0, 1),
            x=dict(title=dict(text=t("retrieval.fig_cosine")), range=[min(0.0, floor), 1.0]),
            y=dict(category, showticklabels=False, matches="y"),
        ),
    )
    return figure(data, layout)


def _addressing_geometry(ys: list[str]):
    """(tick px, margins, the weight column's and the bars' domains), measured, not guessed:
    at 1024 px with the sidebar open ten pixels a character left the weight column 30 px
    for its "0.404"s and its name on the cosine axis's "0"."""
    tick = map_tick_px()
    margin = dict(l=int(label_px(ys, tick)) + 16, r=20, t=60, b=50)
    plot_px = drawn_px(NARROW_PX) - margin["l"] - margin["r"]
    column = label_px(["0.000", t("retrieval.fig_weight")], FONT["size"]) + 12
    return tick, margin, cell_domains([column, plot_px - column - GAP_PX], GAP_PX / plot_px)


def addressing_of(found, passages: Sequence, order: Sequence[int]):
    """The addressing figure of a Retrieval for the passages ``order`` picks."""
    labels = [passage_label(i + 1, passages[i].text, passages[i].support) for i in order]
    top = set(found.top[: found.k])
    return addressing_figure(
        labels,
        found.weights[order],
        found.scores[order],
        [i in top for i in order],
        found.floor,
        t("retrieval.fig_addressing"),
    )


def _floor_line(floor: float) -> dict:
    return dict(
        type="line",
        xref="x2",
        yref="paper",
        x0=floor,
        x1=floor,
        y0=0,
        y1=1,
        line=dict(color="#d62728", width=2, dash="dash"),
    )


def reading_figure(mass: np.ndarray, passages: Sequence[str], tokens: Sequence[str], title: str):
    """Passages (rows) × generated tokens (columns) of attention mass on its kind's scale:
    0 to 1, or 0 to its max, printed in the title, when that is under a quarter."""
    z = np.round(np.asarray(mass, np.float32), DECIMALS)
    scale = kind_scale(z, title, value_name=t("retrieval.fig_mass"))
    return heatmap(
        z,
        tokens,
        passages,
        x_title=t("retrieval.fig_token"),
        y_title=t("retrieval.fig_passage"),
        annotate=z.size <= 60,
        **scale,
    )


def which_label(layer: int | None, head: int | None) -> str:
    """ "L3, H2", or the means, as a map's title names what it aggregates."""
    return t(
        "retrieval.which",
        layer=t("retrieval.every_layer") if layer is None else f"L{layer}",
        head=t("retrieval.every_head") if head is None else f"H{head}",
    )


def passages_html(rows: Sequence[dict]) -> str:
    """The retrieved passages as a list: number in the prompt, cosine, ★ on a supporting
    fact, the text. Every piece of text is escaped (stories and questions are typed)."""
    supporting = html.escape(t("retrieval.supporting"))
    items = []
    for row in rows:
        star = f"<b title='{supporting}'>{STAR}</b> " if row.get("support") else ""
        score = "" if row.get("score") is None else f"cos {row['score']:.3f}"
        items.append(
            "<div style='padding:4px 8px; margin:2px 0; border-left:4px solid #440154; "
            "background:#f4f1f8; color:#111; border-radius:3px'>"
            f"<span style='display:inline-block; min-width:2.6em'>[{row['number']}]</span>"
            f"<span style='display:inline-block; min-width:6.5em; color:#555'>{score}</span>"
            f"{star}{html.escape(str(row['text']))} "
            f"<span style='color:#888; font-size:.8em'>{html.escape(str(row['id']))}</span>"
            "</div>"
        )
    # The page's own type (a presenter's larger one too), not the browser's sans-serif.
    return "<div class='retrieved-passages'>" + "".join(items) + "</div>"
