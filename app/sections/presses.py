"""kvpress's sweep drawn: one task's curves (views.presses) with what they show, and the
full cache's baseline per task."""

from __future__ import annotations

import streamlit as st
from kit import chart, data_table
from kit.i18n import t
from views.presses import curve_figures


def draw_curves(task: dict, hidden: list[dict], key: str) -> None:
    """One task's curves, the full cache's baseline, and where perplexity hides a loss
    (``hidden``: ``engine.evaluation.cache.hidden_losses`` of this task)."""
    names = {p: t(f"chat.press_{p}") for p in task["presses"]}
    acc, ppl = curve_figures(task, names, t("chat.press_full"))
    chart(acc, key=f"{key}-accuracy")
    chart(ppl, key=f"{key}-ppl")
    st.markdown(t("chat.curves_full", accuracy=f"{task['full_accuracy']:.2f}", n=task["n"]))
    if not task["counts"]:
        st.caption(t("chat.curves_below", accuracy=f"{task['full_accuracy']:.2f}"))
    if not hidden:
        st.markdown(t("chat.curves_not_hidden"))
        return
    worst = max(hidden, key=lambda h: h["drop"])
    total = sum(len(by) for p, by in task["presses"].items() if p != "full")
    st.markdown(
        t(
            "chat.curves_hidden",
            count=len(hidden),
            total=total,
            press=names[worst["press"]],
            ratio=worst["ratio"],
            drop=f"{worst['drop']:.2f}",
            rise=f"{worst['rise']:+.0%}",
        )
    )


def draw_baseline(found: dict) -> None:
    """The full cache's accuracy per task (RULER counts a task where it reaches 0.5), and
    where the numbers come from."""
    data_table(
        [
            {
                "task": t(f"chat.task_{s['task']}"),
                "length": s["length"],
                "n": s["n"],
                "full_accuracy": s["full_accuracy"],
                "counts": t("chat.curves_yes") if s["counts"] else t("chat.curves_no"),
            }
            for s in found["tasks"].values()
        ]
    )
    st.caption(
        t("chat.curves_source", command=found.get("command", ""), date=found.get("date", ""))
    )
