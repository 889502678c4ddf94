"""The Variants lab's quality section below the table and maps: recall against state with
the papers' findings, the field's recipe as far as it is trained, and the needle probe.

Each ``draw_*`` draws its figure (views.variants_quality) with its captions and tables.
"""

from __future__ import annotations

import streamlit as st
from kit import chart, data_table, t, table_exports
from views.variants import data_text, variant_name
from views.variants_quality import (
    needle_figure,
    needle_rows,
    published_figure,
    recall_rows,
    recall_state_figure,
    tuning_rows,
    width_figure,
)

from engine.analysis import needle, recall_state
from engine.models.variant_lm import GRID_WIDTH


def draw_published() -> None:
    """The published figure's points beside ours, with where and how they were read."""
    found = recall_state.published()
    if not found:
        return
    chart(published_figure(found), key="quality-recall-published")
    st.caption(t("variants_quality.published_caption", n=len(found["points"])))
    rows = [
        {
            t("variants_quality.col_model"): p["model"],
            t("variants_quality.col_state"): p["state_bytes"],
            t("variants_quality.col_accuracy"): p["accuracy"],
        }
        for p in found["points"]
    ]
    table_exports(rows, "variants-zoology-published")


def draw_recall_state(data: dict) -> None:
    """Zoology's and Based's chart for the grid, with the papers' findings beside it."""
    st.subheader(t("variants_quality.recall_title"))
    rows = data.get("recall_state") or []
    if not rows:
        st.info(t("variants_quality.recall_missing"))
        return
    st.markdown(t("variants_quality.recall_intro"))
    chart(recall_state_figure(rows, 1 / 64), key="quality-recall-state")
    st.caption(t("variants_quality.recall_caption"))
    sweep = data.get("width_sweep") or {}
    if sweep.get("cells"):
        widths = ", ".join(str(w) for w in sweep["widths"])
        st.caption(t("variants_quality.sweep_caption", widths=widths, grid=GRID_WIDTH))
    if sweep.get("missing_cells"):
        st.caption(t("variants_quality.sweep_missing", cells=", ".join(sweep["missing_cells"])))
    data_table(recall_rows(rows))
    chart(width_figure(rows), key="quality-recall-width")
    st.caption(t("variants_quality.width_caption"))
    draw_published()
    findings = (data.get("recall_published") or {}).get("findings", [])
    sources = [f.get("source", "") for f in findings]
    st.markdown(t("variants_quality.published_title"))
    for key, src in zip(("zoology", "based"), sources, strict=False):
        st.markdown(t(f"variants_quality.finding_{key}", source=src))
    st.markdown(t("variants_quality.ours"))
    missing = data.get("not_in_grid") or {}
    if missing:
        text = " · ".join(f"{variant_name(n)}: {data_text(why)}" for n, why in missing.items())
        st.caption(t("variants_quality.not_in_grid", reasons=text))
    if data.get("missing_cells"):
        st.caption(t("variants_quality.missing_cells", cells=", ".join(data["missing_cells"])))


def draw_needle() -> None:
    """The needle probe's heatmaps, or how to compute them."""
    st.subheader(t("variants_quality.needle_title"))
    probe = needle.results()
    if not probe or not probe.get("mean"):
        st.info(t("variants_quality.needle_missing"))
        return
    st.markdown(
        t(
            "variants_quality.needle_intro",
            task=probe["task"],
            n=probe["trained_n"],
            distractors=probe["distractors"],
            size=probe["size"],
        )
    )
    chart(needle_figure(probe), key="quality-needle")
    table_exports(needle_rows(probe), "variants-needle")
    skipped = probe.get("skipped") or {}
    if skipped:
        text = ", ".join(f"{variant_name(v)} ({acc:.3f})" for v, acc in skipped.items())
        st.caption(t("variants_quality.needle_skipped", variants=text, task=probe["task"]))


def draw_tuning(runs: list[dict]) -> None:
    """The field's recipe on the grid's variants: the learning-rate sweep at Zoology's
    tuning point, as far as the plan has trained it."""
    st.subheader(t("variants_quality.tuning_title"))
    if not runs:
        st.caption(t("variants_quality.tuning_missing"))
        return
    point = runs[0]
    st.markdown(t("variants_quality.tuning_intro", task=point["task"], width=point["width"]))
    rows = tuning_rows(runs)
    data_table(rows)
    variants = len({r["variant"] for r in runs})
    st.caption(t("variants_quality.tuning_caption", runs=len(runs), variants=variants))
    table_exports(rows, "variants-zoology-tuning")


def draw(data: dict, tuning: list[dict]) -> None:
    """The section's figures below the table and maps: recall against state, the field's
    recipe as far as it is trained, then the needle probe."""
    draw_recall_state(data)
    draw_tuning(tuning)
    draw_needle()
