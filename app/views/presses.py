"""One press on one example: which context positions it kept (the share of the model's
layers × K/V heads keeping each), with the answer's place in the context marked."""

from __future__ import annotations

import numpy as np
from kit.i18n import t
from kit.presenter import palette

from views.heatmap import FONT, figure


def kept_figure(found: dict):
    press = found["runs"][1]
    share = np.asarray(press["mask"], dtype=float).mean((0, 1))  # (n,)
    colours = palette("qualitative") or ["#4c72b0", "#dd8452"]
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
        data.append(
            dict(
                type="scatter",
                mode="lines",
                x=[None],
                y=[None],
                name=t("chat.press_needle"),
                line=dict(dash="dot", color="#444"),
            )
        )
    layout = dict(
        title=dict(
            text=t("chat.fig_press", press=t(f"chat.press_{press['press']}"), ratio=press["ratio"])
        ),
        font=FONT,
        height=340,
        margin=dict(l=70, r=10, t=50, b=50),
        legend=dict(orientation="h", y=-0.3),
        xaxis=dict(title=dict(text=t("chat.press_position"))),
        yaxis=dict(title=dict(text=t("chat.press_kept_axis")), range=[0, 1.05]),
        shapes=shapes,
    )
    return figure(data, layout)
