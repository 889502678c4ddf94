"""Figures of the Variants lab's quality section beyond the table: recall against the
state a model keeps (Zoology, Based), and the needle probe as depth × length heatmaps.

Both read what ``python -m engine.evaluate variants`` saved: the grid's evaluation
(``recall_state``, ``recall_published``, ``not_in_grid``) and the probe
(engine.analysis.needle.results). sections.variants_quality draws each figure with its
captions and tables.
"""

from __future__ import annotations

import numpy as np
from kit.i18n import t
from plotly.colors import qualitative

from engine.models.variant_lm import GRID_WIDTH
from views.heatmap import (
    SEQUENTIAL,
    axes,
    cell_domains,
    figure,
    log_axis,
    subplot_ref,
    text_px,
)
from views.style import FONT, legend_below, legend_line
from views.variants import accuracy_axis, data_text, legend_px, variant_name

SYMBOLS = {"grows": "circle", "fixed": "diamond"}  # KV cache vs a state fixed in n
COLOURS = qualitative.Dark24  # one colour per variant: 22 of them
ROW_PX = 30  # one probed variant's row of needle cells
NEEDLE_AXIS_PX = 110  # between the two needle panels: the upper one's ticks and axis title
# Zoology's figure draws each model in its own colour (Tableau 10): the same here, so a
# reader matches a point to the published figure at a glance.
PUBLISHED_COLOURS = {
    "Attention or Sliding Window": "#000000",
    "H3": "#B07AA1",
    "Hyena": "#BAB0AC",
    "Based": "#59A14F",
    "Mamba": "#76B7B2",
    "GLA": "#F28E2B",
    "Mamba-2": "#4E79A7",
    "DeltaNet": "#E15759",
    "RWKV-7": "#EDC948",
    "Gated DeltaNet": "#9C755F",
}


def colours(rows: list[dict]) -> dict[str, str]:
    """One colour per variant, in the order the grid's rows name them (every chart alike)."""
    names = dict.fromkeys(r["variant"] for r in rows)
    return {v: COLOURS[i % len(COLOURS)] for i, v in enumerate(names)}


# A width sweep's line per sequence length: the longest solid, shorter ones dashed/dotted.
DASHES = ("solid", "dash", "dot")


def start_hidden(data: list[dict], groups) -> list[dict]:
    """The traces of ``groups`` (variants) start hidden, their legend entries kept: one
    click shows them. A chart of 23 variants then opens on the ones worth reading."""
    return [d | {"visible": "legendonly"} if d.get("legendgroup") in groups else d for d in data]


def recall_state_figure(
    rows: list[dict], chance: float, title: str = "", hidden: tuple[str, ...] = ()
) -> dict:
    """MQAR accuracy (mean over seeds, bars: their range) against the bytes kept, a legend
    entry per variant (its points on both tasks; the shape says cache or fixed state);
    ``hidden`` variants start hidden."""
    colour = colours(rows)
    data = sweep_lines(rows, colour)
    grid = [r for r in rows if r.get("width", GRID_WIDTH) == GRID_WIDTH]
    for variant in dict.fromkeys(r["variant"] for r in grid):
        pts = [r for r in grid if r["variant"] == variant]
        data.append(
            dict(
                type="scatter",
                name=variant_name(variant),
                legendgroup=variant,
                x=[r["state_bytes"] for r in pts],
                y=[r["mean"] for r in pts],
                error_y=dict(
                    type="data",
                    symmetric=False,
                    array=[max(r["accuracy"]) - r["mean"] for r in pts],
                    arrayminus=[r["mean"] - min(r["accuracy"]) for r in pts],
                ),
                customdata=[  # where the point sits, and the formula its state is counted by
                    "<br>".join(
                        filter(
                            None,
                            (
                                t(f"variants_quality.kind_{r['kind']}", task=r["task"]),
                                data_text(r.get("source")),
                            ),
                        )
                    )
                    for r in pts
                ],
                mode="markers",
                marker=dict(
                    size=11, color=colour[variant], symbol=[SYMBOLS[r["kind"]] for r in pts]
                ),
                hovertemplate=variant_name(variant)
                + ": %{y:.3f} · %{x:,} B<br>%{customdata}<extra></extra>",
            )
        )
    lo = min(r["state_bytes"] for r in rows) / 2
    hi = max(r["state_bytes"] for r in rows) * 2
    data.append(
        dict(
            type="scatter",
            name=t("variants_quality.chance", chance=f"{chance:.3f}"),
            x=[lo, hi],
            y=[chance, chance],
            mode="lines",
            line=dict(dash="dot", color="grey"),
            hoverinfo="skip",
        )
    )
    layout = state_axes(title or t("variants_quality.recall_chart_title"), 640, data)
    return figure(start_hidden(data, hidden), layout)


def width_figure(rows: list[dict], title: str = "") -> dict:
    """Zoology's other axes: accuracy against the model's width, one panel per sequence
    length, a line per variant over the widths it was trained at (its colour as in the
    state chart)."""
    colour, shown = colours(rows), set()
    lengths = sorted({r["n"] for r in rows})
    xs = cell_domains([1] * len(lengths), 0.06)
    widths = sorted({r.get("width", GRID_WIDTH) for r in rows})
    data, layout, notes = [], {}, []
    for k, n in enumerate(lengths, start=1):
        here = [r for r in rows if r["n"] == n]
        for variant in dict.fromkeys(r["variant"] for r in here):
            pts = [r for r in here if r["variant"] == variant]
            pts.sort(key=lambda r: r.get("width", GRID_WIDTH))
            data.append(
                dict(
                    type="scatter",
                    mode="lines+markers",
                    name=variant_name(variant),
                    legendgroup=variant,
                    showlegend=variant not in shown,
                    x=[r.get("width", GRID_WIDTH) for r in pts],
                    y=[r["mean"] for r in pts],
                    line=dict(color=colour.get(variant, "grey"), width=1.5),
                    hovertemplate=variant_name(variant) + ": %{y:.3f} · d = %{x}<extra></extra>",
                    **subplot_ref(k),
                )
            )
            shown.add(variant)  # named once in the legend, in the first panel it appears in
        x_axis = dict(type="log", tickvals=widths, ticktext=[str(w) for w in widths])
        x_axis["title"] = dict(text=t("variants_quality.width_axis"))
        y_axis = accuracy_axis(t("variants_quality.accuracy_axis") if k == 1 else "")
        y_axis["showticklabels"] = k == 1
        layout |= axes(k, xs[k - 1], (0, 1), x=x_axis, y=y_axis)
        centre = sum(xs[k - 1]) / 2
        notes.append(_panel_title(t("variants_quality.length_panel", n=n), centre))
    layout |= dict(
        title=dict(text=title or t("variants_quality.width_chart_title")),
        font=FONT,
        height=max(560, 90 + PLOT_PX + 70 + legend_px([variant_name(v) for v in shown])),
        margin=dict(l=70, r=10, t=90, b=10),
        annotations=notes,
        legend=legend_below(),
    )
    return figure(data, layout)


def _panel_title(text: str, x: float) -> dict:
    """A panel's title above it, centred on its paper-coordinate middle ``x``."""
    where = dict(xref="paper", yref="paper", x=x, y=1.02, xanchor="center", yanchor="bottom")
    return dict(text=text, showarrow=False, font=dict(size=14), **where)


def sweep_lines(rows: list[dict], colour: dict[str, str]) -> list[dict]:
    """The width sweep (Zoology's axes): a line through each variant's widths on each task,
    in the variant's colour (dashed for the shorter sequences, a legend key says which),
    its state growing with d_model; the grid's own point is drawn over it."""
    lines = []
    by_variant: dict[tuple, list[dict]] = {}
    for r in rows:
        by_variant.setdefault((r["variant"], r["task"]), []).append(r)
    lengths = sorted({r["n"] for pts in by_variant.values() if len(pts) > 1 for r in pts})
    dash = {n: DASHES[min(i, len(DASHES) - 1)] for i, n in enumerate(reversed(lengths))}
    for (variant, task), pts in sorted(by_variant.items()):
        if len(pts) < 2:
            continue
        pts = sorted(pts, key=lambda r: r["state_bytes"])
        lines.append(
            dict(
                type="scatter",
                mode="lines+markers",
                x=[r["state_bytes"] for r in pts],
                y=[r["mean"] for r in pts],
                showlegend=False,
                legendgroup=variant,
                text=[f"{variant_name(variant)} · d = {r.get('width', GRID_WIDTH)}" for r in pts],
                line=dict(width=1.5, color=colour[variant], dash=dash[pts[0]["n"]]),
                marker=dict(size=5, color=colour[variant]),
                opacity=0.7,
                hovertemplate="%{text}: %{y:.3f} · %{x:,} B<extra>" + task + "</extra>",
            )
        )
    if len(lengths) > 1:  # which dash is which length: grey keys beside the variants
        lines += [_dash_key(n, d) for n, d in sorted(dash.items())]
    return lines


def _dash_key(n: int, dash: str) -> dict:
    key = legend_line(t("variants_quality.length_line", n=n), width=1.5, color="grey", dash=dash)
    return key | dict(hoverinfo="skip")


def published_figure(found: dict) -> dict:
    """Zoology's own recall–memory points as read from its figure: a series per model, on
    the same axes as ours (bytes at float32 over all layers; accuracy)."""
    data = []
    models = list(dict.fromkeys(p["model"] for p in found["points"]))
    for i, model in enumerate(models):
        pts = [p for p in found["points"] if p["model"] == model]
        data.append(
            dict(
                type="scatter",
                name=model,
                x=[p["state_bytes"] for p in pts],
                y=[p["accuracy"] for p in pts],
                mode="markers",
                marker=dict(
                    size=11,
                    color=PUBLISHED_COLOURS.get(model, COLOURS[i % len(COLOURS)]),
                    line=dict(width=1, color="#222222"),
                ),
                hovertemplate=model + ": %{y:.2f} · %{x:,} B<extra></extra>",
            )
        )
    return figure(data, state_axes(t("variants_quality.published_chart_title"), 560, data))


PLOT_PX = 300  # an accuracy-against-state plot's own height, whatever its legend takes


def state_axes(title: str, height: int, data: list[dict]) -> dict:
    """The layout of an accuracy-against-state chart: ours and the published one alike.

    The legend below names every point; its rows are counted at the narrowest page and the
    projector's type, and the figure grows by them: 23 Chinese names took the plot down
    to ~120 px, and its automatic ticks (−0.05, 0, 0.05 …) ran into one another."""
    named = dict.fromkeys(d["name"] for d in data if d.get("name") and d.get("showlegend", True))
    return dict(
        title=dict(text=title),
        font=FONT,
        height=max(height, 60 + PLOT_PX + 70 + legend_px(list(named))),
        margin=dict(l=70, r=10, t=60, b=10),
        xaxis=log_axis(title=dict(text=t("variants_quality.state_axis"))),
        yaxis=accuracy_axis(t("variants_quality.accuracy_axis")),
        legend=legend_below(),
    )


def recall_rows(rows: list[dict]) -> list[dict]:
    """The chart's points as a table: one row per variant and task."""
    return [
        {
            t("variants_quality.col_variant"): variant_name(r["variant"]),
            t("variants_quality.col_task"): r["task"],
            t("variants_quality.col_width"): r.get("width", GRID_WIDTH),
            t("variants_quality.col_seeds"): " / ".join(f"{a:.3f}" for a in r["accuracy"]),
            t("variants_quality.col_mean"): round(r["mean"], 3),
            t("variants_quality.col_state"): r["state_bytes"],
            t("variants_quality.col_per_token"): round(r["bytes_per_token"]),
            t("variants_quality.col_kind"): t(f"variants_quality.short_{r['kind']}"),
            t("variants_quality.col_source"): data_text(r["source"]),
        }
        for r in sorted(rows, key=lambda r: (r["task"], r["state_bytes"]))
    ]


def needle_figure(probe: dict) -> dict:
    """Each probed variant's needle accuracy (a row, mean over seeds) by input length (mean
    over the depths) above the same by the needle's depth (mean over the lengths), on one
    0–1 scale, each cell's value written in it: the variants' rows set each panel's range,
    where one variant's depth × length grid alone is often all but one colour.

    One above the other, each the page's width: side by side on the narrowest page (1024 px,
    the sidebar open) a depth's cell was 23 px and plotly.js drew its value at 7 px."""
    names = list(probe["mean"])
    grids = np.asarray([probe["mean"][n] for n in names], dtype=float)  # (variant, depth, length)
    lengths = [
        t("variants_quality.length_trained", n=n) if n == probe["trained_n"] else str(n)
        for n in probe["lengths"]
    ]
    depths = [f"{d:g}" for d in probe["depths"]]
    ys = [variant_name(n) for n in names]
    panels = (
        (grids.mean(axis=1), lengths, "needle_by_length", {}),
        (grids.mean(axis=2), depths, "needle_by_depth", dict(tickangle=-45)),
    )
    rows_px, band_px = ROW_PX * len(names), NEEDLE_AXIS_PX
    bottom, top = cell_domains([rows_px, rows_px], band_px / (2 * rows_px + band_px))
    data, layout = [], {}
    for k, (z, xs, title, ticks) in enumerate(panels, start=1):
        data.append(
            dict(
                type="heatmap",
                z=z.round(3).tolist(),
                x=xs,
                y=ys,
                zmin=0,
                zmax=1,
                colorscale=SEQUENTIAL,
                showscale=k == 1,
                colorbar=dict(title=dict(text=t("variants_quality.accuracy_axis"), side="right")),
                # Sized by plotly.js to its cell ("auto"): a fixed 12 px ran each value into
                # the next; a full-width panel gives each at least 13 px.
                texttemplate="%{z:.2f}",
                hovertemplate="%{y}: %{x}: %{z:.3f}<extra></extra>",
                **subplot_ref(k),
            )
        )
        x = dict(type="category", title=dict(text=t(f"variants_quality.{title}")), **ticks)
        # Every variant named on its line in both panels.
        y = dict(type="category", autorange="reversed", tickmode="array", tickvals=ys)
        layout |= axes(k, (0, 1), top if k == 1 else bottom, x=x, y=y)
    layout |= dict(
        title=dict(text=t("variants_quality.needle_chart_title", task=probe["task"])),
        font=dict(size=13),
        height=2 * rows_px + band_px + 60 + 130,
        margin=dict(l=int(text_px(ys)) + 16, r=10, t=60, b=130),
    )
    return figure(data, layout)


def needle_rows(probe: dict) -> list[dict]:
    """Every probed cell: variant, depth, length and its accuracy (mean over seeds)."""
    return [
        {"variant": name, "depth": d, "length": n, "accuracy": grid[i][j]}
        for name, grid in probe["mean"].items()
        for i, d in enumerate(probe["depths"])
        for j, n in enumerate(probe["lengths"])
    ]


def tuning_rows(runs: list[dict]) -> list[dict]:
    """The plan's tuning runs as a table: a row per recipe and variant, its validation
    accuracy at each rate (the rate is kept by it, never by the test set), the kept rate
    once every rate of the recipe is trained, and the test accuracy there."""
    groups: dict[tuple, dict[float, dict]] = {}
    for r in runs:
        groups.setdefault((r["recipe"], r["variant"]), {})[r["lr"]] = r
    rates = sorted({lr for r in runs for lr in r["lrs"]})
    rows = []
    for (recipe, variant), by_rate in groups.items():
        row = {
            t("variants_quality.col_variant"): variant_name(variant),
            t("variants_quality.col_recipe"): recipe,
        }
        for lr in rates:
            run = by_rate.get(lr)
            row[f"lr {lr:g}"] = round(run["validation_accuracy"], 3) if run else None
        kept = next((r for r in by_rate.values() if r["kept"]), None)  # the engine's choice
        open_ = t("variants_quality.tuning_open")
        row[t("variants_quality.col_kept")] = f"{kept['lr']:g}" if kept else open_
        row[t("variants_quality.col_test")] = round(kept["accuracy"], 3) if kept else None
        rows.append(row)
    return rows
