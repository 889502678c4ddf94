"""One press on one example: which context positions it kept (the share of the model's
layers × K/V heads keeping each), with the answer's place in the context marked."""

from __future__ import annotations

import numpy as np
from kit.i18n import t
from kit.presenter import look, palette

from views.heatmap import figure, log_axis
from views.style import FONT, legend_below, legend_line

LEGEND_ENTRY_PX = 26  # one entry of a vertical legend at FONT's size, with Plotly's gap


def kept_figure(found: dict):
    press = found["runs"][1]
    share = np.asarray(press["mask"], dtype=float).mean((0, 1))  # (n,)
    colours = palette("qualitative")
    data = [
        dict(
            type="scatter",
            mode="lines",
            x=list(range(len(share))),
            y=np.round(share, 4),
            name=t("chat.press_kept_share"),
            line=dict(color=colours[0]),
            hovertemplate=t("chat.press_position") + " %{x}: %{y:.2f}<extra></extra>",
        )
    ]
    shapes = [
        dict(type="line", x0=k, x1=k, yref="paper", y0=0, y1=1, line=dict(dash="dot"))
        for k in found["needles"]
    ]
    if shapes:
        data.append(legend_line(t("chat.press_needle"), dash="dot", color="#444"))
    layout = dict(
        title=dict(
            text=t("chat.fig_press", press=t(f"chat.press_{press['press']}"), ratio=press["ratio"])
        ),
        font=FONT,
        height=340,
        margin=dict(l=70, r=10, t=50, b=50),
        legend=legend_below(),
        xaxis=dict(title=dict(text=t("chat.press_position"))),
        yaxis=dict(title=dict(text=t("chat.press_kept_axis")), range=[0, 1.05]),
        shapes=shapes,
    )
    return figure(data, layout)


def curve_figures(task: dict, names: dict[str, str], full: str) -> tuple:
    """kvpress's plot for one task: accuracy against the compression ratio, a line per
    press (the full cache dashed), and beside it the perplexity of the book's continuation
    read over the same compressed caches, on a log axis."""
    colours = palette("qualitative")
    presses = {p: by for p, by in task["presses"].items() if p != "full"}
    base = task["presses"]["full"]["0.0"]
    ratios = sorted({0.0, *(float(r) for by in presses.values() for r in by)})
    figures = []
    for metric, axis in (("accuracy", t("chat.curves_accuracy")), ("ppl", t("chat.curves_ppl"))):
        data = [
            dict(
                type="scatter",
                mode="lines+markers",
                x=ratios,
                y=[base[metric]]
                + [by[str(r)][metric] if str(r) in by else None for r in ratios[1:]],
                name=names[p],
                showlegend=metric == "accuracy",
                # past the palette's colours a line repeats one: dotted, its marker another
                # shape, so it stays apart
                line=dict(color=look(i)[0], dash="dot" if i >= len(colours) else "solid"),
                marker=dict(symbol=look(i)[1]),
                hovertemplate=f"{names[p]}<br>%{{x}}: %{{y:.3f}}<extra></extra>",
            )
            for i, (p, by) in enumerate(presses.items())
        ]
        data.append(
            dict(
                type="scatter",
                mode="lines",
                x=[ratios[0], ratios[-1]],
                y=[base[metric]] * 2,
                name=full,
                showlegend=metric == "accuracy",
                line=dict(color="#999", dash="dash"),  # not the palette's black
                hoverinfo="skip",
            )
        )
        if metric == "accuracy":
            yaxis = dict(title=dict(text=axis), range=[-0.03, 1.03])
        else:  # labelled at 1, 2, 5 × 10ᵏ: Plotly's own put 110 … 170 into one another
            values = [y for trace in data for y in trace["y"] if y is not None]
            yaxis = log_axis(values, title=dict(text=axis))
        layout = dict(
            title=dict(text=t(f"chat.fig_curves_{metric}", n=task["n"], length=task["length"])),
            font=FONT,
            # the legend beside the plot holds a line per press: it must not scroll
            height=max(400, 100 + LEGEND_ENTRY_PX * (len(presses) + 1))
            if metric == "accuracy"
            else 340,
            margin=dict(l=70, r=10, t=50, b=50),
            # beside the plot: on a projector's first screen with the lines it names
            legend=dict(orientation="v", x=1.02, y=1, yanchor="top"),
            xaxis=dict(title=dict(text=t("chat.press_ratio")), tickvals=ratios),
            yaxis=yaxis,
        )
        figures.append(figure(data, layout))
    return tuple(figures)


def accuracy_at(task: dict) -> tuple[list[str], list[str], list[list[float]]]:
    """Ratios × presses of one task's accuracy (the press curves' guess grid)."""
    presses = [p for p in task["presses"] if p != "full"]
    ratios = sorted({r for p in presses for r in task["presses"][p]}, key=float)
    grid = [[task["presses"][p].get(r, {}).get("accuracy", 0.0) for p in presses] for r in ratios]
    return ratios, [t(f"chat.press_{p}") for p in presses], grid


def task_label(task: dict) -> str:
    """A task of the sweep as a picker names it: its name, length and examples."""
    name = t(f"chat.task_{task['task']}")
    flag = "" if task["counts"] else t("chat.curves_not_counted")
    return t("chat.curves_option", task=name, length=task["length"], n=task["n"]) + flag
