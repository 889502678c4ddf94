"""The shipped evaluation on every task, beside the paper's numbers (a table, no figure)."""

import streamlit as st
from kit import t

COLUMNS = ("accuracy", "paper_accuracy", "paper_joint_accuracy", "support_hit_any_hop", "model")
HEADS = ("accuracy", "paper", "paper_joint", "support", "model")


def table(results: dict):
    # Every column's heading looked up once, not once per row: the table is redrawn on
    # each rerun of the page.
    task = t("memory.col_task")
    heads = [t(f"memory.col_{h}") for h in HEADS]
    with st.expander(t("memory.every_task", mean=f"{results['mean_accuracy']:.3f}")):
        st.table(  # a row per task, so every column holds one type (Arrow needs that)
            [
                {task: f"{k}: {t(f'memory.babi.task{k}')}"}
                | {h: r[c] for h, c in zip(heads, COLUMNS, strict=True)}
                for k, r in results["tasks"].items()
            ]
        )
        st.caption(
            t(
                "memory.every_task_caption",
                mean=f"{results['mean_accuracy']:.4f}",
                paper=f"{results['paper_mean_accuracy']:.4f}",
                command=results["command"],
            )
        )
