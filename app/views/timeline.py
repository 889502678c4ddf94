"""The metric curves of a training timeline beside its map: loss, accuracy, AER… against
the training step (log axis, step 0 drawn at 1), the step the slider shows as a dashed line
and named steps (the end of linear start, a phase change) as labelled dotted lines.

Plain plotly.js dicts (``views.heatmap.figure``): the figure is redrawn on every slider move.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from kit.presenter import QUALITATIVE, presenting

from views.heatmap import (
    PANEL_TITLE_LINE_EM,
    axes,
    cell_domains,
    figure,
    log_axis,
    panel_titles,
    subplot_ref,
    text_px,
)

PALETTE = QUALITATIVE  # kit.presenter's lines: Okabe–Ito, orange after the marked span's
DISTINCT_LINES = len(PALETTE)  # lines one figure tells apart by colour; more reuse colours
BAND = "rgba(230, 159, 0, 0.18)"  # a marked span of steps (Okabe–Ito orange)
MARK_TEXT = "#8a5a00"  # a named step's label: the marks' orange, dark enough on white
LEGEND_FONT = 13  # the legend's and the panels' titles' type on a screen
PRESENTER_FONT = 16  # on a projector, as its tick labels (13 px read small from the back)
# In units of that type: a legend row, a panel's title with a little air above its plot,
# and a named step's label (one pixel smaller) below the previous one.
LEGEND_ROW_EM, NOTE_EM, MARK_ROW_EM = 24 / 13, 2.0, 16 / 12
COLUMN_PX = 360  # the narrowest column the curves are drawn in: a 1024-px presenter window


def curves_figure(
    panels: list[tuple[str, dict[str, tuple[list[int], list[float]]]]],
    current: int | None,
    marks: list[tuple[str, int]] = (),
    step_title: str = "",
    height: int = 170,
    band: tuple[str, int, int] | None = None,
    width_px: int = COLUMN_PX,
    type_px: int | None = None,
) -> go.Figure:
    """One panel per ``(title, {line label: (steps, values)})``, stacked with a shared step
    axis; a line keeps its colour in every panel. ``band`` = (label, first, last step) is
    shaded in every panel (a phase-change window).

    The legend sits in its own band at the top of the figure, above the first panel's
    title: as many rows as its entries need in a figure ``width_px`` wide, in ``type_px``
    type (default: the screen's, or the projector's when presenting)."""
    size = type_px or (PRESENTER_FONT if presenting() else LEGEND_FONT)
    titles, ys, more = _panel_titles([title for title, _ in panels], height, width_px, size)
    colours: dict[str, str] = {}
    data, layout, shapes, notes = [], {}, [], []
    for n, (_, lines) in enumerate(panels, start=1):
        for label, (steps, values) in lines.items():
            colour = colours.setdefault(label, PALETTE[len(colours) % len(PALETTE)])
            first = label not in {d["name"] for d in data}
            data.append(_line(label, steps, values, colour, first) | subplot_ref(n))
        last = n == len(panels)
        x_axis = log_axis(showticklabels=last, **({} if n == 1 else {"matches": "x"}))
        if last and step_title:
            x_axis["title"] = dict(text=step_title)
        layout |= axes(n, (0, 1), ys[n - 1], x=x_axis)
        shapes += _step_shapes(n, current, marks, band)
        notes.append(titles[n - 1] | dict(y=ys[n - 1][1]))
    last = max(
        (max(steps, default=1) for _, lines in panels for steps, _ in lines.values()), default=1
    )
    notes += _mark_notes([*marks, *([band[:2]] if band else [])], max(last, 10), size - 1)
    rows = legend_rows([d["name"] for d in data if d["showlegend"]], width_px - 60, size)
    top = 8 + round(rows * LEGEND_ROW_EM * size + NOTE_EM * size + more)
    layout |= dict(
        shapes=shapes,
        annotations=notes,
        height=height * max(len(panels), 1) + 40 + top,
        margin=dict(l=50, r=10, t=top, b=50),
        legend=dict(
            orientation="h",
            xref="container",
            yref="container",
            x=0,
            y=1,
            yanchor="top",
            font=dict(size=size),
        ),
        hovermode="x unified",
    )
    return figure(data, layout)


def _panel_titles(titles: list[str], height: int, width_px: int, size: int):
    """(the panels' titles, their y domains, the px a wrapped title takes over one line):
    each title wrapped to the plot (a 166-px column cut "loss (cross-entropy per question)"
    at its edge), the panels kept apart by its lines."""
    notes, lines = panel_titles(titles, [(0, 1)] * len(titles), width_px - 60, size)
    more = (lines - 1) * PANEL_TITLE_LINE_EM * size
    gap = 0.06 + more / (height * max(len(titles), 1) - 10)
    return notes, cell_domains([1] * max(len(titles), 1), gap, reverse=True), more


def legend_rows(labels: list[str], px: float, size: float = LEGEND_FONT) -> int:
    """The rows a horizontal legend of ``labels`` in ``size``-px type takes in ``px``: each
    entry is its symbol (40 px, with the gap to the next) and its text, never split."""
    rows, used = 1, 0.0
    for label in labels:
        entry = 40 + text_px([label], size)
        if used and used + entry > px:
            rows, used = rows + 1, 0.0
        used += entry
    return rows


def _mark_notes(marks, last: int, size: int) -> list[dict]:
    """The named steps' labels in the first panel, one row each (two steps close together
    never print on each other), on the side of their line that faces the plot's middle;
    ``size``-px type."""
    notes = []
    for row, (label, at) in enumerate(marks):
        x = float(np.log10(max(at, 1)))  # a log axis's coordinate: log10 of the step
        side = "right" if x > np.log10(last) / 2 else "left"
        where = dict(xref="x", yref="y domain", x=x, y=1, xanchor=side, yanchor="top")
        shift = -round(MARK_ROW_EM * size) * row
        # On a pale ground: the label sits inside the plot, where the curves run behind it
        ground = dict(bgcolor="rgba(255, 255, 255, 0.85)", font=dict(size=size, color=MARK_TEXT))
        notes.append(_note(label, size, **where, yshift=shift) | ground)
    return notes


def _line(label: str, steps, values, colour: str, in_legend: bool) -> dict:
    """One metric's curve (step 0 drawn at 1, the log axis's first step)."""
    return dict(
        type="scatter",
        x=np.maximum(np.asarray(steps), 1).tolist(),
        y=list(values),
        mode="lines+markers",
        name=label,
        legendgroup=label,
        showlegend=in_legend,
        marker=dict(size=5),
        line=dict(color=colour),
    )


def _step_shapes(n: int, current: int | None, marks, band) -> list[dict]:
    """Panel ``n``'s shaded band, dotted named steps and dashed current step."""
    ref = "" if n == 1 else str(n)
    span = dict(xref=f"x{ref}", yref=f"y{ref} domain", y0=0, y1=1)
    mark_line = dict(dash="dot", color="#E69F00", width=2)
    shapes = []
    if band is not None:
        x0, x1 = max(band[1], 1), band[2]
        fill = dict(type="rect", x0=x0, x1=x1, fillcolor=BAND, line=dict(width=0))
        shapes.append(dict(fill, **span))
    for _, at in marks:
        shapes.append(dict(type="line", x0=max(at, 1), x1=max(at, 1), line=mark_line, **span))
    if current is not None:  # None: a figure that stays the same as the step moves
        at = max(int(current), 1)
        line = dict(dash="dash", color="#444")
        shapes.append(dict(type="line", x0=at, x1=at, line=line, **span))
    return shapes


def _note(text: str, size: int, **where) -> dict:
    """A text label (a panel's title, a named step's name) in ``size``-px type; ``where``
    places it."""
    note = dict(text=text, showarrow=False, xref="paper", yref="paper", font=dict(size=size))
    return note | where
