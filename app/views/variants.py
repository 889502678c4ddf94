"""Figures of the Variants lab beside its maps (views.heatmap draws those): cost charts."""

from __future__ import annotations

import functools

import numpy as np
from kit.i18n import DEFAULT, catalog, language, t, variant_title
from kit.presenter import look
from state.variants import variant_name

from engine.variants import REGISTRY
from views.heatmap import NARROW_PX, figure, flag_text, log_axis
from views.style import FONT, legend_below
from views.timeline import legend_rows

PRESENTER_FONT = 18  # kit.presenter's type: rows counted at its size are never too few
LEGEND_ROW_PX = 30  # one row of a horizontal legend in that type


def accuracy_axis(title: str) -> dict:
    """An accuracy axis: 0 to 1 with room for the seeds' bars at its ends, and labelled
    at quarters only (automatic ticks named 1.1, an accuracy no model can reach)."""
    return dict(title=dict(text=title), range=[-0.05, 1.1], tickvals=[0, 0.25, 0.5, 0.75, 1])


def legend_px(names: list[str]) -> int:
    """The height a legend below a chart takes for ``names``: its rows counted at the
    narrowest page and the projector's type, so a chart grown by it never runs short."""
    return legend_rows(names, NARROW_PX, PRESENTER_FONT) * LEGEND_ROW_PX


def data_text(text: str) -> str:
    """An English sentence the engine writes into its results or notes (not a Message: a
    citation, a variant's reason to stay out of the grid, a note on its map) in the
    reader's language: each sentence of ``variants.data`` found in ``text`` is replaced."""
    if language() == DEFAULT or not text:
        return text
    for english, other in _data_sentences(language()):
        text = text.replace(english, other)
    return text


def error_rows(rows: list[dict]) -> list[dict]:
    """The comparison's table as a reader sees it: each variant's title and its map's kind
    (exact, approximate, implied…) in the reader's language; the rows keep the engine's
    words for the downloads."""
    shown = []
    for r in rows:
        title = variant_title(REGISTRY[r["variant"]]) if r["variant"] in REGISTRY else r["title"]
        kind = flag_text(r["map"].split(", ")) if r.get("map") else r.get("map")
        shown.append(r | {"title": title, "map": kind})
    return shown


@functools.cache
def _data_sentences(lang: str) -> list[tuple[str, str]]:
    en, other = catalog(DEFAULT), catalog(lang)
    pairs = [(v, other[k]) for k, v in en.items() if k.startswith("variants.data.")]
    return sorted(pairs, key=lambda p: -len(p[0]))  # a longer sentence before its part


def loglog_figure(
    rows: list[dict], y: str, *, title: str, y_title: str, predicted: str | None = None
):
    """One line per variant of ``y`` against n on log-log axes (predicted as dashes, in
    the measured line's colour and legend entry). Two dozen variants outrun any palette:
    past its colours a line changes its marker. The legend sits below, its rows counted
    at the narrowest page and the projector's type, and the figure grows by them: beside
    the plot, 26 entries scrolled out of a 440-px figure."""
    names = list(dict.fromkeys(r["variant"] for r in rows))
    lines = []
    for i, name in enumerate(names):
        pts = sorted((r for r in rows if r["variant"] == name), key=lambda r: r["n"])
        ns, (colour, symbol) = [r["n"] for r in pts], look(i)
        lines.append(
            dict(
                type="scatter",
                x=ns,
                y=[r[y] for r in pts],
                mode="lines+markers",
                name=variant_name(name),
                legendgroup=name,
                line=dict(color=colour),
                marker=dict(color=colour, symbol=symbol),
            )
        )
        if predicted:
            lines.append(
                dict(
                    type="scatter",
                    x=ns,
                    y=[r[predicted] for r in pts],
                    mode="lines",
                    name=t("views.variants.model_line", name=variant_name(name)),
                    legendgroup=name,
                    showlegend=False,
                    line=dict(color=colour, dash="dash"),
                    opacity=0.6,
                )
            )
    layout = dict(
        title=dict(text=title),
        font=FONT,
        height=440 + legend_px([variant_name(n) for n in names]),
        margin=dict(l=10, r=10, t=60, b=10),
        legend=legend_below(tracegroupgap=0),
        # Each length named where it was measured: a sweep of 256 … 8192 spans under two
        # decades, and an axis labelled at powers of ten named 1000 alone.
        xaxis=log_axis(
            [r["n"] for r in rows], each=True, title=dict(text=t("views.variants.length_axis"))
        ),
        yaxis=log_axis([r.get(k) for r in rows for k in (y, predicted)], title=dict(text=y_title)),
    )
    return figure(lines, layout)


def per_token_figure(result: dict):
    """Decoding time per token vs position, with and without the KV cache."""
    lines = []
    for key, name in (
        ("step_seconds_no_cache", t("views.variants.no_cache")),
        ("step_seconds_cache", t("views.variants.kv_cache")),
    ):
        ms = 1000 * np.asarray(result[key])
        lines.append(
            dict(type="scatter", x=np.arange(1, len(ms) + 1), y=ms, mode="lines", name=name)
        )
    layout = dict(
        title=dict(text=t("views.variants.per_token_title", repeats=result["repeats"])),
        font=FONT,
        height=380,
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis=dict(title=dict(text=t("views.variants.position_t"))),
        yaxis=dict(title=dict(text=t("views.variants.ms_per_token"))),
    )
    return figure(lines, layout)


def accuracy_cost_figure(rows: list[dict], cost: str, *, title: str, x_title: str):
    """Accuracy (mean over seeds, bars: the seeds' range) against a cost, one point per
    variant named in the legend (labels beside the points piled into each other)."""
    pts = [r for r in rows if r[cost] and r[cost] > 0]
    data = [
        dict(
            type="scatter",
            x=[r[cost]],
            y=[r["accuracy"]],
            error_y=dict(
                type="data",
                symmetric=False,
                array=[r["max"] - r["accuracy"]],
                arrayminus=[r["accuracy"] - r["min"]],
            ),
            name=variant_name(r["variant"]),
            mode="markers",
            # A white rim: a marker drawn over another leaves the other's edge showing.
            marker=dict(
                size=MARKER_PX,
                color=look(i)[0],
                symbol=look(i)[1],
                opacity=0.85,
                line=dict(width=1.5, color="white"),
            ),
            hovertemplate=variant_name(r["variant"]) + ": %{y:.3f} · %{x:.3g}<extra></extra>",
        )
        for i, r in enumerate(pts)
    ]
    layout = dict(
        title=dict(text=title),
        font=FONT,
        height=440 + legend_px([variant_name(r["variant"]) for r in pts]),
        margin=dict(l=10, r=10, t=60, b=10),
        legend=legend_below(),  # below: beside, it takes a third of the width
        xaxis=log_axis([r[cost] for r in pts], title=dict(text=x_title)),
        yaxis=accuracy_axis(t("variants.accuracy_axis")),
    )
    return figure(data, layout)


# The accuracy–cost chart's plot: its markers, and the least room its plot has (the
# narrowest page less the y axis; the figure's height less its title and x axis).
MARKER_PX, PLOT_WIDTH_PX, PLOT_HEIGHT_PX = 12, NARROW_PX - 90, 300


def piled(rows: list[dict], cost: str) -> list[list[dict]]:
    """The points of :func:`accuracy_cost_figure` drawn within a marker of one another on
    the narrowest page, in groups of two or more (linked: a chain of near points is one
    pile): a reader cannot tell them apart there, so the page names them."""
    pts = [r for r in rows if r[cost] and r[cost] > 0]
    if len(pts) < 2:
        return []
    x = np.log10([float(r[cost]) for r in pts])
    x = (x - x.min()) / max(float(np.ptp(x)) * 1.1, 1e-9) * PLOT_WIDTH_PX
    y = (np.array([float(r["accuracy"]) for r in pts]) + 0.05) / 1.15 * PLOT_HEIGHT_PX
    group = list(range(len(pts)))  # union–find over "within a marker"

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i in range(len(pts)):
        for j in range(i):
            if abs(x[i] - x[j]) < MARKER_PX and abs(y[i] - y[j]) < MARKER_PX:
                group[root(i)] = root(j)
    piles: dict[int, list[dict]] = {}
    for i, r in enumerate(pts):
        piles.setdefault(root(i), []).append(r)
    return [pile for pile in piles.values() if len(pile) > 1]


def piles_text(rows: list[dict], cost: str) -> str:
    """The page's sentence naming each pile of :func:`piled`, with its accuracy; "" if none."""
    said = []
    for pile in piled(rows, cost):
        names = t("variants_verdict.diff_join").join(variant_name(r["variant"]) for r in pile)
        lo, hi = (f"{f(r['accuracy'] for r in pile):.3f}" for f in (min, max))
        said.append(t("variants.pile", names=names, accuracy=lo if lo == hi else f"{lo}–{hi}"))
    piles = t("variants_verdict.parts_join").join(said)
    return t("variants.quality_piled", piles=piles) if said else ""


def layer_error_figure(errors: dict[str, list[float]]):
    """Relative error of each layer's output against the original model, one line each."""
    lines = [
        dict(
            type="scatter",
            x=list(range(1, len(e) + 1)),
            y=e,
            mode="lines+markers",
            name=variant_name(name),
        )
        for name, e in errors.items()
    ]
    layout = dict(
        title=dict(text=t("variants.swap_layer_title")),
        font=FONT,
        height=400,
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis=dict(title=dict(text=t("variants.swap_layer_axis")), dtick=1),
        yaxis=dict(title=dict(text=t("variants.swap_error_axis"))),
    )
    return figure(lines, layout)


def cosine_figure(cosines: dict[str, float]):
    """The sentence embedding's cosine against the original model, one bar per variant."""
    names = list(cosines)
    bars = dict(
        type="bar",
        x=[cosines[n] for n in names],
        y=[variant_name(n) for n in names],
        orientation="h",
        text=[f"{cosines[n]:.4f}" for n in names],
        textposition="auto",
    )
    layout = dict(
        title=dict(text=t("variants.swap_cosine_title")),
        font=FONT,
        height=int(120 + 32 * len(names)),
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis=dict(
            title=dict(text=t("variants.swap_cosine_axis")),
            range=[min(0.0, *cosines.values()), 1.0],
        ),
        yaxis=dict(autorange="reversed", type="category"),
    )
    return figure([bars], layout)


def predicted_memory_figure(rows: list[dict]):
    """What each variant's memory model predicts for one head, before anything runs."""
    title, y_title = t("variants.predicted_title"), t("variants.predicted_axis")
    return loglog_figure(rows, "predicted_mib", title=title, y_title=y_title)


def int8_figure(rows: list[dict], bias: float):
    """Each INT8 scheme's relative L1 error against fp32 as the K channel bias grows, the
    bias chosen marked (dotted): the naive scheme's error grows with it, the smoothed one's
    stays put."""
    lines = []
    for scheme in dict.fromkeys(r["scheme"] for r in rows):
        pts = [r for r in rows if r["scheme"] == scheme]
        name = t(f"variants.int8_scheme_{scheme}")
        x, y = [r["bias"] for r in pts], [r["rel_l1"] for r in pts]
        tip = name + ": %{y:.3g} · %{x}<extra></extra>"
        lines.append(
            dict(type="scatter", x=x, y=y, mode="lines+markers", name=name, hovertemplate=tip)
        )
    mark = dict(type="line", x0=bias, x1=bias, y0=0, y1=1, yref="paper", line=dict(dash="dot"))
    layout = dict(
        title=dict(text=t("variants.int8_title")),
        font=FONT,
        height=380,
        margin=dict(l=10, r=10, t=60, b=10),
        shapes=[mark],
        legend=legend_below(),
        xaxis=dict(title=dict(text=t("variants.int8_bias_axis"))),
        yaxis=dict(title=dict(text=t("variants.int8_error_axis")), rangemode="tozero"),
    )
    return figure(lines, layout)
