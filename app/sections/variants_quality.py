"""The Variants lab's Quality section, whole: the grid's table, the task picker and what
it drives (accuracy against cost, every trained variant's maps, each cell's training
timeline), then recall against state with the papers' findings, the field's recipe as far as
it is trained, the verdict and the needle probe.

Each ``draw_*`` draws its figure (views.variants_quality) with its captions and tables.
"""

from __future__ import annotations

import streamlit as st
from kit import (
    chart,
    controls,
    data_table,
    fragment,
    html_chart,
    notes,
    t,
    table_exports,
    url_choice,
    url_number,
)
from kit.i18n import engine_text, task_title
from kit.url import url_multiselect
from state import grid_training as training
from state import variants as state
from views import timeline as timeline_figs
from views import variants as figs
from views.heatmap import NARROW_PX, map_grid
from views.variants import data_text, variant_name
from views.variants_html import map_grid_html
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
from sections import variants_verdict as verdict
from sections.variants import pick


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


COSTS = ["ms_per_step", "flops"]


def quality() -> None:
    data = state.quality_results()
    rows = state.quality_rows(data)
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    with notes("quality-table"):  # presenting: after the figures, which the task drives
        names = [state.variant_name(n) for n in state.frozen_variants(data)]
        frozen = t("variants_verdict.diff_join").join(names)
        st.markdown(t("variants.quality_intro", frozen=frozen or "–"))
        data_table(state.quality_table(data, rows))
        source = data_text(data["lra_published"]["source"])
        st.caption(t("variants.quality_caption", source=source))
        table_exports(rows, "variants-quality")
    quality_task(data, rows, tasks)
    tuning = state.plan_tuning()
    draw(data, tuning)
    verdict.draw(state.plan_results(), tuning, state.plan_recipe(tuning))
    cells = tuple((task, v) for task in tasks for v in state.task_variants(data, task))
    state.warm_quality(cells, int(st.session_state.get("q-seed", 0)))  # the next task picked


@fragment
def quality_task(data: dict, rows: list[dict], tasks: list[str]) -> None:
    """The task picker and what it drives: a new task redraws these figures only, not the
    recipe's tables, verdict and charts below (which were ≈ 1 s of each pick)."""
    first = tasks.index("mqar-256") if "mqar-256" in tasks else 0  # where reach shows
    kw = dict(default=first, key="q-task", format_func=task_title)
    task = url_choice(st.segmented_control, "task", t("variants.quality_task"), tasks, **kw)
    st.caption(data_text(data["tasks"].get(task, task)))
    quality_cost(rows, task)
    quality_maps(data, task)
    quality_training(task, state.task_variants(data, task))


@fragment
def quality_cost(rows: list[dict], task: str) -> None:
    kw = dict(key="q-cost", horizontal=True, format_func=lambda c: t(f"variants.quality_cost_{c}"))
    cost = url_choice(st.radio, "cost", t("variants.quality_cost"), COSTS, **kw)
    fig = figs.accuracy_cost_figure(
        [r for r in rows if r["task"] == task],
        cost,
        title=t("variants.quality_chart_title", task=task),
        x_title=t(f"variants.quality_cost_{cost}"),
    )
    chart(fig, key="quality-chart")
    if said := figs.piles_text([r for r in rows if r["task"] == task], cost):
        st.caption(said)


@fragment
def quality_maps(data: dict, task: str) -> None:
    st.subheader(t("variants.quality_maps"))
    variants = state.task_variants(data, task)
    with controls("quality-maps"):
        c1, c2, c3, c4 = st.columns(4)
        last = state.last_seed(data, task)  # the seeds the grid trained, as its table says
        label = t("variants.seed_trained", last=last)
        seed = url_number(c1.number_input, "seed", label, 0, last, 0, key="q-seed")
        traces = {name: state.quality_trace(task, name, int(seed)) for name in variants}
        first = traces[variants[0]]
        amap = first.maps["attention"]
        n_layers, n_heads = amap.shape[:2]
        layer = pick(c2.number_input, "layer", n_layers, n_layers - 1, key="q-layer")
        head = pick(c3.number_input, "head", n_heads, 0, key="q-head")
        asked = [i for i in first.outputs["asked"] if i < amap.shape[2]]
        query = (
            url_choice(
                c4.selectbox,
                "query",
                t("variants.quality_query"),
                asked,
                key="q-query",
                format_func=lambda i: f"{i}: {amap.query_labels[i]}",
            )
            if asked
            else None
        )
    outputs = first.outputs
    key = outputs["evidence"][outputs["asked"].index(query)] if query is not None else None
    key = key if key is not None and key < amap.shape[3] else None  # cropped away
    panels = state.quality_panels(traces, layer, head)
    if key is not None:
        st.caption(t("variants.quality_marker", query=query, pos=key))
    st.caption(engine_text(amap.note, markdown=True))
    marker = (query, key) if key is not None else None
    grid = map_grid_html(panels, marker=marker)
    html_chart(grid, "quality-maps", lambda: map_grid(panels, marker=marker))
    data_table(state.quality_read(traces, layer, head, query, key) if query is not None else [])


@fragment
def quality_training(task: str, variants: list[str]) -> None:
    """Each cell's shipped timeline: its probe map at a step, beside its curves."""
    st.subheader(t("variants.training_title"))
    seed = int(st.session_state.get("q-seed", 0))
    found, problems = training.timelines(task, tuple(variants), seed)
    if problems:
        st.caption(training.missing(problems))
    if not found:
        return
    steps = training.steps(found)
    label, last = t("variants.training_step"), len(steps) - 1
    step = url_choice(st.select_slider, "step", label, steps, default=last, key="q-step")
    layer, head = int(st.session_state.get("q-layer", 1)), int(st.session_state.get("q-head", 0))
    st.caption(t("variants.training_caption", seed=seed, layer=layer, head=head))
    panels = training.panels(found, step, layer, head)
    grid = map_grid_html(panels, table_side=training.TABLE_SIDE)  # 22 × 32² cells: images
    html_chart(grid, "quality-training", lambda: map_grid(panels))
    most = timeline_figs.DISTINCT_LINES
    shown = url_multiselect(
        "lines",
        t("variants.training_curves_of", most=most),
        list(found),
        training.default_curves(found, most),
        max_selections=most,
        format_func=state.variant_name,
        key="q-curves",
    )
    panels_ = [  # each line named as the legends name the variants
        (title, {state.variant_name(v): curve for v, curve in lines.items()})
        for title, lines in training.curve_panels({v: found[v] for v in shown})
    ]
    kw = dict(height=150, width_px=NARROW_PX)  # the page's width: its legend's rows, no more
    fig = timeline_figs.curves_figure(panels_, None, (), t("variants.training_step"), **kw)
    chart(fig, key="quality-training-curves")
    table_exports(training.rows(found), f"variants-training-{task}")
