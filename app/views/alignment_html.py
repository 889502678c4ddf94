"""Many alignments at once as one HTML grid: the Compare page's maps (every model; A, B
and their difference); and one vector as a coloured HTML strip (the Alignment page's
c_i, s_{i−1} and W_a s at the chosen decoding step).

Seven Plotly heatmaps cost the browser 100–200 ms to lay out and measure their ~165 tick
labels on every typed sentence; the same maps as table cells cost a few milliseconds
(bench/interaction.py, quiet machine: Compare's median edit 557 → 354–384 ms). The figure stays a
Plotly figure in the view's export bundle; on screen each cell is a coloured box whose
tooltip gives its words and α. Every word is escaped: source words are the user's text.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from kit.i18n import t
from kit.presenter import palette, presenting

from views.heatmap import columns_css, text_px
from views.style import POSSIBLE, SURE

LEVELS = 100  # colour steps: finer than the eye tells apart on a projector
GAP_REM = 1.5  # between two columns of maps


def colours(scale) -> tuple[str, ...]:
    """A Plotly colour scale (a name, or [[position, colour], …]) at LEVELS + 1 steps."""
    return _colours(scale if isinstance(scale, str) else tuple(map(tuple, scale)))


@lru_cache(maxsize=8)
def _colours(scale) -> tuple[str, ...]:
    from plotly.colors import sample_colorscale

    scale = scale if isinstance(scale, str) else [list(stop) for stop in scale]
    return tuple(sample_colorscale(scale, [i / LEVELS for i in range(LEVELS + 1)]))


# A panel is two rows of the grid (a subgrid): its title, and its map under it. The titles
# of a row share one height, so beside a title wrapped to more lines A's and B's rows still
# line up (the B title's third line put its rows 20 px below A's), and a short map stays
# under its title (at the panel's foot, your own sentence's two-word translation stood a
# screen below its title, beside its neighbour's fourteen rows).
CSS = """
<style>
.kit-agrid {{ display:grid; gap:1.2rem {gap}rem; font-size:{font}px; line-height:1.1; }}
.kit-agrid-panel {{ overflow-x:auto; display:grid; grid-row:span 2; grid-template-rows:subgrid;
  row-gap:.3rem; }}
.kit-agrid-title {{ text-align:center; align-self:end; }}
.kit-agrid table {{ border-collapse:collapse; width:100%; align-self:start; }}
.kit-agrid td {{ min-width:6px; max-width:{cell}px; height:{row}px; padding:0; }}
.kit-agrid th {{ font-weight:normal; white-space:nowrap; }}
.kit-agrid-tgt {{ text-align:right; padding-right:.35rem; }}
.kit-agrid-src {{ writing-mode:vertical-rl; transform:rotate(180deg); text-align:left;
  padding:.3rem 0 0; vertical-align:top; font-size:.85em; line-height:1; }}
.kit-agrid td.sure {{ box-shadow:inset 0 0 0 3px {sure}; }}
.kit-agrid td.possible {{ outline:3px dotted {possible}; outline-offset:-3px; }}
.kit-agrid-key {{ display:flex; gap:1.5rem; align-items:center; flex-wrap:wrap;
  margin:.2rem 0 .8rem; font-size:{font}px; }}
.kit-agrid-bar {{ display:inline-block; width:160px; height:12px; vertical-align:middle;
  margin:0 .4rem; }}
.kit-agrid-swatch {{ display:inline-block; width:14px; height:14px; margin-right:.3rem;
  vertical-align:middle; }}
</style>
"""


def _width(p: dict, font: int, cell: int) -> float:
    """A panel's width at ``cell`` px a source word: its cells, labels and their padding."""
    return len(p["src"]) * cell + text_px(p["tgt"], font) + 12


def _panel(p: dict, palette, zmin: float, zmax: float, value: str, *, font: int, cell: int) -> str:
    """One map as a table, no wider than its cells and labels need: in a column wider than
    that, a table of width 100% gave the spare width to its label column, and the map
    stood at the column's right edge behind a blank band."""
    w = np.clip(np.nan_to_num(np.asarray(p["weights"], dtype=float)), zmin, zmax)
    level = np.rint((w - zmin) / (zmax - zmin) * LEVELS).astype(int)
    value = html.escape(value)
    src = [html.escape(s) for s in p["src"]]
    tgt = [html.escape(s) for s in p["tgt"]]
    sure = {(i, j) for j, i in p.get("sure", ())}
    possible = {(i, j) for j, i in p.get("possible", ())} - sure
    rows = []
    for i, word in enumerate(tgt):
        cells = []
        for j, source in enumerate(src):
            gold = "sure" if (i, j) in sure else "possible" if (i, j) in possible else ""
            mark = f" class={gold}" if gold else ""
            cells.append(
                f'<td{mark} style="background:{palette[level[i, j]]}" '
                f'title="{word} ← {source}: {value} = {w[i, j]:.3f}"></td>'
            )
        rows.append(f'<tr><th class="kit-agrid-tgt">{word}</th>{"".join(cells)}</tr>')
    foot = "".join(f'<th class="kit-agrid-src">{s}</th>' for s in src)
    title = "<br>".join(html.escape(line) for line in p["title"])
    return (
        f'<div class="kit-agrid-panel" style="max-width:{_width(p, font, cell):.0f}px">'
        f'<div class="kit-agrid-title">{title}</div>'
        f"<table>{''.join(rows)}<tr><th></th>{foot}</tr></table></div>"
    )


def alignment_grid_html(
    panels: Sequence[dict],
    *,
    scale=None,
    columns: int = 3,
    large: bool | None = None,
    zmin: float = 0.0,
    zmax: float = 1.0,
    value: str = "α",
) -> str:
    """Every panel (weights [target × source], src, tgt, title lines, optionally sure and
    possible gold links as (source j, target i) pairs) in one grid with one colour key.

    ``scale``: a Plotly colour scale, and ``large``: projector sizes; both follow
    presenter mode unless given. ``zmin`` … ``zmax`` spans the scale, ``value`` names the
    number (a difference of two maps: −1 … 1 on a diverging scale, "Δα").
    """
    if scale is None or large is None:
        scale = palette("sequential") if scale is None else scale
        large = presenting() if large is None else large
    swatches = colours(scale)
    css = CSS.format(
        gap=GAP_REM,
        font=18 if large else 14,
        cell=30 if large else 24,
        row=24 if large else 19,
        sure=SURE,
        possible=POSSIBLE,
    )
    # Inline, like the column count: several grids on one page share the class rules.
    gradient = f"background:linear-gradient(to right, {', '.join(swatches[:: LEVELS // 10])})"
    bar = f'<span class="kit-agrid-bar" style="{gradient}"></span>'
    bar += f"{zmax:g} {html.escape(value)}"
    key = [f"<span>{zmin:g}{bar}</span>"]
    if any(p.get("sure") for p in panels):
        key.append(
            f'<span><span class="kit-agrid-swatch" style="box-shadow:inset 0 0 0 3px {SURE}">'
            f"</span>{html.escape(t('views.alignment.gold_sure'))}</span>"
        )
    if any(set(p.get("possible", ())) - set(p.get("sure", ())) for p in panels):
        key.append(
            f'<span><span class="kit-agrid-swatch" style="outline:3px dotted {POSSIBLE};'
            f'outline-offset:-3px"></span>{html.escape(t("views.alignment.gold_possible"))}</span>'
        )
    size = dict(font=18 if large else 14, cell=30 if large else 24)
    body = "".join(_panel(p, swatches, zmin, zmax, value, **size) for p in panels)
    key_row = f'<div class="kit-agrid-key">{"".join(key)}</div>'
    # A column holds a panel whose vertical source words stand apart (a cell as wide as
    # their line), or the grid takes fewer columns.
    least = max(_width(p, size["font"], size["font"] + 2) for p in panels) if panels else 0
    grid = columns_css(columns, gap_rem=GAP_REM, min_px=least)
    return f'{css}{key_row}<div class="kit-agrid" style="{grid}">{body}</div>'


STRIP_CSS = """
<style>
.kit-strip {{ margin:.2rem 0 .8rem; font-size:{font}px; }}
.kit-strip-title {{ margin-bottom:.3rem; }}
.kit-strip-cells {{ display:flex; height:{height}px; }}
.kit-strip-cells span {{ flex:1 1 0; min-width:1px; }}
.kit-strip-key {{ margin-top:.3rem; font-size:.85em; }}
.kit-strip-bar {{ display:inline-block; width:120px; height:10px; vertical-align:middle;
  margin:0 .4rem; }}
</style>
"""


def vector_strip_html(v, title: str, name: str, *, scale=None, large: bool | None = None) -> str:
    """One vector as a row of coloured cells, blue below 0 and red above (the colours of
    views.alignment.vector_strip, its Plotly twin), scaled to ±max|v|; each cell's tooltip
    gives its dimension and value. Redrawn on every step, where a Plotly strip costs the
    browser a full plot."""
    if scale is None or large is None:
        scale = palette("diverging") if scale is None else scale
        large = presenting() if large is None else large
    swatches = colours(scale)[::-1]  # RdBu runs red → blue; the strip reads low → high
    v = np.nan_to_num(np.asarray(v, dtype=float).ravel())
    m = float(np.abs(v).max()) or 1.0
    level = np.rint((v + m) / (2 * m) * LEVELS).astype(int)
    dim, value = html.escape(t("views.axis.dimension")), html.escape(name)
    cells = "".join(
        f'<span style="background:{swatches[lv]}" title="{dim} {k}: {value} = {x:.3f}"></span>'
        for k, (lv, x) in enumerate(zip(level, v, strict=True))
    )
    gradient = f"background:linear-gradient(to right, {', '.join(swatches[:: LEVELS // 10])})"
    key = f'{-m:.2f}<span class="kit-strip-bar" style="{gradient}"></span>{m:.2f} {value}'
    css = STRIP_CSS.format(font=18 if large else 14, height=28 if large else 22)
    return (
        f'{css}<div class="kit-strip"><div class="kit-strip-title">{html.escape(title)}</div>'
        f'<div class="kit-strip-cells">{cells}</div><div class="kit-strip-key">{key}</div></div>'
    )


def coverage_html(words, known: str, unknown: str) -> str:
    """The typed words as they reach the en→fr models: known words on green, unknown ones on
    red and struck through (they are read as <unk>); a tooltip says which. ``words`` are
    ``engine.data.coverage.Word``; every word is escaped (it is the user's text)."""
    chips = []
    for w in words:
        style = (
            "background:#e3f2e6; color:#14532d"
            if w.known
            else "background:#fde0df; color:#7f1d1d; text-decoration:line-through"
        )
        cls, tip = ("kit-known", known) if w.known else ("kit-unknown", unknown)
        chips.append(
            f"<span class='{cls}' title='{html.escape(tip)}' style='{style}; padding:1px 5px; "
            f"margin:2px; border-radius:4px; display:inline-block'>{html.escape(w.text)}</span>"
        )
    return (
        "<div class='kit-coverage' style='font-size:17px; line-height:1.9'>"
        + "".join(chips)
        + "</div>"
    )
