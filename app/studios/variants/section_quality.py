"""Quality: every variant trained on the same long-range tasks — accuracy, cost and maps.

The results are shipped (python -m engine.evaluate variants --save); nothing trains here.
"""

from __future__ import annotations

import streamlit as st
from kit import chart, controls, data_table, t, table_exports, url_choice, url_number
from kit.i18n import map_note
from state import variants as state
from views import variants as figs

COSTS = ["ms_per_step", "flops"]


def show() -> None:
    data = state.quality_results()
    rows = state.quality_rows(data)
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    st.markdown(t("variants.quality_intro"))
    wide = {}
    for r in rows:
        line = wide.setdefault(r["variant"], {"variant": r["variant"]})
        line[r["task"]] = f"{r['accuracy']:.3f} ± {r['spread']:.3f}"
        line[f"{r['task']} ms/step"] = r["ms_per_step"]
        line[f"{r['task']} MiB"] = r["peak_rss_mib"]
    published = t("variants.quality_published")
    for r in wide.values():
        lra = data["lra_published"]["average_accuracy"].get(r["variant"])
        r[published] = f"{lra:.2f}" if lra is not None else "—"
    data_table(list(wide.values()))
    st.caption(t("variants.quality_caption", source=data["lra_published"]["source"]))
    table_exports(rows, "variants-quality")
    first = tasks.index("mqar-256") if "mqar-256" in tasks else 0  # where reach shows
    label = t("variants.quality_task")
    task = url_choice(
        st.segmented_control,
        "task",
        label,
        tasks,
        default=first,
        key="q-task",
        format_func=task_name,
    )
    st.caption(data["tasks"].get(task, task))
    cost_chart(rows, task)
    maps(data, task)


def task_name(task: str) -> str:
    """A task's short name in the reader's language (a task the catalog lacks: its id)."""
    name = t(f"variants.task_{task.replace('-', '_')}")
    return task if name.startswith("variants.task_") else name


@st.fragment
def cost_chart(rows: list[dict], task: str) -> None:
    cost = url_choice(
        st.radio,
        "cost",
        t("variants.quality_cost"),
        COSTS,
        key="q-cost",
        horizontal=True,
        format_func=lambda c: t(f"variants.quality_cost_{c}"),
    )
    fig = figs.accuracy_cost_figure(
        [r for r in rows if r["task"] == task],
        cost,
        title=t("variants.quality_chart_title", task=task),
        x_title=t(f"variants.quality_cost_{cost}"),
    )
    chart(fig, key="quality-chart")


@st.fragment
def maps(data: dict, task: str) -> None:
    st.subheader(t("variants.quality_maps"))
    variants = [v for v in data["table"] if task in data["table"][v]]
    with controls("quality-maps"):
        c1, c2, c3, c4 = st.columns(4)
        seed = url_number(
            c1.number_input, "seed", t("variants.seed_trained"), 0, 1, 0, key="q-seed"
        )
        first = state.quality_trace(task, variants[0], int(seed))
        amap = first.maps["attention"]
        n_layers, n_heads = amap.shape[:2]
        layer = url_number(
            c2.number_input,
            "layer",
            t("variants.layer", last=n_layers - 1),
            0,
            n_layers - 1,
            n_layers - 1,
            key="q-layer",
        )
        head = url_number(
            c3.number_input,
            "head",
            t("variants.head", last=n_heads - 1),
            0,
            n_heads - 1,
            0,
            key="q-head",
        )
        asked = [i for i in first.outputs["asked"] if i < amap.shape[2]]
        query = c4.selectbox(
            t("variants.quality_query"),
            asked,
            key="q-query",
            format_func=lambda i: f"{i}: {amap.query_labels[i]}",
        )
    asked_all = first.outputs["asked"]
    key = first.outputs["evidence"][asked_all.index(query)] if query is not None else None
    key = key if key is not None and key < amap.shape[3] else None  # cropped away
    panels, table = [], []
    for name in variants:
        tr = state.quality_trace(task, name, int(seed))
        m = tr.maps["attention"]
        w = m.weights[layer, head]
        panels.append(dict(z=w, x=m.key_labels, y=m.query_labels, title=name, flags=m.flags))
        if query is not None:
            at = tr.outputs["asked"].index(query)
            table.append(
                {
                    "variant": name,
                    "weight_on_key": float(w[query, key]) if key is not None else float("nan"),
                    "strongest_key": int(w[query].argmax()),
                    "answer": tr.outputs["answers"][at],
                    "prediction": tr.outputs["predictions"][at],
                    "test_accuracy": float(tr.outputs["accuracy_test"]),
                }
            )
    if key is not None:
        st.caption(t("variants.quality_marker", query=query, pos=key))
    st.caption(map_note(amap.note))
    marker = (query, key) if key is not None else None
    chart(figs.map_grid(panels, marker=marker), key="quality-maps")
    data_table(table)
