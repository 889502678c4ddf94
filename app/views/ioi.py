"""What a head reads against what it does, on the IOI prompt (the lesson "Is attention an
explanation?"): each chosen head's attention from the prompt's last token over the prompt,
and the head's measured effect when its output is patched (``python -m engine.evaluate
causal``: the normalised logit difference over the IOI pairs, TransformerLens's metric)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from kit.i18n import t
from kit.presenter import palette

from views.heatmap import FONT, figure, heatmap


def reads_figure(rows: np.ndarray, tokens: Sequence[str], heads: Sequence[str]):
    """Heads × prompt tokens: where each head's last query looks (each row sums to 1)."""
    return heatmap(
        rows,
        list(tokens),
        list(heads),
        title=t("lessons.ioi_reads"),
        x_title=t("lessons.ioi_token"),
        y_title=t("lessons.ioi_head"),
        zmin=0.0,
        zmax=1.0,
        annotate=False,
    )


def effects_figure(effects: Sequence[float], heads: Sequence[str], n_pairs: int):
    """Each head's patching effect, signed: 1 restores the clean answer's logit difference
    fully, 0 changes nothing, below 0 pushes the other way."""
    colours = palette("qualitative")
    data = [
        dict(
            type="bar",
            orientation="h",
            x=[round(float(e), 3) for e in effects],
            y=list(heads),
            text=[f"{e:+.2f}" for e in effects],
            textposition="outside",
            marker=dict(
                color=[colours[0] if e >= 0 else colours[1 % len(colours)] for e in effects]
            ),
            hovertemplate="%{y}: %{x:.3f}<extra></extra>",
        )
    ]
    span = max(0.1, float(np.max(np.abs(effects))) * 1.3)
    layout = dict(
        title=dict(text=t("lessons.ioi_effects", n=n_pairs)),
        font=FONT,
        height=120 + 34 * len(heads),
        margin=dict(l=90, r=20, t=50, b=50),
        xaxis=dict(
            title=dict(text=t("lessons.ioi_effect_axis")), range=[-span, span], zeroline=True
        ),
        yaxis=dict(autorange="reversed"),
        showlegend=False,
    )
    return figure(data, layout)
