"""What the Alignment page draws that the Lessons and Compare pages draw too: the soft
alignment against the grammar's gold links, the measured table, and user text made inert.

The numbers arrive computed (state.nmt scores α on the gold links and reads each card's
results); these functions lay them out.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from kit import chart, data_table, engine_text, md_escape, notes, t
from views.alignment import alignment_figure
from views.bleu import bleu_by_length_figure


def soft_alignment(amap, src: Sequence[str], scored, *, gold_expected: bool) -> None:
    """α_ij; on a grammar sentence, α on the gold pair with both AERs and the anticipations.

    ``scored`` is a ``state.alignments.VersusGold`` or None; ``gold_expected`` says whether
    this task's sentences can have gold links (so their absence is worth a note).
    """
    st.header(t("alignment.soft_header"))
    if scored is None:
        if gold_expected:
            st.caption(t("alignment.no_gold"))
        alpha = alignment_figure(
            amap.weights[0, 0], src, amap.query_labels, flags=amap.flags, title="α_ij"
        )
        chart(alpha, key="nmt-alpha")
        return
    pair = scored.pair
    c1, c2, c3 = st.columns(3)
    # Short labels, the rest in the help: a column of the narrowest page cut them with "…".
    c1.metric(t("alignment.aer_possible"), f"{scored.aer:.3f}", help=t("alignment.aer_help"))
    c2.metric(t("alignment.aer_sure"), f"{scored.aer_sure:.3f}", help=t("alignment.aer_help"))
    c3.metric(t("alignment.ahead"), len(scored.ahead), help=t("alignment.ahead_help"))
    st.caption(t("alignment.gold_caption", how=scored.how))
    gold = alignment_figure(
        scored.alpha,
        pair.src,
        pair.tgt,
        flags=amap.flags,
        sure=pair.sure,
        possible=pair.possible,
        title=t("alignment.gold_title"),
    )
    chart(gold, key="nmt-gold")
    if scored.ahead:
        looks = (t("alignment.looks_at", t=md_escape(a), s=md_escape(b)) for a, b in scored.ahead)
        st.markdown(t("alignment.anticipation", links="; ".join(looks)))


def _row(card, r: dict, decoding: str | None = None) -> dict:
    return {
        t("alignment.col_model"): engine_text(card.title),
        t("alignment.col_decoding"): _decoding(decoding or r["decoding"]),
        t("alignment.col_exact"): r["exact_match"],
        "BLEU": r["bleu"],
        "AER": r.get("aer"),
        t("alignment.col_aer_sure"): r.get("aer_argmax_vs_sure"),
        t("alignment.col_steps"): r.get("train_steps"),
    }


def _decoding(name: str) -> str:
    """The results file's decoding ("greedy", "beam 5") in the reader's language."""
    beam = name.removeprefix("beam ")
    if name == "greedy":
        return t("alignment.greedy")
    return t("alignment.beam_n", b=beam) if beam.isdigit() else name


def measured_table(measured: Sequence[tuple], command: str | None) -> None:
    """Each model's measured BLEU, AER and exact match, and BLEU by sentence length.

    ``measured`` holds (card, results) pairs; ``command`` is what to run when it is empty.
    """
    st.header(t("alignment.measured_header"))
    if not measured:
        st.info(t("alignment.no_evaluation", command=command))
        return
    rows = []
    for c, r in measured:
        rows.append(_row(c, r))
        if "greedy" in r:  # the same model decoded greedily, for comparison
            rows.append(_row(c, r["greedy"] | {"train_steps": r.get("train_steps")}, "greedy"))
    with notes("nmt-measured"):  # presenting: after Figure 2, the one a room reads
        data_table(rows)
    chart(bleu_by_length_figure({engine_text(c.title): r for c, r in measured}), key="nmt-bleu")
    commands = sorted({c.evaluate_command for c, _ in measured if c.evaluate_command})
    st.caption(
        t(
            "alignment.measured_caption",
            n=measured[0][1]["n_test"],
            commands=", ".join(f"`{cmd}`" for cmd in commands),
        )
    )


def without_attention(measured: Sequence[tuple], note: str, key: str) -> None:
    """A model with no attention has no map: what having none costs instead, BLEU by
    sentence length beside the models that attend (Bahdanau et al.'s Figure 2, from each
    card's measured results), then ``note``. ``measured``: (card, results) pairs."""
    if measured:
        results = {engine_text(c.title): r for c, r in measured}
        chart(bleu_by_length_figure(results), key=key)
    st.info(note)
