"""Labelled attention heatmaps, legible on a projector and safe for colour-blind viewers."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from kit.i18n import t

# Perceptually uniform, colour-blind safe, and still ordered when printed in grey.
# Names are plotly.js's own (figures skip Python-side validation); plotly.js RdBu
# runs blue (negative) to red (positive).
SEQUENTIAL = "Viridis"
DIVERGING = "RdBu"
FONT = dict(size=16)


def unique_labels(labels: Sequence[str]) -> list[str]:
    """Escaped labels, repeats numbered: Plotly merges equal categories into one row.

    Plotly reads a few HTML tags in labels; escaping shows user text exactly as typed.
    Quotes stay as they are: no tag can form without ``<``, and Plotly shows ``&quot;``
    literally (it decodes numeric entities and a few named ones only).
    """
    seen: dict[str, int] = {}
    out = []
    for lab in (html.escape(label, quote=False) for label in labels):
        n = seen.get(lab, 0)
        seen[lab] = n + 1
        out.append(lab if n == 0 else f"{lab}\u2009#{n + 1}")
    return out


def text_px(labels: Sequence[str], size: int = 18) -> float:
    """The rendered width of the longest label, estimated (CJK characters a full em).

    ``size`` 18 is the presenter's font, so the estimate also holds on a projector.
    """
    widest = 0.0
    for label in labels:
        label = html.unescape(str(label))
        widest = max(widest, sum(size if ord(c) >= 0x2E80 else 0.62 * size for c in label))
    return widest


def fixed_margins(
    x_labels: Sequence[str], y_labels: Sequence[str], *, x_title: bool, y_title: bool
):
    """Margins that fit the tick labels (x tilted by 45°) and the axis titles.

    Plotly's ``automargin`` (on in Streamlit's theme) measures the labels, then lays the
    figure out again: two or three passes per figure, 1.5–3× the draw time measured here.
    Fixed margins from the labels' estimated widths draw in one pass.
    """
    x_px, y_px = text_px(x_labels), text_px(y_labels)
    left = y_px + 16 + (28 if y_title else 0)
    # A tilted first word reaches left of its column; the rest reach down.
    left = max(left, 0.71 * text_px(x_labels[:1]))
    bottom = 0.71 * x_px + 22 + (32 if x_title else 0)
    return dict(l=int(left), b=int(bottom))


def flag_text(flags: Sequence[str]) -> str:
    """A map's flags in the reader's language (the engine names them in English)."""
    words = []
    for flag in flags:
        name, _, factor = flag.partition(" ×")
        word = t(f"views.flag.{name.replace(' ', '_')}", factor=factor)
        words.append(flag if word.startswith("views.flag.") else word)
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
) -> go.Figure:
    """A heatmap of ``z[y, x]`` with hover showing both labels and the value.

    ``flags`` (exact / implied / pooled ×k / masked-only) go into the title so a
    figure can never be mistaken for a different kind of map.
    """
    z = np.asarray(z, dtype=float)
    x_title = t("views.axis.key") if x_title is None else x_title
    y_title = t("views.axis.query") if y_title is None else y_title
    xs, ys = unique_labels(list(x_labels)), unique_labels(list(y_labels))
    if diverging and zmin is None and zmax is None:
        m = float(np.abs(z).max()) or 1.0
        zmin, zmax = -m, m
    if annotate is None:
        annotate = z.size <= 144
    full_title = title + (f"  <sup>[{flag_text(flags)}]</sup>" if flags else "")
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
        colorbar=dict(title=dict(text=value_name)),
    )
    if annotate:
        trace.update(text=np.round(z, 2), texttemplate="%{text}")
    rows = max(len(ys), 1)
    layout = dict(
        title=dict(text=full_title),
        font=FONT,
        margin=dict(
            r=10, t=60 if title else 20, **fixed_margins(xs, ys, x_title=True, y_title=True)
        ),
        height=height or fitted_height(rows),
        xaxis=dict(title=dict(text=x_title), tickangle=-45, type="category", automargin=False),
        yaxis=dict(
            title=dict(text=y_title), autorange="reversed", type="category", automargin=False
        ),
    )
    return figure([trace], layout)


def figure(data: list[dict], layout: dict) -> go.Figure:
    """A figure from plotly.js dicts, unvalidated.

    Validation costs ~5 ms a trace (make_subplots ~70 ms) on every rerun; these dicts
    use only plotly.js property names, so it is skipped.
    """
    return go.Figure(data=data, layout=layout, _validate=False)


def cell_domains(
    sizes: Sequence[float], gap: float, *, reverse: bool = False
) -> list[tuple[float, float]]:
    """Paper-coordinate domains for cells of relative ``sizes`` separated by ``gap``.

    ``reverse`` numbers them from the top (rows), as make_subplots does.
    """
    total = sum(sizes)
    usable = 1 - gap * (len(sizes) - 1)
    out, start = [], 0.0
    for size in sizes:
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


def attention_figure(amap, layer: int = 0, head: int = 0, **kwargs) -> go.Figure:
    """Heatmap of one (layer, head) slice of an AttentionMap, flags in the title."""
    kwargs.setdefault("title", f"{amap.layer_labels[layer]} · {amap.head_labels[head]}")
    kwargs.setdefault("flags", amap.flags)
    return heatmap(amap.weights[layer, head], amap.key_labels, amap.query_labels, **kwargs)
