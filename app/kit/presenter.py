"""Presenter mode: the studio on a projector, for a room that reads it from the back.

A toggle in the page's top-right corner (and ``?present=1`` in the link) hides the sidebar,
captions, detail expanders and export rows, enlarges type and figures, moves each page's
controls and notes below its figure (so the first screen at 1024 × 768 shows the figure; a
step slider stays above the figure it drives), hides deck management, and draws
every figure with colour-blind-safe maps that still read in greyscale. All of it is CSS
injected into the page and figure styling on the server: nothing is fetched.
"""

from __future__ import annotations

import re

import plotly.graph_objects as go
import streamlit as st

from kit.i18n import t
from kit.url import flag, url_default, url_sync

KEY = "kit-present"
PAGE_PX = 956  # the page's width on a 1024-px projector: presenter mode hides the sidebar
# The height presenter mode grows a figure to: 768 px less a title, a section row and a step
# slider above it, so a short figure, key labels included, fits the first screen.
MAX_HEIGHT = 480
# Streamlit's Plotly theme sizes tick labels and legends (12 px) and axis titles (14 px)
# itself, and a theme's size for them wins over the figure's font: on a projector these are
# set, wherever a view left them to the theme (a view that sized them laid them out in px).
TICK_PX, LEGEND_PX, AXIS_TITLE_PX = 16, 16, 18
_AXIS = re.compile(r"[xy]axis\d*$")
_SCALED = {"heatmap", "contour", "histogram2d"}  # traces that draw a colour bar unless told not
_CARTESIAN = {"scatter", "scattergl", "bar", "heatmap", "box", "histogram", "violin"}

# The studio's one list of qualitative colours, for lines and groups, on a screen and on a
# projector alike: colour-blind safe (Okabe & Ito 2008). Streamlit's theme colorway pairs a
# dark and a light shade (blue and light blue, red and pink, …), so two unrelated lines read
# as one pair, and its tenth colour (#d5dae5) vanishes on white.
OKABE_ITO = [
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
]
BLUE, ORANGE, GREEN, PINK, SKY, VERMILLION, YELLOW, BLACK = OKABE_ITO
# Lines and groups: without the yellow (a thin line or a small marker of it vanishes on
# white), orange after pink: a marked span of steps is orange (views.timeline.BAND).
QUALITATIVE = [BLUE, VERMILLION, GREEN, PINK, ORANGE, SKY, BLACK]
# Past the colours, a marker shape per round of them: colour and shape tell 35 apart.
SYMBOLS = ("circle", "diamond", "square", "triangle-up", "x")
# ColorBrewer PuOr (orange → white → purple), written out: plotly.js has no PuOr by name and
# the figures skip the Python-side validation that would expand the name.
_PUOR = [
    "rgb(127,59,8)",
    "rgb(179,88,6)",
    "rgb(224,130,20)",
    "rgb(253,184,99)",
    "rgb(254,224,182)",
    "rgb(247,247,247)",
    "rgb(216,218,235)",
    "rgb(178,171,210)",
    "rgb(128,115,172)",
    "rgb(84,39,136)",
    "rgb(45,0,75)",
]
PUOR = [[i / (len(_PUOR) - 1), c] for i, c in enumerate(_PUOR)]

# kind → (on a screen, on a projector). Viridis and Cividis rise monotonically in lightness,
# so a greyscale print or a washed-out projector still orders the cells; Cividis is also
# the same for viewers with and without red–green colour blindness.
PALETTES = {
    "sequential": ("Viridis", "Cividis"),
    "diverging": ("RdBu", PUOR),
    "qualitative": (QUALITATIVE, QUALITATIVE),
}
_SEQUENTIAL_NAMES = {"viridis", "cividis", "blues", "greys", "ylgnbu", "plasma", "inferno"}
_DIVERGING_NAMES = {"rdbu", "puor", "rdylbu", "picnic", "portland", "bluered", "balance"}

# The toggle is fixed at the top right, so content scrolls under it: a blurred, faintly
# grey backing keeps its label readable over a figure, in the light and the dark theme.
_CSS_ALWAYS = """
<style>
.st-key-kit-present-box { position: fixed; top: .55rem; right: 4.5rem; z-index: 999991;
  width: auto !important; padding: .1rem .6rem; border-radius: .6rem;
  background: rgba(128, 128, 128, .14); backdrop-filter: blur(8px); }
</style>
"""
# Streamlit's own test ids and the kit's container keys (class st-key-<key>); controls
# wrapped in presenter.controls() take flex order 10, after the figures of their block,
# notes (presenter.notes()) order 20, after those controls; presenter.manage() is hidden.
_CSS_PRESENTING = """
<style>
[data-testid=stSidebar], [data-testid=stSidebarCollapsedControl],
[data-testid=stExpandSidebarButton], header[data-testid=stHeader],
[data-testid=stCaptionContainer], [data-testid=stExpander],
[class*=st-key-kit-exports], [class*=st-key-kit-link] { display: none !important; }
.st-key-kit-present-box { top: .3rem; right: .8rem; }
[data-testid=stMainBlockContainer] { padding: .6rem 2rem 2rem !important;
  max-width: none !important; }
[data-testid=stLayoutWrapper]:has(> [class*=st-key-kit-controls]) { order: 10; }
[data-testid=stLayoutWrapper]:has(> [class*=st-key-kit-notes]) { order: 20; }
[class*=st-key-kit-manage] { display: none !important; }
h1 { font-size: 1.9rem !important; padding: 0 0 .2rem !important; }
h2, h3 { font-size: 1.6rem !important; padding: .1rem 0 !important; }
[data-testid=stMarkdownContainer] p, [data-testid=stMarkdownContainer] li {
  font-size: 1.15rem; }
[data-testid=stWidgetLabel] p { font-size: 1.1rem; }
[data-testid=stTable] :is(th, td) { font-size: 1.1rem; }
</style>
"""


def presenting() -> bool:
    """True while presenter mode is on for this session (its toggle, or ``?present=1``)."""
    if KEY in st.session_state:
        return bool(st.session_state[KEY])
    try:
        return flag(st.query_params.get("present", "0"))
    except ValueError:
        return False


def presenter_toggle() -> bool:
    """The corner toggle and the page's CSS; returns whether presenter mode is on."""
    with st.container(key="kit-present-box"):
        on = st.toggle(
            t("presenter.toggle"),
            value=url_default("present", False, flag),
            key=KEY,
            help=t("presenter.help"),
        )
    url_sync(present=1 if on else None)
    st.html(_CSS_ALWAYS + (_CSS_PRESENTING if on else ""))
    return on


def controls(name: str = "main"):
    """A block of controls that presenter mode moves below the figures it drives."""
    return st.container(key=f"kit-controls-{name}")


def notes(name: str):
    """Text that explains a figure (an introduction, warnings about the input): presenter
    mode moves it below the figures and controls of its block, so the figure comes first.
    A control that drives a figure (a step slider) is not wrapped: it stays above it."""
    return st.container(key=f"kit-notes-{name}")


def manage(name: str):
    """Housekeeping (choosing or downloading a deck): hidden while presenting."""
    return st.container(key=f"kit-manage-{name}")


def look(i: int) -> tuple[str, str]:
    """(colour, marker symbol) of the ``i``-th of many groups: no two alike up to 35."""
    n = len(QUALITATIVE)
    return QUALITATIVE[i % n], SYMBOLS[i // n % len(SYMBOLS)]


def palette(kind: str):
    """The colour scale (or list) of ``kind`` for the current mode; views and charts use it."""
    return PALETTES[kind][presenting()]


def _scale(value):
    """The current mode's scale for a named Plotly scale; anything else left as drawn."""
    if not isinstance(value, str):
        return value
    name = value.lower().removesuffix("_r")
    if name in _SEQUENTIAL_NAMES:
        return palette("sequential")
    if name in _DIVERGING_NAMES:
        return palette("diverging")
    return value


def restyle(fig: go.Figure) -> go.Figure:
    """The figure for a projector: projector palettes, larger type, a little taller (up to
    ``MAX_HEIGHT``, never shorter than its view drew it: a grid's tick and title bands are
    laid out in px, and squeezed they run into each other)."""
    spec = fig.to_dict()
    for trace in spec.get("data", []):
        if "colorscale" in trace:
            trace["colorscale"] = _scale(trace["colorscale"])
        marker = trace.get("marker")
        if isinstance(marker, dict) and "colorscale" in marker:
            marker["colorscale"] = _scale(marker["colorscale"])
    layout = spec.setdefault("layout", {})
    for name, axis in layout.items():
        if name.startswith("coloraxis") and isinstance(axis, dict) and "colorscale" in axis:
            axis["colorscale"] = _scale(axis["colorscale"])
    layout.setdefault("colorway", palette("qualitative"))
    font = layout.setdefault("font", {})
    font["size"] = max(18, font.get("size", 12))
    own = {n: (a.get("tickfont") or {}).get("size") for n, a in layout.items() if _AXIS.match(n)}
    _theme_sizes(layout, spec.get("data", []))
    if isinstance(layout.get("height"), int | float):
        height = layout["height"]
        layout["height"] = max(height, min(int(height * 1.15), MAX_HEIGHT))
        _thin_ticks(spec, layout["height"], font["size"], own)
    return go.Figure(spec, _validate=False)


def _theme_sizes(layout: dict, traces: list) -> None:
    """Tick labels, legend and axis titles in the projector's sizes where the view left them
    to Streamlit's theme, which otherwise draws them at 12–14 px whatever the font says."""
    if any(t.get("type", "scatter") in _CARTESIAN for t in traces):
        layout.setdefault("xaxis", {})
        layout.setdefault("yaxis", {})
    for name, axis in layout.items():
        if not (_AXIS.match(name) and isinstance(axis, dict)):
            continue
        axis.setdefault("tickfont", {}).setdefault("size", TICK_PX)
        title = axis.get("title")
        if isinstance(title, str):
            title = axis["title"] = {"text": title}
        if isinstance(title, dict):
            title.setdefault("font", {}).setdefault("size", AXIS_TITLE_PX)
    legend = layout.setdefault("legend", {})
    legend.setdefault("font", {}).setdefault("size", LEGEND_PX)
    # A colour bar's numbers too: a grid's bar of α read 0.1 … 0.9 at 11 px on the projector.
    for trace in traces:  # a bar drawn by default has no settings to size yet
        if trace.get("type") in _SCALED and trace.get("showscale", True):
            axis = trace.get("coloraxis")
            (layout.setdefault(axis, {}) if axis else trace).setdefault("colorbar", {})
    for bar in _colour_bars(layout, traces):
        bar.setdefault("tickfont", {}).setdefault("size", TICK_PX)
        title = bar.get("title")
        if isinstance(title, dict):
            title.setdefault("font", {}).setdefault("size", AXIS_TITLE_PX)


def _colour_bars(layout: dict, traces: list) -> list[dict]:
    """The figure's colour bars: its traces', its markers' and its colour axes'."""
    bars = [t["colorbar"] for t in traces if isinstance(t.get("colorbar"), dict)]
    bars += [t["marker"]["colorbar"] for t in traces if _marker_bar(t)]
    return bars + [
        a["colorbar"] for n, a in layout.items() if n.startswith("coloraxis") and _bar(a)
    ]


def _thin_ticks(spec: dict, height: int, size: int, own: dict) -> None:
    """Larger type in a figure no taller than the screen: at most as many ticks on its
    vertical axes and colour bars as fit one above another (a view thins its ticks for
    its own height and type size, which presenter mode has just changed). A panel's axis
    (one with a domain) has its domain's share of the plot, in the tick size its view gave
    it (``own``: axis name → size, where set): a grid's three panels side by side are
    three y axes on one row, laid out for 14-px ticks, and counted as three rows of 18-px
    type their 15 target words were cut to every fourth."""
    layout = spec["layout"]
    margin = layout.get("margin") or {}
    rows = sum(1 for name in layout if name.startswith("yaxis")) or 1
    plot = height - margin.get("t", 100) - margin.get("b", 80)
    bars = _colour_bars(layout, spec.get("data", []))
    axes = [(n, a) for n, a in layout.items() if n.startswith("yaxis") and isinstance(a, dict)]
    if not any(n.startswith("yaxis") for n in layout):
        axes.append(("yaxis", layout.setdefault("yaxis", {})))
    for name, axis in [*axes, *((None, b) for b in bars)]:
        if axis.get("type") == "category" and axis.get("tickmode") == "auto":
            continue  # plotly.js thins it for its drawn length and its labels' real size
        domain = axis.get("domain") if name else None
        share = domain[1] - domain[0] if domain else 1 / rows  # a colour bar: as ever
        tick = (own.get(name) or size) if domain else size
        fit = max(2, int(plot * share / (1.25 * tick)))  # a line: its size and a little air
        values = axis.get("tickvals")
        if isinstance(values, list | tuple) and len(values) > fit:  # thinned for its own size
            step = -(-len(values) // fit)
            axis["tickvals"] = list(values)[::step]
            if isinstance(axis.get("ticktext"), list | tuple):
                axis["ticktext"] = list(axis["ticktext"])[::step]
        elif "dtick" not in axis and values is None:
            axis["nticks"] = min(axis.get("nticks") or fit, fit)


def _bar(axis) -> bool:
    return isinstance(axis, dict) and isinstance(axis.get("colorbar"), dict)


def _marker_bar(trace: dict) -> bool:
    return isinstance(trace.get("marker"), dict) and _bar(trace["marker"])
