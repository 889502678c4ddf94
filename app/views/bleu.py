"""BLEU by source-sentence length, one line per model: Bahdanau et al. (2015), Figure 2."""

from __future__ import annotations

import plotly.graph_objects as go
from kit.i18n import t

from views.style import ACCENT, FONT, POSSIBLE, SURE, legend_below


def bleu_by_length_figure(results: dict[str, dict]) -> go.Figure:
    """BLEU per source-length bucket, one line per model (Bahdanau et al. Figure 2)."""
    dashes = ("solid", "dash", "dot", "dashdot", "longdash")
    data, words = [], t("views.alignment.words")
    for k, (name, r) in enumerate(results.items()):
        buckets = list(r["bleu_by_length"])
        data.append(
            dict(
                type="scatter",
                x=buckets,
                y=[r["bleu_by_length"][b]["bleu"] for b in buckets],
                name=name,
                mode="lines+markers",
                line=dict(dash=dashes[k % len(dashes)], width=3),
                marker=dict(size=10),
                hovertemplate=f"%{{x}} {words}: BLEU %{{y:.1f}}<extra>{name}</extra>",
            )
        )
    layout = dict(
        font=FONT,
        height=420,
        xaxis=dict(title=dict(text=t("views.alignment.length_axis")), type="category"),
        yaxis=dict(title=dict(text=t("views.alignment.bleu_axis")), range=[0, 102]),
        legend=legend_below(),
        margin=dict(l=10, r=10, t=30, b=10),
        colorway=[SURE, POSSIBLE, ACCENT, "#009E73", "#CC79A7"],
    )
    return go.Figure(data=data, layout=layout, _validate=False)
