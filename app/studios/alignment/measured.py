"""Section: what the shipped evaluation measured on the test split, for every model of the task."""

import streamlit as st
from kit import chart, engine_text, t
from state import models
from state import nmt as state
from views.alignment import bleu_by_length_figure


def _row(card, r: dict, decoding: str | None = None) -> dict:
    return {
        t("alignment.col_model"): engine_text(card.title),
        t("alignment.col_decoding"): decoding or r["decoding"],
        t("alignment.col_exact"): r["exact_match"],
        "BLEU": r["bleu"],
        "AER": r.get("aer"),
        t("alignment.col_aer_sure"): r.get("aer_argmax_vs_sure"),
        t("alignment.col_steps"): r.get("train_steps"),
    }


def section(card):
    st.header(t("alignment.measured_header"))
    measured = [(c, models.results(c.name)) for c in state.cards(card.task)]
    measured = [(c, r) for c, r in measured if r]
    if not measured:
        st.info(t("alignment.no_evaluation", command=card.evaluate_command))
        return
    rows = []
    for c, r in measured:
        rows.append(_row(c, r))
        if "greedy" in r:  # the same model decoded greedily, for comparison
            rows.append(_row(c, r["greedy"] | {"train_steps": r.get("train_steps")}, "greedy"))
    st.dataframe(rows, hide_index=True)
    chart(bleu_by_length_figure({engine_text(c.title): r for c, r in measured}), key="nmt-bleu")
    commands = sorted({c.evaluate_command for c, _ in measured if c.evaluate_command})
    st.caption(
        t(
            "alignment.measured_caption",
            n=measured[0][1]["n_test"],
            commands=", ".join(f"`{cmd}`" for cmd in commands),
        )
    )
