"""Section: the soft alignment α_ij, with the grammar's gold links and the AER when it has them."""

import streamlit as st
from kit import chart, t
from state import nmt as state
from state.alignments import gold_pair, versus_gold
from studios.alignment.common import md
from views.alignment import alignment_figure


def gold(card, trace, src: list[str]):
    """α read on the gold pair and scored, when the sentence comes from the grammar; else None."""
    pair = gold_pair(src, st.session_state.get("nmt-drawn", []))
    if pair is None:
        st.caption(t("alignment.no_gold"))
        return None
    if tuple(trace.outputs["tokens"]) == pair.tgt:
        return versus_gold(trace.maps["alignment"].weights[0, 0], pair, forced=False)
    return versus_gold(state.forced_alignment(card.name, pair.src, pair.tgt), pair, forced=True)


def section(card, trace, src: list[str]):
    amap = trace.maps["alignment"]
    st.header(t("alignment.soft_header"))
    scored = gold(card, trace, src) if card.task == "en-fr" else None
    if scored is None:
        chart(
            alignment_figure(
                amap.weights[0, 0], src, amap.query_labels, flags=amap.flags, title="α_ij"
            ),
            key="nmt-alpha",
        )
        return
    pair = scored.pair
    c1, c2, c3 = st.columns(3)
    c1.metric(t("alignment.aer_possible"), f"{scored.aer:.3f}")
    c2.metric(t("alignment.aer_sure"), f"{scored.aer_sure:.3f}")
    c3.metric(t("alignment.ahead"), len(scored.ahead))
    st.caption(t("alignment.gold_caption", how=scored.how))
    chart(
        alignment_figure(
            scored.alpha,
            pair.src,
            pair.tgt,
            flags=amap.flags,
            sure=pair.sure,
            possible=pair.possible,
            title=t("alignment.gold_title"),
        ),
        key="nmt-gold",
    )
    if scored.ahead:
        looks = (t("alignment.looks_at", t=md(a), s=md(b)) for a, b in scored.ahead)
        st.markdown(t("alignment.anticipation", links="; ".join(looks)))
