"""Figures of the Watch-attention-learn page: the probe's head maps at one saved step, and
the training curves with that step and the phase-change window marked (plotly; drawing
only — every number comes from the shipped timeline)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from kit.i18n import t

from views import timeline
from views.heatmap import NARROW_PX, axes, log_axis, map_grid, subplot_ref

COLOURS = {2: "#0072B2", 1: "#D55E00"}  # Okabe–Ito blue and vermillion: colour-blind safe
LOSS_PX = 200  # the live figure's loss curve, above its head maps


def head_panels(maps: np.ndarray, layers, labels=None) -> list[dict]:
    """``maps [L, H, T, T]`` as map panels, one per head of ``layers``, over ``labels`` (a
    sequence typed on the page: its tokens) or the probe's positions (its caption names
    the tokens)."""
    ticks = list(labels) if labels is not None else [str(i) for i in range(maps.shape[-1])]
    return [
        dict(z=m, x=ticks, y=ticks, title=t("learning.fig.head", layer=layer, head=h))
        for layer, heads in zip(layers, maps, strict=True)
        for h, m in enumerate(heads)
    ]


def head_maps_figure(maps: np.ndarray, title: str, labels=None) -> go.Figure:
    """Every (layer, head) of ``maps [L, H, T, T]`` in one row where the width allows: on a
    projector the induction heads of layer 1 then stand on the first screen beside the
    previous-token heads they read (a row per layer put them below it)."""
    panels = head_panels(maps, range(len(maps)), labels)
    return map_grid(panels, columns=len(panels), title=title)


def curves_figure(
    series: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]],
    current: int,
    window: dict | None,
) -> go.Figure:
    """One panel per measure, a line per model (2 layers, 1 layer): ``series[measure]
    [n_layers] = (steps, values)``, drawn by :func:`views.timeline.curves_figure` with the
    current step dashed and the phase-change window shaded."""
    panels = [
        (
            t(f"learning.fig.curve_{m}"),
            {t("learning.fig.model", layers=n): v for n, v in lines.items()},
        )
        for m, lines in series.items()
    ]
    band = (t("learning.fig.window"), window["start"], window["end"]) if window else None
    step = t("learning.fig.step_axis")
    # The page's whole width, not a column's: its legend's rows are counted at the
    # narrowest page (two rows at a column's 360 px left a blank band at the top).
    kw = dict(height=190, band=band, width_px=NARROW_PX)
    return timeline.curves_figure(panels, current, (), step, **kw)


def live_figure(
    steps: np.ndarray, loss: np.ndarray, heads: np.ndarray, layer: int, title: str
) -> go.Figure:
    """A live run so far: its held-out loss at the snapshots taken (log step axis) above
    the head maps ``heads [H, T, T]`` of ``layer`` at the latest one."""
    fig = map_grid(head_panels(heads[None], [layer]), title=title, header_px=LOSS_PX)
    plot_h = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    band = (1 - (LOSS_PX - 60) / plot_h, 1)
    n = len(fig.data) + 1
    curve = dict(x=np.maximum(steps, 1), y=loss, mode="lines+markers", showlegend=False)
    fig.add_scatter(**curve, line=dict(color=COLOURS[2]), **subplot_ref(n))
    loss_axis = dict(title=dict(text=t("learning.fig.curve_loss")))
    fig.update_layout(axes(n, (0.12, 0.9), band, x=log_axis(), y=loss_axis))
    return fig
