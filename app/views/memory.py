"""Figures for the Memory page: answer bars, sentences × hops, the shaded story, UMAP,
and a training timeline's loss and accuracy curves.

sections.memory.draw_hops draws the first three together (the Memory page and the lessons
both show a MemN2N answer that way).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from kit.i18n import t
from kit.presenter import look, presenting

from views.heatmap import FONT, NARROW_PX, figure, heatmap, short_labels, text_px
from views.timeline import COLUMN_PX, curves_figure

STAR = "★"
ANSWER_CHARS = 12  # of a candidate answer on the bars' axis


def answer_bars(candidates: Sequence[str], probs: Sequence[float], top: int = 8) -> go.Figure:
    """The model's distribution over answer candidates, most likely first."""
    order = np.argsort(probs)[::-1][:top]
    whole = [candidates[i] for i in order][::-1]
    # A list answer ("milk,football,apple") took the narrow column's whole width from its
    # bars: shortened on the axis, whole in the hover.
    names = short_labels(whole, ANSWER_CHARS)
    bars = dict(
        type="bar",
        x=[float(probs[i]) for i in order][::-1],
        y=names,
        customdata=whole,
        orientation="h",
        marker=dict(color="#440154"),
        hovertemplate="%{customdata}: %{x:.4f}<extra></extra>",
    )
    # Fixed margins, no automargin: one layout pass (see views.heatmap.fixed_margins).
    layout = dict(
        font=FONT,
        height=60 + 32 * len(order),
        margin=dict(l=int(text_px(names)) + 16, r=20, t=30, b=60),
        title=dict(text=t("views.memory.answer_title")),
        xaxis=dict(range=[0, 1], title=dict(text=t("views.memory.probability")), automargin=False),
        yaxis=dict(type="category", automargin=False),
    )
    return figure([bars], layout)


SENTENCE_CHARS = 20
# Presenter mode hides the sidebar: at 1024 px the map's column is ~630 px, not ~350, and
# 32 characters hold nearly every bAbI sentence whole ("Sandra journeyed to the garden.").
WIDE_SENTENCE_CHARS = 32


def sentence_chars() -> int:
    """How many characters of a sentence an axis shows: more on a projector's wider page."""
    return WIDE_SENTENCE_CHARS if presenting() else SENTENCE_CHARS


def sentence_labels(
    sentences: Sequence[str], support: Sequence[int], chars: int | None = None
) -> list[str]:
    """Numbered sentences, supporting facts starred, long ones shortened for an axis: at
    most ``chars``, by default :func:`sentence_chars`, so the hops' own labels keep room
    beside them at 1024 px (the whole sentence is in the story drawn beside the map)."""
    chars = chars or sentence_chars()
    out = []
    for i, s in enumerate(sentences):
        text = s if len(s) <= chars else s[: chars - 1] + "…"
        out.append(f"{STAR if i in support else ' '} {i + 1}. {text}")
    return out


def hop_number(hop: str) -> str:
    """The engine's "hop 1" as its number, "1": a column of the hops map."""
    return hop.removeprefix("hop ")


def hop_label(hop: str) -> str:
    """The engine's "hop 1" in the reader's language (第 1 跳)."""
    return t("memory.hop_n", n=hop_number(hop))


def hops_figure(amap, support: Sequence[int], width_px: int = NARROW_PX) -> go.Figure:
    """Sentences (rows) × hops (columns) of p_i; ★ marks the supporting facts; ``width_px``:
    its width on the narrowest page (its numbers only where they read at that width)."""
    z = amap.weights[:, 0, 0, :].T  # (n_sentences, hops)
    title = t("views.memory.hops_title") + (
        t("views.memory.star_note", star=STAR) if support else ""
    )
    return heatmap(  # hops numbered under the axis title: level at every width (as words,
        # "hop 1" stood on end in the 346-px column of a 1024- or 1440-px page)
        z,
        [hop_number(h) for h in amap.layer_labels],
        sentence_labels(amap.key_labels, support),
        title=title,
        x_title=t("views.memory.hop"),
        y_title=t("views.memory.sentence"),
        value_name="p",
        zmin=0.0,
        zmax=1.0,
        flags=amap.flags,
        annotate=z.size <= 200,
        width_px=width_px,
    )


def shaded_story(sentences: Sequence[str], weights: Sequence[float], support: Sequence[int]) -> str:
    """The story as HTML, each sentence's background as dark as its weight (Figure 2 style).

    Every sentence is HTML-escaped: stories are user text.
    """
    rows, supporting = [], html.escape(t("views.memory.supporting"))
    for i, (s, w) in enumerate(zip(sentences, weights, strict=True)):
        alpha = float(np.clip(w, 0.0, 1.0))
        colour = "#fff" if alpha > 0.5 else "#111"
        star = f"<b title='{supporting}'>{STAR}</b> " if i in support else ""
        rows.append(
            f"<div style='background: rgba(68,1,84,{alpha:.3f}); color:{colour}; "
            f"padding:3px 8px; margin:1px 0; border-radius:4px'>"
            f"<span style='display:inline-block; width:4.2em'>{w:.3f}</span>"
            f"{star}{i + 1}. {html.escape(s)}</div>"
        )
    return "<div>" + "".join(rows) + "</div>"  # the page's own type, a presenter's too


def memory_map(
    coords: np.ndarray, groups: Sequence[str], texts: Sequence[str], current: np.ndarray, title: str
) -> go.Figure:
    """UMAP of memory vectors coloured by group; the current story's memories ringed."""
    fig = go.Figure()
    groups = np.asarray(groups)
    texts = np.asarray([html.escape(t) for t in texts])
    # Natural order ("task 2" before "task 10"); a colour and a shape a group (Dark24's
    # 24 colours held near-alike magentas: tasks 2 and 15, 6 and 13).
    order = sorted(
        set(groups[~current].tolist()),
        key=lambda g: [(0, int(t)) if t.isdigit() else (1, t) for t in re.split(r"(\d+)", g) if t],
    )
    for n, g in enumerate(order):
        sel = (groups == g) & ~current
        fig.add_trace(
            go.Scatter(
                x=coords[sel, 0],
                y=coords[sel, 1],
                mode="markers",
                name=html.escape(str(g)),
                marker=dict(size=7, opacity=0.7, color=look(n)[0], symbol=look(n)[1]),
                text=texts[sel],
                hovertemplate="%{text}<extra>%{fullData.name}</extra>",
            )
        )
    if current.any():
        this_story = html.escape(t("views.memory.this_story"))
        fig.add_trace(
            go.Scatter(
                x=coords[current, 0],
                y=coords[current, 1],
                mode="markers+text",
                name=this_story,
                text=[str(i + 1) for i in range(int(current.sum()))],
                textposition="top center",
                customdata=texts[current],
                marker=dict(size=13, color="rgba(0,0,0,0)", line=dict(width=2.5, color="#000")),
                hovertemplate=f"%{{customdata}}<extra>{this_story}</extra>",
            )
        )
    fig.update_layout(
        title=title,
        font=FONT,
        height=560,
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis=dict(title="UMAP 1", showticklabels=False),
        yaxis=dict(title="UMAP 2", showticklabels=False),
        legend=dict(itemsizing="constant"),
    )
    return fig


def training_curves(tl, step: int, width_px: int = COLUMN_PX) -> go.Figure:
    """Loss (training and validation) and validation accuracy of a MemN2N timeline against
    the SGD step, the shown step dashed and the end of linear start (and the kept epoch)
    dotted."""
    train, val = t("memory.curve_train"), t("memory.curve_val")
    loss = {train: tl.curve("train_loss"), val: tl.curve("val_loss")}
    panels = [
        (t("memory.curve_loss"), loss),
        (t("memory.curve_accuracy"), {val: tl.curve("val_accuracy")}),
    ]
    marks = [(t(f"memory.mark_{k}"), at) for k, at in tl.marks.items()]
    return curves_figure(panels, step, marks, t("memory.step_axis"), height=190, width_px=width_px)
