"""Labelled attention heatmaps, legible on a projector and safe for colour-blind viewers."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from kit.fonts import flag_spans, label_px, wrap_lines
from kit.i18n import t, t_or
from kit.presenter import PAGE_PX, presenting

from engine.trace import AttentionMap, block_labels, block_mean
from views.style import FONT, visible_label

# Perceptually uniform, colour-blind safe, and still ordered when printed in grey.
# Names are plotly.js's own (figures skip Python-side validation); plotly.js RdBu
# runs blue (negative) to red (positive).
SEQUENTIAL = "Viridis"
DIVERGING = "RdBu"
TICK_FONT = 12  # tick labels of map panels: one per 16 px
PRESENTER_TICK_FONT = 14  # theirs on a projector, where 12 px read as specks
TITLE_FONT = 17
# A title's top padding: plotly.js anchors "top" about 15 px too high (measured in Chromium),
# so 20 px puts the first line's glyphs about 5 px below the figure's edge.
TITLE_PAD = 20
MODEBAR_PX = 280  # Plotly's tool bar (8 buttons) and the title's left pad, presenting
NARROW_PX = 535  # the page's width in a 1024-px window, sidebar open (measured in Chromium)
STREAMLIT_GAP_PX = 16  # between two st.columns (gap "small", 1 rem; measured in Chromium)
MIN_PANEL_PX = 180  # a map panel narrower than this shows neither its tokens nor its pattern
MAP_CELLS = 128  # a single map wider than this is average-pooled for display, and says so
GRID_CELLS = 64  # the same for a panel of a grid
TICK_SIZE = 18  # the line a category tick label of MAP_TICK_PX needs along its axis, in px
# A map's word labels: on a screen at the size Streamlit's theme draws them (12.75 px), on a
# projector at 16, where the words are what a room reads (12.75 read small from its back).
# Margins, tilt and rows are laid out for the size drawn; a grid's panels take panel_tick_px().
MAP_TICK_PX, PRESENTER_MAP_TICK_PX = 12.75, 16
# Level x labels: apart by at least FLAT_GAP_PX; their band under the plot holds one line
# of them and the axis title (plotly.js sets the title below the labels it measured).
FLAT_GAP_PX, FLAT_BAND_PX = 12, 64
ROWS_LABELLED = 24  # a map taller than this many rows thins its row labels instead of growing
# On a projector a map is seen whole after one scroll: no taller than its 768-px screen less
# air. The logit lens's 31 layers at 26 px a row made a 900-px map, never all in view.
PRESENTER_MAP_PX = 700
# The narrowest range of a difference of attention weights (Δα): float32 rounding of two
# softmaxes differs by ~1e-7, and on its own ± range that filled a panel with colour.
DIFFERENCE_FLOOR = 1e-4
BAR_PX = 300  # a grid of maps' colour bar: at most this long, whatever the grid's height
MIN_PLOT_PX = 200  # ... unless its label bands would leave the map itself less than this
# A grid panel's title: 13 px on a screen, 16 on a projector (13 read small from the back of
# a room); a line of it takes 20 px of 13-px type, and as much more as the type grows.
PANEL_TITLE_PX, PRESENTER_PANEL_TITLE_PX, PANEL_TITLE_LINE_EM = 13, 16, 20 / 13
# A number in a cell drawn smaller than this is left out (its colour and hover stay): 8 px
# numbers filled an 11-word map beside a chart, on a screen and on a projector.
CELL_NUMBER_PX, PRESENTER_CELL_NUMBER_PX = 10, 12
FLAG_PX, PRESENTER_FLAG_PX = 13, 15  # a map's flags ([exact], [pooled ×4]) under its title


def unique_labels(labels: Sequence[str]) -> list[str]:
    """Escaped labels, repeats numbered: Plotly merges equal categories into one row.

    Plotly reads a few HTML tags in labels; escaping shows user text exactly as typed.
    Quotes stay as they are: no tag can form without ``<``, and Plotly shows ``&quot;``
    literally (it decodes numeric entities and a few named ones only). A label of blanks
    alone (a character model's space) is drawn (␣, ↵, ⇥): blank, its repeats would read
    as bare "#2", "#3".
    """
    seen: dict[str, int] = {}
    out = []
    for lab in (html.escape(visible_label(label), quote=False) for label in labels):
        n = seen.get(lab, 0)
        seen[lab] = n + 1
        out.append(lab if n == 0 else f"{lab}\u2009#{n + 1}")
    return out


def text_px(labels: Sequence[str], size: float = 14) -> float:
    """The rendered width of the longest label, estimated (CJK characters a full em).

    ``size`` 14 errs wide of the tick labels Streamlit's theme draws, 12.75 px in both
    modes. With 18 (the presenter's body font) every map's label margin was 1.6–2.3× the
    labels measured in Chromium: a third of the Memory hops map's column stood empty.
    """
    widest = 0.0
    for label in labels:
        label = html.unescape(str(label))
        widest = max(widest, sum(size if ord(c) >= 0x2E80 else 0.62 * size for c in label))
    return widest


def fixed_margins(
    x_labels: Sequence[str],
    y_labels: Sequence[str],
    *,
    x_title: bool,
    y_title: bool,
    tick_px: float = MAP_TICK_PX,
):
    """Margins that fit the tick labels (x tilted by 45°) and the axis titles.

    Plotly's ``automargin`` (on in Streamlit's theme) measures the labels, then lays the
    figure out again: two or three passes per figure, 1.5–3× the draw time measured here.
    Fixed margins from the labels' widths in type ``tick_px`` high (label_px) draw in one
    pass.
    """
    x_px, y_px = label_px(x_labels, tick_px), label_px(y_labels, tick_px)
    left = y_px + 16 + (28 if y_title else 0)
    # A tilted first word reaches left of its column; the rest reach down.
    left = max(left, 0.71 * label_px(x_labels[:1], tick_px))
    bottom = 0.71 * x_px + 22 + (32 if x_title else 0)
    return dict(l=int(left), b=int(bottom))


def flag_text(flags: Sequence[str]) -> str:
    """A map's flags in the reader's language (the engine names them in English)."""
    words = []
    for flag in flags:
        name, _, factor = flag.partition(" ×")
        words.append(t_or(f"views.flag.{name.replace(' ', '_')}", flag, factor=factor))
    return ", ".join(words)


def fitted_height(rows: int) -> int:
    """Figure height that keeps one row legible on a projector, within 280–900 px."""
    return int(min(900, max(280, 120 + 26 * rows)))


def heatmap(
    z: np.ndarray,
    x_labels: Sequence[str],
    y_labels: Sequence[str],
    *,
    title: str = "",
    x_title: str | None = None,
    y_title: str | None = None,
    value_name: str = "α",
    diverging: bool = False,
    zmin: float | None = None,
    zmax: float | None = None,
    flags: Sequence[str] = (),
    height: int | None = None,
    annotate: bool | None = None,
    width_px: int = NARROW_PX,
) -> go.Figure:
    """A heatmap of ``z[y, x]`` with hover showing both labels and the value.

    ``flags`` (exact / implied / pooled ×k / masked-only) go into the title so a
    figure can never be mistaken for a different kind of map. Tick labels are thinned
    to what fits a plot ``width_px`` wide (the hover names every cell). ``annotate``: the
    values in their cells (None: up to 144 cells), drawn only where they can be read.
    """
    z = np.asarray(z, dtype=float)
    x_title = t("views.axis.key") if x_title is None else x_title
    y_title = t("views.axis.query") if y_title is None else y_title
    xs, ys = unique_labels(list(x_labels)), unique_labels(list(y_labels))
    if diverging and zmin is None and zmax is None:
        m = float(np.abs(z).max()) or 1.0
        zmin, zmax = -m, m
    trace = dict(
        type="heatmap",
        z=z.astype(np.float32),  # sent as base64 float32: half the bytes of float64
        x=xs,
        y=ys,
        zmin=zmin,
        zmax=zmax,
        colorscale=DIVERGING if diverging else SEQUENTIAL,
        reversescale=diverging,
        hovertemplate=f"{y_title}: %{{y}}<br>{x_title}: %{{x}}<br>{value_name} = %{{z:.4f}}"
        "<extra></extra>",
    )
    height = height or fitted_height(max(len(ys), 1))
    # The bar's ticks for the plot's height less its title's 60 px and a level label band
    # (64): their widest label, what the bar's width hangs on, is the same a few px taller.
    trace["colorbar"] = dict(title=dict(text=value_name)) | bar_ticks(zmin, zmax, height - 124)
    bar_w = bar_px(trace["colorbar"])
    layout, plot_px = fitted_axes(xs, ys, x_title, y_title, height, width_px, bar_w)
    text, annotate = np.round(z, 2), z.size <= 144 if annotate is None else annotate
    if annotate:  # numbers only where a reader can read them; the hover has every one
        room = drawn_px(width_px) - layout["margin"]["l"] - 10 - bar_w
        cell_w = room / max(len(xs), 1)
        annotate = number_px(text, cell_w, plot_px / max(len(ys), 1)) >= readable_px()
    if annotate:
        trace.update(text=text, texttemplate="%{text}")
    full_title = title + (f"  <sup>[{flag_text(flags)}]</sup>" if flags else "")
    layout.update(title=dict(text=full_title), font=FONT)
    layout["margin"].update(r=10, t=60 if title else 20)
    return figure([trace], layout, width_px)


def column_px(share: float) -> int:
    """The width of a column taking ``share`` of the narrowest page beside another (the
    one gap between them shared out, as Streamlit does): what a figure drawn in that column
    is sized for, so its numbers and labels are decided for the room they get, not the
    whole page's. Reckoned less a title's 48-px pad as well (kit.exports.in_column's), a
    projector's 3:2 column came to 488 px where 557 were drawn, and "第 1 跳" stood on end."""
    return int((NARROW_PX - STREAMLIT_GAP_PX) * share)


def drawn_px(width_px: float) -> float:
    """A figure's width on this screen, given as ``width_px`` of the narrowest page (1024-px
    window, sidebar open): presenter mode hides the sidebar, so every share of it grows."""
    return width_px * PAGE_PX / NARROW_PX if presenting() else width_px


def readable_px() -> int:
    """The least size a number in a map's cell is drawn at, on this screen."""
    return PRESENTER_CELL_NUMBER_PX if presenting() else CELL_NUMBER_PX


def number_px(text: np.ndarray, cell_w: float, cell_h: float) -> float:
    """The size plotly.js draws numbers in cells ``cell_w`` × ``cell_h`` px at (textfont
    "auto", heatmap/plot.js): each cell's width over 0.65 em a character of the longest
    number, its height over a 1.3-em line, at most the figure's font."""
    chars = max((len(f"{v:g}") for v in np.ravel(text)), default=1)
    return min(math.floor(cell_w / (0.65 * chars)), math.floor(cell_h / 1.3), FONT["size"])


def bar_px(colorbar: dict) -> float:
    """The width a colour bar takes beside the plot: its bar and pads (46 px) and its widest
    tick label, or its title where wider. Measured in Chromium: a bar ticked "−0.57" took
    86 px, not the 70 once assumed, so numbers reckoned at 10 px in their cells were drawn at 9."""
    ticks = colorbar.get("ticktext") or ["0.8"]  # Plotly's own ticks on 0–1: "0.2" … "1"
    name = ((colorbar.get("title") or {}).get("text")) or ""
    return max(46 + label_px(ticks, FONT["size"]), 10 + label_px([name], FONT["size"]))


def bar_ticks(zmin: float | None, zmax: float | None, plot_px: float) -> dict:
    """A colour bar's ticks, one per 40 px: Plotly's own on a 0–1 scale; on a map's own
    range (a signed effect ±0.004, α on 0–0.084) both ends named, and 0 where it is
    inside. Plotly picks "nice" steps there: ±0.004 in a 120-px bar got dtick 0.005, and
    the bar's one label was "0", so no colour could be read as a number."""
    fit = max(2, int(plot_px // 40))
    if zmin is None or zmax is None or (zmin, zmax) == (0.0, 1.0) or zmax <= zmin:
        return dict(nticks=fit)
    count = min(fit, 5)
    if zmin < 0 < zmax and count % 2 == 0:
        count -= 1  # odd, so 0 is a tick of a scale centred on it
    ticks = np.linspace(zmin, zmax, max(count, 2))
    form = ",.0f" if max(abs(zmin), abs(zmax)) >= 100 else ".2g"  # never "1.5e+03"
    text = [format(v + 0.0, form).replace("-", "−") for v in ticks]  # + 0.0: no "−0"
    return dict(tickmode="array", tickvals=ticks.tolist(), ticktext=text)


def fitted_axes(xs, ys, x_title: str, y_title: str, height: int, width_px: int, bar_w: float):
    """One map's axes laid out for its labels: (layout, plot height).

    Margins fit the labels; x ticks lie level when each fits its column (positions even
    thinned: 0, 5, 10 …), tilt when all fit tilted, else stand upright, the figure growing
    below the map to hold them; on a projector a map is no taller than its screen. The
    room is the figure's on this screen (``width_px`` of the narrowest page, presenting
    the wider share of a projector's page it takes) less its colour bar, ``bar_w`` as
    measured (bar_px): reckoned a flat 110 px, a bar of 70 left the 中文 hops map 63 px a
    column where 90 were drawn, and "第 1 跳" stood on end.

    Upright x labels and the y labels are thinned by plotly.js, not here: on a category
    axis left to ``tickmode="auto"`` it draws one label per 1.2 × tick font size of the
    axis's drawn length (``prepTicks``), so a page wider than ``width_px`` (presenter
    mode hides the sidebar: 956 px of a 1024-px projector, not 535) labels every word
    that fits, at the size the labels really have (``tick_px``). Thinned here for the
    narrowest page and an 18 px font, the Alignment map of Figure 3(a) lost every other
    English word on the projector, "agreement" among them, and every other French one.
    """
    tick_px = map_tick_px()
    line = tick_px * TICK_SIZE / MAP_TICK_PX
    margin = fixed_margins(xs, ys, x_title=True, y_title=True, tick_px=tick_px)
    room = drawn_px(width_px) - margin["l"] - 10 - bar_w
    x_ticks = level_ticks(xs, room, tick_px)
    if x_ticks:
        margin["b"] = FLAT_BAND_PX
    elif fit_tilted(xs, room, line):
        x_ticks = dict(tickangle=-45)
    else:
        upright = int(label_px(xs, tick_px) + 22 + 32)  # upright: down their full width
        height, margin["b"] = height + max(0, upright - margin["b"]), upright
        x_ticks = dict(tickmode="auto", tickangle=-90)
    # Every row label needs its line (up to ROWS_LABELLED rows; more are thinned): the
    # figure grows rather than the labels below and above eating the plot.
    height = max(height, margin["b"] + 60 + (line + 4) * min(len(ys), ROWS_LABELLED))
    if presenting():  # plotly.js thins the row labels to the rows drawn
        height = min(height, max(PRESENTER_MAP_PX, margin["b"] + 60 + MIN_PLOT_PX))
    plot_px = height - margin["b"] - 60
    layout = dict(
        margin=margin,
        height=height,
        xaxis=dict(
            title=dict(text=x_title),
            type="category",
            automargin=False,
            tickfont=dict(size=tick_px),
            **x_ticks,
        ),
        yaxis=dict(
            title=dict(text=y_title),
            autorange="reversed",
            type="category",
            automargin=False,
            tickmode="auto",
            tickfont=dict(size=tick_px),
        ),
    )
    return layout, plot_px


def level_ticks(xs: Sequence[str], room: float, tick_px: float) -> dict | None:
    """x tick settings that lay the labels level, or None where they must tilt or stand:
    short labels (hop 1, H0) each in its column, stood on end three hops read sideways on
    a projector in columns 90 px wide; positions (layers 0 … 29) at every 2nd, 5th or 10th."""
    if fit_flat(xs, room, tick_px):
        return dict(tickangle=0)
    if positions(xs):
        shown = list(xs)[:: position_step(xs, room, tick_px)]
        return dict(tickangle=0, tickmode="array", tickvals=shown, ticktext=shown)
    return None


def map_tick_px() -> float:
    """The size a single map draws its word labels at, on this screen."""
    return PRESENTER_MAP_TICK_PX if presenting() else MAP_TICK_PX


def positions(labels: Sequence[str]) -> bool:
    """Whether an axis names positions (0, 1, 2 …: layers, tokens' places), read off their
    order at every 5th or 10th as a numeric axis is, not words that each need naming."""
    return bool(labels) and all(str(s).isdigit() for s in labels)


def position_step(labels: Sequence[str], px: float, tick_px: float) -> int:
    """Every how many positions one is named, level, each with FLAT_GAP_PX beside it, on
    an axis ``px`` long: 1, 2, 5, 10, 20 … (not 0, 6, 12 …, read as a puzzle)."""
    step = math.ceil((label_px(labels, tick_px) + FLAT_GAP_PX) * len(labels) / max(px, 1))
    return next((k for k in (1, 2, 5, 10, 20, 50, 100) if k >= step), step)


def fit_flat(labels: Sequence[str], px: float, tick_px: float) -> bool:
    """Whether every label fits its own column of an axis ``px`` long, written level, with
    FLAT_GAP_PX between neighbours (the plot's width on this screen: on a projector wider)."""
    return px / max(len(labels), 1) >= label_px(labels, tick_px) + FLAT_GAP_PX


def fit_tilted(labels: Sequence[str], px: float, size=TICK_SIZE) -> bool:
    """Whether every label fits an axis ``px`` long tilted at 45°: each then needs its
    width × 0.71 and its line height along the axis."""
    return px / max(len(labels), 1) >= 0.71 * (text_px(labels, size) + size)


def category_ticks(labels: Sequence[str], px: float, *, size=TICK_SIZE) -> dict:
    """Tick settings for a category axis ``px`` long that show only labels that fit, for
    labels plotly.js does not thin itself: given as ``tickvals`` (shortened panel labels,
    a fixed band), it draws every one and they pile up. A label needs its line height."""
    step = max(1, math.ceil(max(len(labels), 1) / max(1, px // (size + 4))))
    shown = list(labels[::step])
    return dict(tickmode="array", tickvals=shown, ticktext=shown)


def wrap_title(text: str, px: float | None = None, size: int = TITLE_FONT) -> tuple[str, int]:
    """``text`` broken with <br> so no line is wider than ``px`` (Plotly cuts a long title
    at the figure's edge); returns (text, lines). A ``<sup>`` tail starts its own line.
    ``px`` by default: the narrowest page's width less 40; presenting, the projector's page
    less the tool bar Plotly shows over its top right corner while the pointer is on it.
    Widths are Source Sans's (kit.fonts.label_px, 5 % over a title as Chromium draws it):
    text_px's flat 0.62 em broke lines a third short of the width they had."""
    if px is None:
        px = PAGE_PX - MODEBAR_PX if presenting() else NARROW_PX - 40
    return wrap_lines(text, px, size)


def log_axis(values: Sequence[float] = (), *, each: bool = False, **kwargs) -> dict:
    """A log axis labelled at powers of ten only (Plotly also names 2, 3 … 9 by default);
    where ``values`` span under two decades, at 1, 2 and 5 × 10ᵏ (and 3, 7 under one): one
    power of ten alone is one label on the whole axis, and no value could be read.
    ``each``: name every value, where 2 to 12 were measured (the lengths of a sweep)."""
    axis = dict(type="log", dtick=1, minor=dict(showgrid=False), **kwargs)
    positive = [float(v) for v in values if v and v > 0]
    if each and 1 < len(set(positive)) <= 12:
        ticks = sorted(set(positive))
        axis.pop("dtick")
        return axis | dict(tickvals=ticks, ticktext=[f"{v:g}" for v in ticks])
    if positive and max(positive) < 100 * min(positive):
        lo, hi = math.floor(math.log10(min(positive))), math.ceil(math.log10(max(positive)))
        steps = (1, 2, 3, 5, 7) if max(positive) < 10 * min(positive) else (1, 2, 5)
        ticks = [m * 10.0**k for k in range(lo, hi + 1) for m in steps]
        ticks = [v for v in ticks if min(positive) / 2 <= v <= max(positive) * 2]
        axis.pop("dtick")
        axis |= dict(tickvals=ticks, ticktext=[f"{v:g}" for v in ticks])
    return axis


def figure(data: list[dict], layout: dict, width_px: int = NARROW_PX) -> go.Figure:
    """A figure from plotly.js dicts, unvalidated; its title wrapped to the page's width,
    or to ``width_px`` of the narrowest page where the figure is drawn in a column.

    Validation costs ~5 ms a trace (make_subplots ~70 ms) on every rerun; these dicts
    use only plotly.js property names, so it is skipped.
    """
    text = (layout.get("title") or {}).get("text")
    if text:
        wrapped, lines = wrap_title(text, None if presenting() else width_px - 40)
        # Hung from the figure's top edge: Plotly centres a title's first line in the top
        # margin, so a wrapped title's last lines reach down onto the plot's top tick.
        top = dict(yref="container", y=1, yanchor="top", pad=dict(t=TITLE_PAD))
        layout["title"] = (
            top | layout["title"] | dict(text=_flags(wrapped), font=dict(size=TITLE_FONT))
        )
        margin = layout["margin"] = dict(layout.get("margin") or {})
        grown = max(0, 28 + 24 * lines - margin.get("t", 0))
        margin["t"] = margin.get("t", 0) + grown
        if layout.get("height"):  # the title's lines come on top: the plot keeps its room
            layout["height"] += grown
        # kit.exports.in_column wraps it again for a column: what it needs, here.
        title = dict(src=text, lines=lines, size=TITLE_FONT, flag_px=_flag_px())
        title |= dict(page_px=PAGE_PX if presenting() else NARROW_PX, column_px=NARROW_PX - 40)
        layout["meta"] = dict(layout.get("meta") or {}, title=title)
    return go.Figure(data=data, layout=layout, _validate=False)


def _flags(title: str) -> str:
    """A map's flags (its <sup> line) at their own size: Plotly draws a <sup> at 70 % of the
    title, 12 px, too small to read from the back of a room."""
    return flag_spans(title, _flag_px())


def _flag_px() -> int:
    return PRESENTER_FLAG_PX if presenting() else FLAG_PX


def cell_domains(
    sizes: Sequence[float], gap: float, *, reverse: bool = False
) -> list[tuple[float, float]]:
    """Paper-coordinate domains for cells of relative ``sizes`` separated by ``gap``.

    ``reverse`` numbers them from the top (rows), as make_subplots does: the first size is
    the top cell's.
    """
    total = sum(sizes)
    usable = 1 - gap * (len(sizes) - 1)
    out, start = [], 0.0
    for size in sizes[::-1] if reverse else sizes:
        end = start + usable * size / total
        out.append((start, min(end, 1.0)))
        start = end + gap
    return out[::-1] if reverse else out


def axes(n: int, x_domain, y_domain, **extra) -> dict:
    """Layout entries for subplot ``n`` (1-based): its x and y axes over the two domains."""
    suffix = "" if n == 1 else str(n)
    x = dict(domain=list(x_domain), anchor=f"y{suffix}", **extra.get("x", {}))
    y = dict(domain=list(y_domain), anchor=f"x{suffix}", **extra.get("y", {}))
    return {f"xaxis{suffix}": x, f"yaxis{suffix}": y}


def subplot_ref(n: int) -> dict:
    """The trace keys that place a trace on subplot ``n`` (1-based)."""
    suffix = "" if n == 1 else str(n)
    return dict(xaxis=f"x{suffix}", yaxis=f"y{suffix}")


def map_scale(
    z, flags: Sequence[str] = (), value_name: str | None = None, *, diverging=False, least=0.0
):
    """The colour scale a map's kind calls for: ``dict(zmin, zmax, diverging, name, note)``.

    Softmax weights (α): 0–1, or 0–the panel's max (``note`` prints it) when they use
    under a quarter of it. A signed map, an implied one (a method that never forms the
    weights) or one with values outside [0, 1] gets its own diverging scale, ± its largest
    |value| but never under ``least`` (a difference of float rounding stays pale, and the
    note says so), named by its quantity (``value_name``, else the flag's word), never "α".
    A masked-only pattern: 0–1, "may see".
    """
    z = np.asarray(z, dtype=float)
    finite = z[np.isfinite(z)]
    top = float(np.abs(finite).max()) if finite.size else 0.0
    flags = {f.partition(" ×")[0] for f in flags}
    if "masked-only" in flags:
        return dict(zmin=0.0, zmax=1.0, diverging=False, name=t("views.value.pattern"), note="")
    signed = diverging or "signed" in flags or (finite.size and finite.min() < -1e-6)
    if signed or "implied" in flags or top > 1 + 1e-3:
        kind = "signed" if signed else "implied" if "implied" in flags else "unnormalised"
        name = value_name if value_name not in (None, "α") else t(f"views.value.{kind}")
        note = f"{name} ±{top:.3g}"
        if least and top < least:
            note = t("views.value.under", name=name, top=f"{top:.3g}", least=f"{least:g}")
        top = max(top, least) or 1.0
        return dict(zmin=-top, zmax=top, diverging=True, name=name, note=note)
    if 0 < top < 0.25:
        return dict(
            zmin=0.0, zmax=top, diverging=False, name=value_name or "α", note=f"0–{top:.2g}"
        )
    return dict(zmin=0.0, zmax=1.0, diverging=False, name=value_name or "α", note="")


def map_figure(
    amap: AttentionMap, layer: int = 0, head: int = 0, *, z=None, value_name=None, **kwargs
) -> go.Figure:
    """One (layer, head) of an AttentionMap (or ``z`` in its place) on its kind's scale,
    average-pooled to ≤ MAP_CELLS a side for display (said in the title)."""
    z = amap.weights[layer, head] if z is None else np.asarray(z, dtype=float)
    z, f = block_mean(z, MAP_CELLS)
    flags = list(amap.flags) + ([f"display pooled ×{f}"] if f > 1 else [])
    title = kwargs.pop("title", f"{amap.layer_labels[layer]} · {amap.head_labels[head]}")
    scale = kind_scale(z, title, flags, value_name, diverging=kwargs.pop("diverging", False))
    kwargs.setdefault("annotate", None if f == 1 else False)
    return heatmap(
        z,
        block_labels(amap.key_labels, f) if f > 1 else amap.key_labels,
        block_labels(amap.query_labels, f) if f > 1 else amap.query_labels,
        flags=flags,
        **scale,
        **kwargs,
    )


def kind_scale(z, title: str, flags=(), value_name=None, *, diverging=False) -> dict:
    """:func:`heatmap` keywords drawing ``z`` on its kind's scale (:func:`map_scale`), the
    range in the title when it is not 0–1."""
    s = map_scale(z, flags, value_name, diverging=diverging)
    return dict(
        title=title + (f" · {s['note']}" if s["note"] else ""),
        value_name=s["name"],
        diverging=s["diverging"],
        zmin=s["zmin"],
        zmax=s["zmax"],
    )


def grid_panels(maps, *, side=GRID_CELLS, value_name=None, diverging=False, layer=None):
    """The panels of :func:`map_grid` and its HTML twin, each pooled to ≤ ``side`` a side
    with its own scale (:func:`map_scale`) and its flags and range in its title.

    ``maps``: panels ``dict(z, x, y, title, flags)`` (and ``least``, the narrowest range
    of a diverging panel's scale: :func:`map_scale`), or an AttentionMap (every head of
    ``layer``, or of every layer)."""
    if isinstance(maps, AttentionMap):
        layers = range(maps.shape[0]) if layer is None else [layer]
        maps = [
            dict(
                z=maps.weights[i, h],
                x=maps.key_labels,
                y=maps.query_labels,
                title=f"{maps.layer_labels[i]} · {maps.head_labels[h]}",
                flags=[f for f in maps.flags if f != "exact"],
            )
            for i in layers
            for h in range(maps.shape[1])
        ]
    out = []
    for p in maps:
        z, f = block_mean(np.asarray(p["z"], dtype=float), side)
        flags = list(p.get("flags", ())) + ([f"display pooled ×{f}"] if f > 1 else [])
        scale = map_scale(z, flags, value_name, diverging=diverging, least=p.get("least", 0.0))
        head = p["title"] + (f" [{flag_text(flags)}]" if flags else "")
        labels = {a: block_labels(p[a], f) if f > 1 else list(p[a]) for a in ("x", "y")}
        note = f" · {scale['note']}" if scale["note"] else ""
        out.append(dict(p, z=z, factor=f, flags=flags, title=head + note, scale=scale, **labels))
    return out


def short_labels(labels: Sequence[str], chars: int = 8) -> list[str]:
    """Tick text of at most ``chars`` characters (the hover names the whole token)."""
    out = []
    for label in labels:
        raw = html.unescape(label)
        out.append(label if len(raw) <= chars else html.escape(raw[: chars - 1]) + "…")
    return out


def map_grid(
    maps,
    *,
    columns: int = 4,
    value_name: str | None = None,
    diverging: bool = False,
    marker: tuple[int, int] | None = None,
    grey_gaps: bool = False,
    layer: int | None = None,
    width_px: int = NARROW_PX,
    header_px: int = 0,
    title: str = "",
) -> go.Figure:
    """Small multiples in one figure (one figure paints far faster than many): panels of
    :func:`grid_panels`, each on its kind's scale, with thinned token ticks.

    At most ``columns`` a row, fewer when a panel would be under MIN_PANEL_PX in a figure
    ``width_px`` wide; ``header_px`` leaves a band on top for the caller's own trace.
    NaN cells are blank (grey with ``grey_gaps``: the keys a pattern cannot see);
    ``marker`` = (query, key) rings that cell in every panel; a panel's ``traces`` (in its
    labels: gold links) go on its axes, each name once in the legend. One colour bar for the
    panels on 0–1; every other panel prints its range in its title.
    """
    panels = grid_panels(maps, value_name=value_name, diverging=diverging, layer=layer)
    drawn = drawn_px(width_px)  # laid out and drawn at this screen's width
    g = grid_geometry(panels, columns, drawn, header_px)
    top = 28 + 24 * wrap_title(title)[1] if title else 10
    data, layout, notes, bar, shown = [], {}, [], False, set()
    for i, p in enumerate(panels, start=1):
        x_dom, y_dom = g.domains(i)
        xs, ys, s = unique_labels(p["x"]), unique_labels(p["y"]), p["scale"]
        shows = not bar and _on_bar(s)
        bar |= shows
        data.append(_panel_trace(p["z"], xs, ys, s, shows, g.plot_h, g.bar_x) | subplot_ref(i))
        for extra in p.get("traces", ()):  # the caller's marks, in the panel's labels
            data.append(dict(extra, showlegend=extra.get("name") not in shown, **subplot_ref(i)))
            shown.add(extra.get("name"))
        if marker is not None:
            data.append(_ring(xs[marker[1] // p["factor"]], ys[marker[0] // p["factor"]], i))
        first_column = (i - 1) % g.cols == 0
        # Square panels on any page: a panel laid out for 535 px and drawn on a wider one
        # (1440 px, sidebar open) stretched to 1.9:1 and flattened its diagonals.
        x_axis = dict(_panel_axis(xs, g.side, x=True), constrain="domain")
        y_axis = dict(
            _panel_axis(ys, g.height),
            autorange="reversed",
            showticklabels=first_column or not g.shared,
            scaleanchor=subplot_ref(i)["xaxis"],
            scaleratio=len(xs) / max(len(ys), 1) * g.height / g.side,
            constrain="domain",
        )
        layout.update(axes(i, x_dom, y_dom, x=x_axis, y=y_axis))
        notes.append(panel_title(p["title"], x_dom, y_dom[1], g.side, g.title_font))
    layout.update(title=dict(text=title), font=FONT, annotations=notes, height=top + g.plot_h + 10)
    # Drawn the width it is laid out for (kit.exports.chart), not stretched over a wider
    # page: at 1440 px its square panels stood apart in a figure 1.6 times their layout.
    layout.update(margin=dict(l=0, r=10, t=top, b=10), width=int(drawn))
    if grey_gaps:
        layout["plot_bgcolor"] = "rgba(128,128,128,0.75)"
    return figure(data, layout)


@dataclass(frozen=True)
class GridGeometry:
    """Where :func:`map_grid` puts its panels, in px of the plot (``plot_w`` × ``plot_h``)."""

    cols: int
    side: float  # a panel's map's width
    gap: float  # between two panels' maps, beyond their tick labels' band
    y_band: float  # the first column's tick labels
    title_px: float  # a panel's title, above its map
    row_px: float
    header_px: int
    plot_w: float
    plot_h: float
    shared: bool  # every panel has the same rows: their tokens are named once a row
    title_font: int = PANEL_TITLE_PX  # a panel's title's type, px
    bar_x: float | None = None  # the colour bar's left edge (paper), beside the panels
    height: float = 0.0  # a panel's map's height: ``side``, or a little more to name every row

    def domains(self, i: int) -> tuple[tuple[float, float], tuple[float, float]]:
        """Panel ``i``'s (1-based) x and y domains in paper coordinates."""
        r, c = divmod(i - 1, self.cols)
        x0 = (self.y_band + c * (self.side + self.gap)) / self.plot_w
        y1 = 1 - (self.header_px + r * self.row_px + self.title_px) / self.plot_h
        return (x0, x0 + self.side / self.plot_w), (y1 - self.height / self.plot_h, y1)


def grid_geometry(panels: list[dict], columns: int, width_px: int, header_px: int) -> GridGeometry:
    """The layout of :func:`map_grid`: at most ``columns`` a row, fewer when a panel would be
    under MIN_PANEL_PX in a figure ``width_px`` wide, with bands for ticks and titles."""
    tick = panel_tick_px()
    x_band = min(70, text_px(short_labels(sum((p["x"] for p in panels), [])), tick) + 10)
    y_band = min(70, text_px(short_labels(sum((p["y"] for p in panels), [])), tick) + 10)
    # Plotly moves the plot's right edge in by the colour bar's width: the panels share the rest.
    on_bar = [p["scale"] for p in panels if _on_bar(p["scale"])]
    # its width measured: "row scaled 0–1" took 136 px, not 70
    bar_w = bar_px(dict(title=dict(text=on_bar[0]["name"]))) if on_bar else 0
    plot_w = width_px - 10 - bar_w
    shared = all(p["y"] == panels[0]["y"] for p in panels)
    gap = 12 + (0 if shared else y_band)
    cols = max(1, min(columns, len(panels), int((plot_w - y_band + gap) // (MIN_PANEL_PX + gap))))
    side = min(320, (plot_w - y_band - (cols - 1) * gap) / cols)
    bar_x = None
    if on_bar and plot_w - (y_band + cols * side + (cols - 1) * gap) >= gap:
        # Panels at their largest leave room: the bar beside them, not across it (a
        # projector's grid of two 320-px panels had its scale 200 px away).
        plot_w += bar_w
        bar_x = (y_band + cols * side + (cols - 1) * gap + gap) / plot_w
    rows = math.ceil(len(panels) / cols)
    font = PRESENTER_PANEL_TITLE_PX if presenting() else PANEL_TITLE_PX
    lines = max(wrap_title(p["title"], side, font)[1] for p in panels)
    title_px = round(PANEL_TITLE_LINE_EM * font) * lines
    # A little taller than square where that names every row: on a projector the 15 French
    # words of Is it faithful? had 15.7 px a row of the 18 a label needs; every other was named.
    need = max(len(p["y"]) for p in panels) * (tick + 4)
    height = need if side < need <= 1.2 * side else side
    row_px = title_px + height + x_band + 16
    return GridGeometry(
        cols,
        side,
        gap,
        y_band,
        title_px,
        row_px,
        header_px,
        plot_w,
        header_px + rows * row_px,
        shared,
        font,
        bar_x,
        height,
    )


def _panel_trace(z, xs, ys, s: dict, shows_bar: bool, plot_h: float, bar_x=None) -> dict:
    """One panel's heatmap on its scale ``s`` (:func:`map_scale`); its bar at paper
    ``bar_x`` where given (else Plotly's place, right of the plot)."""
    bar = dict(title=dict(text=s["name"]), len=min(1.0, BAR_PX / plot_h), thickness=14)
    bar |= {} if bar_x is None else dict(x=bar_x, xanchor="left")
    return dict(
        type="heatmap",
        z=z.astype(np.float32),
        x=xs,
        y=ys,
        zmin=s["zmin"],
        zmax=s["zmax"],
        colorscale=DIVERGING if s["diverging"] else SEQUENTIAL,
        reversescale=s["diverging"],
        showscale=shows_bar,
        colorbar=bar,
        hovertemplate="%{y} → %{x}<br>" + s["name"] + " = %{z:.4f}<extra></extra>",
    )


def _ring(x: str, y: str, i: int) -> dict:
    """A red ring around cell (``y``, ``x``) of panel ``i``: the cell the caller marks."""
    ring = dict(symbol="circle-open", size=14, color="red", line={"width": 3})
    at = dict(x=[x], y=[y], marker=ring, showlegend=False)
    return dict(type="scatter", mode="markers", hoverinfo="skip", **at, **subplot_ref(i))


def panel_title(text: str, x_dom, top: float, px: float, size: int = PANEL_TITLE_PX) -> dict:
    """A panel's title in ``size``-px type, wrapped to ``px`` (the panel's width), centred
    above the panel at paper height ``top``: a title wider than its panel runs into its
    neighbours' (text.count("<br>") + 1 lines)."""
    note = dict(text=wrap_title(text, px, size)[0], x=sum(x_dom) / 2, y=top)
    note.update(xanchor="center", yanchor="bottom", xref="paper", yref="paper")
    return dict(note, showarrow=False, font=dict(size=size))


def panel_titles(titles, domains, plot_px: float, size: int) -> tuple[list[dict], int]:
    """:func:`panel_title` over panels side by side (paper ``domains`` of a plot ``plot_px``
    wide), each wrapped to its own panel, and the most lines any of them takes."""
    notes = [
        panel_title(x, d, 1, (d[1] - d[0]) * plot_px, size)
        for x, d in zip(titles, domains, strict=True)
    ]
    return notes, max((n["text"].count("<br>") + 1 for n in notes), default=1)


def rows_plot_px(rows) -> float:
    """A full-width figure's plot on the narrowest page (this screen's share of it), less its
    row labels in the figure's type and its 10-px margins."""
    return drawn_px(NARROW_PX) - 20 - label_px(rows, FONT["size"])


def columns_css(
    columns: int, label_px: int = 70, gap_rem: float = 1.2, min_px: float | None = None
) -> str:
    """An HTML grid's columns: as many as fit with ``min_px`` each (else MIN_PANEL_PX of
    map beside ``label_px`` of labels), at most ``columns``; ``gap_rem`` is the grid's
    column gap. (The Compare page's grid had a 1.5rem gap counted as 1.2: two columns came
    to 5 px more than the page, and A and B stood one above the other at every width.)"""
    n = max(1, columns)
    room = f"100% - {gap_rem * (n - 1):.2f}rem - 1px"  # the pixel: rounding never drops one
    least = MIN_PANEL_PX + label_px if min_px is None else min_px
    # Never wider than the page: a 50-word sentence's panel scrolls inside its column.
    width = f"max(min({least:.0f}px, 100%), calc(({room}) / {n}))"
    return f"grid-template-columns:repeat(auto-fill, minmax({width}, 1fr))"


def _on_bar(scale: dict) -> bool:
    """Whether a panel is on the grid's one colour bar: softmax weights on 0–1."""
    return scale["zmax"] == 1 and not scale["diverging"]


def panel_tick_px() -> int:
    """A grid panel's tick labels: 12 px on a screen, 14 on a projector."""
    return PRESENTER_TICK_FONT if presenting() else TICK_FONT


def _panel_axis(labels: list[str], px: float, *, x: bool = False) -> dict:
    """A panel's category axis: as many (shortened) token labels as fit in ``px``. An x
    axis's labels lie level where each fits with its gap between two shown: positions
    (0, 5, 10 …: on end, read sideways on a projector) even thinned up to twice as much,
    as the ones between are read off their order; words only where none is lost."""
    tick = panel_tick_px()
    shown = category_ticks(labels, px, size=tick)["tickvals"]
    angle = {}
    if x:
        n = max(len(labels), 1)
        step = math.ceil((label_px(short_labels(labels), tick) + FLAT_GAP_PX) * n / px)
        thinned = math.ceil(n / max(len(shown), 1))  # on end
        numbered = positions(labels)
        level = step <= thinned * (2 if numbered else 1)
        end = n
        if numbered:
            step = position_step(labels, px, tick)
            end = n - 1  # the last column's, 8 px from the next panel's 0, read "40 0"
        angle = dict(tickangle=0 if level else -90)
        shown = labels[:end:step] if level else shown
    font = dict(size=tick)
    kw = dict(tickvals=shown, ticktext=short_labels(shown), tickfont=font, showgrid=False)
    return dict(type="category", tickmode="array", **kw, **angle)
