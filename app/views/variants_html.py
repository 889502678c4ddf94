"""The Variants lab's maps as one HTML grid: every variant's map side by side, light enough
for the browser that twenty-odd panels still paint within the page's 500 ms.

A Plotly figure of many heatmaps costs the browser a layout and its tick labels on every
edit; the same panels as HTML cost a few milliseconds. A panel of at most TABLE_SIDE
cells a side is a table (Compare's alignment grid, one coloured cell per weight, its
tooltip giving query → key and the value); a larger one, average-pooled to ≤ GRID_CELLS
a side as before, is one pixelated PNG (thousands of cells as table cells would weigh
megabytes). The Plotly twin (views.variants.map_grid) is built only for the download.
Every label is escaped: the tokens are the user's text.
"""

from __future__ import annotations

import base64
import html
import io
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from kit.presenter import palette, presenting
from PIL import Image

from views.alignment_html import LEVELS, colours
from views.heatmap import flag_text
from views.variants import GRID_CELLS, display_pool, pooled_labels

TABLE_SIDE = 32  # larger panels are drawn as an image: a table of their cells weighs too much
GREY = (128, 128, 128)  # a key the pattern hides, with ``grey_gaps``

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
  vertical-align:top; padding-top:.2rem; max-height:6em; }}
.kit-vgrid-img {{ position:relative; }}
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


def _levels(z: np.ndarray, signed: bool, top: float) -> np.ndarray:
    lo = -top if signed else 0.0
    w = np.clip(np.nan_to_num(z, nan=lo), lo, top)
    return np.rint((w - lo) / (top - lo) * LEVELS).astype(int)


def _table(z, top: float, xs, ys, ring, cls: str, value: str, ticks: bool, grey: bool) -> str:
    level = _levels(z, cls == "d", top)
    gap = ' style="background:rgb(128,128,128)"' if grey else ""
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
        head = f'<th class="kit-vgrid-q">{q}</th>' if ticks else ""
        rows.append(f"<tr>{head}{''.join(cells)}</tr>")
    if ticks:
        foot = "".join(f'<th class="kit-vgrid-k">{k}</th>' for k in xs)
        rows.append(f"<tr><th></th>{foot}</tr>")
    return f"<table>{''.join(rows)}</table>"


def _image(z, top: float, ring, signed: bool, grey: bool, title: str) -> str:
    swatches = scales()[signed]
    rgba = np.empty((*z.shape, 4), dtype=np.uint8)
    rgba[..., :3] = _rgb(swatches)[_levels(z, signed, top)]
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
    return f'<div class="kit-vgrid-img">{img}{mark}</div>'


def _panel(
    p: dict, i: int, top: float, diverging: bool, marker, grey: bool, value: str, table_side: int
) -> str:
    z, f = display_pool(np.asarray(p["z"], dtype=float), GRID_CELLS)
    flags = list(p.get("flags", ())) + ([f"display pooled ×{f}"] if f > 1 else [])
    signed = diverging or "signed" in flags
    ring = (marker[0] // f, marker[1] // f) if marker is not None else None
    title = p["title"] + (f" [{flag_text(flags)}]" if flags else "")
    if max(z.shape) <= table_side:
        xs = [html.escape(s) for s in pooled_labels(p["x"], f)]
        ys = [html.escape(s) for s in pooled_labels(p["y"], f)]
        # The first panel names the tokens; the others rely on it and on the tooltips.
        body = _table(z, top, xs, ys, ring, "d" if signed else "s", value, i == 0, grey)
    else:
        body = _image(z, top, ring, signed, grey, title)
    return (
        f'<div class="kit-vgrid-panel"><div class="kit-vgrid-title">{html.escape(title)}</div>'
        f"{body}</div>"
    )


def _key(used: set[bool], top: float, value: str) -> str:
    parts = []
    for signed in sorted(used):
        steps = scales()[signed][:: LEVELS // 10]
        gradient = f"background:linear-gradient(to right, {', '.join(steps)})"
        bar = f'<span class="kit-vgrid-bar" style="{gradient}"></span>'
        lo = f"{-top:.3g}" if signed else "0"
        parts.append(f"<span>{lo}{bar}{top:.3g} {value}</span>")
    return f'<div class="kit-vgrid-key">{"".join(parts)}</div>'


def map_grid_html(
    panels: Sequence[dict],
    *,
    columns: int = 4,
    value_name: str = "α",
    diverging: bool = False,
    marker: tuple[int, int] | None = None,
    grey_gaps: bool = False,
    table_side: int = TABLE_SIDE,
) -> str:
    """The panels of ``views.variants.map_grid`` (``dict(z, x, y, title, flags)``, same
    keywords) as one HTML grid with one colour key. One scale spans every panel (0 …
    max|z|; a signed panel, or every panel with ``diverging``: −max … max); NaN cells
    are blank (grey with ``grey_gaps``); ``marker`` = (query, key) rings that cell.
    Panels up to ``table_side`` cells a side are tables (a tooltip per cell), larger ones
    images: a caller with many mid-sized panels lowers it to keep the page light."""
    # NaN (a hidden key) counts as 0: an all-hidden panel neither warns nor sets the scale.
    top = max((float(np.abs(np.nan_to_num(p["z"])).max()) for p in panels), default=1.0) or 1.0
    value = html.escape(value_name)
    large = presenting()
    swatches = scales()
    css_levels = "".join(
        f".kit-vgrid .{c}{i}{{background:{colour}}}"
        for c, signed in (("s", False), ("d", True))
        for i, colour in enumerate(swatches[signed])
    )
    body = "".join(
        _panel(p, i, top, diverging, marker, grey_gaps, value, table_side)
        for i, p in enumerate(panels)
    )
    used = {diverging or "signed" in p.get("flags", ()) for p in panels}
    css = CSS.format(font=18 if large else 14, row=14 if large else 10, label=70 if large else 56)
    cols = f"grid-template-columns:repeat({max(1, columns)}, minmax(0, 1fr))"
    return (
        f"{css}<style>{css_levels}</style>{_key(used, top, value)}"
        f'<div class="kit-vgrid" style="{cols}">{body}</div>'
    )
