"""The Variants lab's maps as one HTML grid: every variant's map side by side, light enough
for the browser that twenty-odd panels still paint within the page's 500 ms.

A Plotly figure of many heatmaps costs the browser a layout and its tick labels on every
edit; the same panels as HTML cost a few milliseconds. A panel of at most TABLE_SIDE
cells a side is a table (Compare's alignment grid, one coloured cell per weight, its
tooltip giving query → key and the value); a larger one, average-pooled to ≤ GRID_CELLS
a side as before, is one pixelated PNG (thousands of cells as table cells would weigh
megabytes). The Plotly twin (views.heatmap.map_grid) is built only for the download; both
take their panels, pooling and colour scales from views.heatmap.grid_panels. Every label
is escaped: the tokens are the user's text.
"""

from __future__ import annotations

import base64
import html
import io
import re
from functools import lru_cache

import numpy as np
from kit.i18n import t
from kit.presenter import palette, presenting
from PIL import Image

from views.alignment_html import LEVELS, colours
from views.heatmap import MIN_PANEL_PX, columns_css, grid_panels

TABLE_SIDE = 32  # larger panels are drawn as an image: a table of their cells weighs too much
GREY = (128, 128, 128)  # a key the pattern hides, with ``grey_gaps``
# A browser may break a line after an en dash: a projector's narrow panel printed its range
# "0–" on one line and "0.17" on the next. A word joiner after the dash holds them together.
_NO_BREAK = "–\u2060"

# A panel's key labels stand upright under it, centred on their cells: the first and the
# last reach past the panel's sides (half a label), so only their length is clipped.
CSS = """
<style>
.kit-vgrid {{ display:grid; gap:1rem 1.2rem; font-size:{font}px; line-height:1.1; }}
.kit-vgrid-panel {{ min-width:0; }}
.kit-vgrid-title {{ text-align:center; margin-bottom:.25rem; overflow-wrap:anywhere; }}
.kit-vgrid table {{ border-collapse:collapse; width:100%; table-layout:fixed; }}
.kit-vgrid td {{ padding:0; height:{row}px; }}
.kit-vgrid td.ring {{ box-shadow:inset 0 0 0 3px red; }}
.kit-vgrid th {{ font-weight:normal; white-space:nowrap; overflow:hidden; font-size:.8em; }}
.kit-vgrid-q {{ text-align:right; padding-right:.25rem; width:{label}px; }}
.kit-vgrid-k {{ writing-mode:vertical-rl; transform:rotate(180deg); text-align:left;
  overflow:visible !important; line-height:1;
  vertical-align:top; padding-top:.2rem; max-height:6em; }}
.kit-vgrid-framed {{ display:grid; grid-template-columns:{label}px 1fr; }}
.kit-vgrid-img {{ position:relative; }}
.kit-vgrid-ys, .kit-vgrid-xs {{ position:relative; font-size:.8em; white-space:nowrap; }}
.kit-vgrid-ys span {{ position:absolute; right:.25rem; transform:translateY(-50%); }}
.kit-vgrid-xs {{ grid-column:2; height:4.5em; overflow-x:visible; overflow-y:clip; }}
.kit-vgrid-xs span {{ position:absolute; top:.2rem; writing-mode:vertical-rl;
  transform:translateX(-50%) rotate(180deg); }}
.kit-vgrid-img img {{ width:100%; display:block; image-rendering:pixelated; }}
.kit-vgrid-mark {{ position:absolute; border:3px solid red; border-radius:50%;
  box-sizing:border-box; min-width:10px; min-height:10px; }}
.kit-vgrid-key {{ display:flex; gap:1.5rem; flex-wrap:wrap; margin:.2rem 0 .8rem; }}
.kit-vgrid-bar {{ display:inline-block; width:160px; height:12px; vertical-align:middle;
  margin:0 .4rem; }}
</style>
"""


@lru_cache(maxsize=8)
def _rgb(swatches: tuple[str, ...]) -> np.ndarray:
    """``rgb(…)`` / ``#rrggbb`` colour strings → a ``[len, 3]`` uint8 lookup table."""
    rows = []
    for c in swatches:
        if c.startswith("#"):
            rows.append([int(c[i : i + 2], 16) for i in (1, 3, 5)])
        else:
            rows.append([round(float(x)) for x in re.findall(r"[\d.]+", c)[:3]])
    return np.asarray(rows, dtype=np.uint8)


def scales() -> dict[bool, tuple[str, ...]]:
    """The colour steps of each scale, keyed by "diverging": blue below 0, red above."""
    return {False: colours(palette("sequential")), True: colours(palette("diverging"))[::-1]}


def _levels(z: np.ndarray, lo: float, hi: float) -> np.ndarray:
    w = np.clip(np.nan_to_num(z, nan=lo), lo, hi)
    return np.rint((w - lo) / ((hi - lo) or 1.0) * LEVELS).astype(int)


def _every(n: int, label_px: int) -> int:
    """Every how many rows or columns a token label fits in a panel of MIN_PANEL_PX."""
    return max(1, -(-n * 14 // max(14, MIN_PANEL_PX - label_px)))


def _table(p: dict, ring, cls: str, grey: bool, label_px: int) -> str:
    z, xs, ys, s = p["z"], p["x"], p["y"], p["scale"]
    level, value = _levels(z, s["zmin"], s["zmax"]), html.escape(s["name"])
    gap = ' style="background:rgb(128,128,128)"' if grey else ""
    every_q, every_k = _every(len(ys), label_px), _every(len(xs), label_px)
    rows = []
    for i, q in enumerate(ys):
        cells = []
        for j, k in enumerate(xs):
            mark = " ring" if ring == (i, j) else ""
            if np.isnan(z[i, j]):
                cells.append(f'<td{gap} title="{q} → {k}: —"></td>')
                continue
            tip = f"{q} → {k}: {value} = {z[i, j]:.4f}"
            cells.append(f'<td class="{cls}{level[i, j]}{mark}" title="{tip}"></td>')
        head = q if i % every_q == 0 else ""
        rows.append(f'<tr><th class="kit-vgrid-q">{head}</th>{"".join(cells)}</tr>')
    foot = "".join(
        f'<th class="kit-vgrid-k">{k if j % every_k == 0 else ""}</th>' for j, k in enumerate(xs)
    )
    return f"<table>{''.join(rows)}<tr><th></th>{foot}</tr></table>"


def _image(p: dict, ring, grey: bool, title: str, label_px: int) -> str:
    z, s = p["z"], p["scale"]
    swatches = scales()[s["diverging"]]
    rgba = np.empty((*z.shape, 4), dtype=np.uint8)
    rgba[..., :3] = _rgb(swatches)[_levels(z, s["zmin"], s["zmax"])]
    rgba[..., 3] = 255
    gaps = np.isnan(z)
    rgba[gaps] = (*GREY, 255) if grey else (0, 0, 0, 0)
    buf = io.BytesIO()
    Image.fromarray(rgba, "RGBA").save(buf, format="PNG", compress_level=1)
    src = base64.b64encode(buf.getvalue()).decode()
    mark = ""
    if ring is not None:
        n_q, n_k = z.shape
        (i, j), side = ring, 100 / max(n_q, n_k)
        box = f"left:{j * 100 / n_k:.2f}%;top:{i * 100 / n_q:.2f}%;width:{side:.2f}%;"
        mark = f'<div class="kit-vgrid-mark" style="{box}height:{100 / n_q:.2f}%"></div>'
    img = f'<img src="data:image/png;base64,{src}" alt="{html.escape(title)}">'
    ticks = {}  # the token labels that fit, each at its cell's centre
    for axis, side in (("y", "top"), ("x", "left")):
        labels, n = p[axis], len(p[axis])
        spans = "".join(
            f'<span style="{side}:{(i + 0.5) * 100 / n:.2f}%">{html.escape(labels[i])}</span>'
            for i in range(0, n, _every(n, label_px))
        )
        ticks[axis] = f'<div class="kit-vgrid-{axis}s">{spans}</div>'
    body = f'<div class="kit-vgrid-img">{img}{mark}</div>'
    return f'<div class="kit-vgrid-framed">{ticks["y"]}{body}{ticks["x"]}</div>'


def _panel(p: dict, marker, grey: bool, table_side: int, label_px: int) -> str:
    f = p["factor"]
    ring = (marker[0] // f, marker[1] // f) if marker is not None else None
    if max(p["z"].shape) <= table_side:
        p = dict(p, x=[html.escape(s) for s in p["x"]], y=[html.escape(s) for s in p["y"]])
        body = _table(p, ring, "d" if p["scale"]["diverging"] else "s", grey, label_px)
    else:
        body = _image(p, ring, grey, p["title"], label_px)
    title = html.escape(p["title"]).replace("–", _NO_BREAK)
    return f'<div class="kit-vgrid-panel"><div class="kit-vgrid-title">{title}</div>{body}</div>'


def _key(panels: list[dict]) -> str:
    """One colour key per kind of scale drawn: softmax 0–1; signed or implied maps ± their
    own range, which each such panel prints in its title."""
    parts = []
    for diverging in sorted({p["scale"]["diverging"] for p in panels}):
        s = next(p["scale"] for p in panels if p["scale"]["diverging"] == diverging)
        steps = scales()[diverging][:: LEVELS // 10]
        gradient = f"background:linear-gradient(to right, {', '.join(steps)})"
        bar = f'<span class="kit-vgrid-bar" style="{gradient}"></span>'
        fitted = any(p["scale"]["zmax"] < 1 for p in panels if not p["scale"]["diverging"])
        own = t("views.value.own_range") if diverging else t("views.value.fitted")
        ends = (
            ("−", f"+ {own}")
            if diverging
            else ("0", f"1 {s['name']}" + (f" · {own}" if fitted else ""))
        )
        parts.append(f"<span>{ends[0]}{bar}{html.escape(ends[1])}</span>")
    return f'<div class="kit-vgrid-key">{"".join(parts)}</div>'


def map_grid_html(
    maps,
    *,
    columns: int = 4,
    value_name: str | None = None,
    diverging: bool = False,
    marker: tuple[int, int] | None = None,
    grey_gaps: bool = False,
    table_side: int = TABLE_SIDE,
) -> str:
    """The HTML twin of ``views.heatmap.map_grid`` (same ``maps`` and keywords): one grid of
    panels at least MIN_PANEL_PX wide, at most ``columns`` a row, each on its kind's scale,
    with one colour key per kind. NaN cells are blank (grey with ``grey_gaps``); ``marker``
    = (query, key) rings that cell. Panels up to ``table_side`` cells a side are tables
    (a tooltip per cell, token labels where they fit), larger ones images: a caller with
    many mid-sized panels lowers it to keep the page light."""
    panels = grid_panels(maps, value_name=value_name, diverging=diverging)
    large = presenting()
    label_px = 70 if large else 56
    swatches = scales()
    css_levels = "".join(
        f".kit-vgrid .{c}{i}{{background:{colour}}}"
        for c, signed in (("s", False), ("d", True))
        for i, colour in enumerate(swatches[signed])
    )
    body = "".join(_panel(p, marker, grey_gaps, table_side, label_px) for p in panels)
    css = CSS.format(font=18 if large else 14, row=14 if large else 10, label=label_px)
    grid = f'<div class="kit-vgrid" style="{columns_css(columns, label_px)}">{body}</div>'
    return f"{css}<style>{css_levels}</style>{_key(panels)}{grid}"
