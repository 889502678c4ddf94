"""The shipped evaluation on every task, beside the paper's numbers (a table, no figure)."""

import streamlit as st

from engine.data.babi_tasks import TASKS


def table(results: dict):
    with st.expander(f"Measured on every task: mean accuracy {results['mean_accuracy']:.3f}"):
        st.table(  # one row per task, so every column holds one type (Arrow needs it)
            [
                {
                    "task": f"{t}: {TASKS[int(t)][0]}",
                    "accuracy": r["accuracy"],
                    "paper PE LS RN (1k)": r["paper_accuracy"],
                    "paper joint": r["paper_joint_accuracy"],
                    "supporting fact, any hop": r["support_hit_any_hop"],
                    "model": r["model"],
                }
                for t, r in results["tasks"].items()
            ]
        )
        st.caption(
            f"Mean {results['mean_accuracy']:.4f} vs the paper's "
            f"{results['paper_mean_accuracy']:.4f} on the same tasks (Sukhbaatar et al. "
            "2015, Table 1). Our tasks are generated like the published ones, not the "
            f"published files. Reproduce: `{results['command']}`."
        )
