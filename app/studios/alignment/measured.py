"""Section: what the shipped evaluation measured on the test split, for every model of the task."""

import streamlit as st
from state import models
from state import nmt as state
from views.alignment import bleu_by_length_figure


def _row(card, r: dict, decoding: str | None = None) -> dict:
    return {
        "model": card.title,
        "decoding": decoding or r["decoding"],
        "exact match": r["exact_match"],
        "BLEU": r["bleu"],
        "AER": r.get("aer"),
        "AER argmax vs sure": r.get("aer_argmax_vs_sure"),
        "training steps": r.get("train_steps"),
    }


def section(card):
    st.header("Measured on the test split")
    measured = [(c, models.results(c.name)) for c in state.cards(card.task)]
    measured = [(c, r) for c, r in measured if r]
    if not measured:
        st.info(f"No evaluation is shipped yet: run `{card.evaluate_command}`.")
        return
    rows = []
    for c, r in measured:
        rows.append(_row(c, r))
        if "greedy" in r:  # the same model decoded greedily, for comparison
            rows.append(_row(c, r["greedy"] | {"train_steps": r.get("train_steps")}, "greedy"))
    st.dataframe(rows, hide_index=True)
    st.plotly_chart(bleu_by_length_figure({c.title: r for c, r in measured}), key="nmt-bleu")
    commands = sorted({c.evaluate_command for c, _ in measured if c.evaluate_command})
    st.caption(
        f"Test split ({measured[0][1]['n_test']} sentences, never trained on); measured by "
        + ", ".join(f"`{cmd}`" for cmd in commands)
        + ". AER uses α with the gold translation fed in. Bahdanau et al.'s Figure 2: without "
        "attention the fixed vector has to hold the whole sentence, so BLEU falls with "
        "length; with attention it stays nearly flat. Models with fewer training steps "
        "than the additive one are marked in the table, so compare them with care."
    )
