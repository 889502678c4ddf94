"""The variant grid's training timelines, for the Variants lab's quality section.

Every cell of the grid (``python -m engine.train variants``) saves beside its checkpoint
≈ 12 log-spaced snapshots: probe loss, accuracy, the weight the asked positions put on
their evidence, and test example 0's maps pooled to 32 × 32 (engine.models.variant_lm
.cell_timeline). They are read once per process and file version, so moving the step
slider only picks a snapshot out of memory.
"""

from __future__ import annotations

import streamlit as st
from kit.i18n import engine_text, t

from engine.errors import InputError
from engine.models import variant_lm
from engine.timeline import Timeline
from state.variants import variant_name

METRICS = ("accuracy", "evidence_mass", "loss")
# Twenty-odd 32 × 32 maps as table cells (one tooltip each) weigh 1.3 MB of HTML; as one
# image per panel they weigh ≈ 40 KB and paint at once.
TABLE_SIDE = 16
# All 23 cells' curves at once were 69 lines in 7 colours (each colour three or four
# variants, so no line could be told by its colour) and ≈ 300 ms of every task pick's
# painting. The page shows at most one variant per colour (views.timeline.DISTINCT_LINES),
# by default the ones the recall debate is about: attention against the fixed-state
# mixers (issue 31).
CURVES_DEFAULT = ("full", "based", "gla", "deltanet", "mamba", "retnet", "linear")


@st.cache_resource(max_entries=200, show_spinner=False)
def _load(task: str, variant: str, seed: int, stamp: tuple | None) -> Timeline:
    """``stamp`` is only a cache key: a cell trained again has another."""
    return variant_lm.cell_timeline(task, variant, seed)


def timelines(task: str, variants: tuple[str, ...], seed: int) -> tuple[dict, list]:
    """({variant: Timeline}, [(variant, InputError)]): the cells with a readable timeline,
    and the others with the engine's reason (not shipped, or damaged)."""
    found, problems = {}, []
    for variant in variants:
        stamp = variant_lm.cell_timeline_stamp(task, variant, seed)
        try:
            found[variant] = _load(task, variant, seed, stamp)
        except InputError as exc:
            problems.append((variant, exc))
    return found, problems


def default_curves(found: dict[str, Timeline], most: int) -> list[str]:
    """The variants whose curves show first: CURVES_DEFAULT's that have a timeline (at most
    ``most``), else the first ``most`` found."""
    chosen = [v for v in CURVES_DEFAULT if v in found][:most]
    return chosen or list(found)[:most]


def steps(found: dict[str, Timeline]) -> list[int]:
    """Every saved step of any cell (the cells of a task share one schedule, so one list)."""
    return sorted({s for tl in found.values() for s in tl.steps})


def panels(found: dict[str, Timeline], step: int, layer: int, head: int) -> list[dict]:
    """One map panel per variant: its probe map at the saved step at or before ``step``."""
    out = []
    for variant, tl in found.items():
        i = tl.at(step)
        m = tl.probes[i][0].maps["attention"]
        layer_, head_ = min(layer, m.shape[0] - 1), min(head, m.shape[1] - 1)
        title = f"{variant_name(variant)} · {tl.steps[i]}"
        out.append(
            dict(
                z=m.weights[layer_, head_],
                x=m.key_labels,
                y=m.query_labels,
                title=title,
                flags=m.flags,
            )
        )
    return out


def curves(found: dict[str, Timeline], metric: str) -> dict[str, tuple[list, list]]:
    """{variant: (steps, values)} of one metric."""
    return {v: tl.curve(metric) for v, tl in found.items() if metric in tl.metrics}


def curve_panels(found: dict[str, Timeline]) -> list[tuple[str, dict]]:
    """(title, curves) per metric, for ``views.timeline.curves_figure``."""
    return [(t(f"variants.training_{m}"), curves(found, m)) for m in METRICS]


def missing(problems: list[tuple[str, InputError]]) -> str:
    """One line naming the cells without a readable timeline, and the first one's reason."""
    names = ", ".join(v for v, _ in problems)
    return t(
        "variants.training_missing", variants=names, why=engine_text(problems[0][1], markdown=True)
    )


def rows(found: dict[str, Timeline]) -> list[dict]:
    """Every snapshot's metrics, one row per variant and step (the section's table export)."""
    out = []
    for variant, tl in found.items():
        for i, step in enumerate(tl.steps):
            row = {"variant": variant, "step": step}
            row |= {m: tl.metrics[m][i] for m in METRICS if m in tl.metrics}
            out.append(row)
    return out
