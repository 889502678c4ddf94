"""The eviction ledger's figure (sections.ledger draws it): per step, the attention the full
cache puts on what the policy evicted, and the KL between the two next-token distributions;
the first step where the policy writes another token than the full cache would is marked
(legend, not a label)."""

from __future__ import annotations

from kit.i18n import t
from kit.presenter import palette

from views.heatmap import figure
from views.style import FONT, legend_below, legend_line


def ledger_figure(led):
    steps = list(range(1, len(led.mass) + 1))
    colours = palette("qualitative")
    data = [
        dict(
            type="bar",
            x=steps,
            y=[round(m, 4) for m in led.mass],
            name=t("chat.ledger_mass"),
            marker=dict(color=colours[0]),
            hovertemplate=t("chat.ledger_mass") + "<br>%{x}: %{y:.3f}<extra></extra>",
        ),
        dict(
            type="scatter",
            mode="lines+markers",
            x=steps,
            y=[round(k, 4) for k in led.kl],
            name=t("chat.ledger_kl"),
            yaxis="y2",
            line=dict(color=colours[1]),
            hovertemplate=t("chat.ledger_kl") + "<br>%{x}: %{y:.3f}<extra></extra>",
        ),
    ]
    shapes = _divergence(led, data)
    layout = dict(
        title=dict(text=t("chat.fig_ledger", policy=t(f"chat.policy_{led.policy['name']}"))),
        font=FONT,
        height=420,
        margin=dict(l=70, r=70, t=50, b=50),
        legend=legend_below(),
        xaxis=dict(title=dict(text=t("chat.ledger_step")), dtick=1 if len(steps) <= 20 else None),
        yaxis=dict(title=dict(text=t("chat.ledger_mass_axis")), range=[0, 1]),
        yaxis2=dict(
            title=dict(text=t("chat.ledger_kl_axis")),
            overlaying="y",
            side="right",
            rangemode="tozero",
            # plotly.js puts an overlaying axis's ticks on the other's grid ("sync"):
            # KL read 0.503, 1.005, 2.513; its own round steps instead (it draws no grid).
            tickmode="auto",
            showgrid=False,
        ),
        shapes=shapes,
        bargap=0.3,
    )
    return figure(data, layout)


def _divergence(led, data: list) -> list[dict]:
    """The dashed line at the first step where the policy writes another token, with a
    legend entry for it appended to ``data`` (no text drawn on the plot)."""
    if led.first_divergence is None:
        return []
    s = led.first_divergence + 1
    data.append(legend_line(t("chat.ledger_diverges", step=s), dash="dash", color="#444"))
    return [dict(type="line", x0=s, x1=s, yref="paper", y0=0, y1=1, line=dict(dash="dash"))]
