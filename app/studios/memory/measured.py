"""The shipped evaluation on every task, beside the paper's numbers (a table, no figure)."""

import streamlit as st
from kit import t


def table(results: dict):
    with st.expander(t("memory.every_task", mean=f"{results['mean_accuracy']:.3f}")):
        st.table(  # a row per task, so every column holds one type (Arrow needs that)
            [
                {
                    t("memory.col_task"): f"{k}: {t(f'memory.babi.task{k}')}",
                    t("memory.col_accuracy"): r["accuracy"],
                    t("memory.col_paper"): r["paper_accuracy"],
                    t("memory.col_paper_joint"): r["paper_joint_accuracy"],
                    t("memory.col_support"): r["support_hit_any_hop"],
                    t("memory.col_model"): r["model"],
                }
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
