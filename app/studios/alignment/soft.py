"""Section: the soft alignment α_ij, with the grammar's gold links and the AER when it has them."""

import streamlit as st
from state import nmt as state
from state.alignments import gold_pair, versus_gold
from studios.alignment.common import md
from views.alignment import alignment_figure


def gold(card, trace, src: list[str]):
    """α read on the gold pair and scored, when the sentence comes from the grammar; else None."""
    pair = gold_pair(src, st.session_state.get("nmt-drawn", []))
    if pair is None:
        st.caption(
            "No gold alignment for this sentence: pick an example or draw a sentence "
            "from the grammar to see the gold links and the AER."
        )
        return None
    if tuple(trace.outputs["tokens"]) == pair.tgt:
        return versus_gold(trace.maps["alignment"].weights[0, 0], pair, forced=False)
    return versus_gold(state.forced_alignment(card.name, pair.src, pair.tgt), pair, forced=True)


def section(card, trace, src: list[str]):
    amap = trace.maps["alignment"]
    st.header("Soft alignment α_ij")
    scored = gold(card, trace, src) if card.task == "en-fr" else None
    if scored is None:
        st.plotly_chart(
            alignment_figure(
                amap.weights[0, 0], src, amap.query_labels, flags=amap.flags, title="α_ij"
            ),
            key="nmt-alpha",
        )
        return
    pair = scored.pair
    c1, c2, c3 = st.columns(3)
    c1.metric("AER (argmax vs sure + possible)", f"{scored.aer:.3f}")
    c2.metric("AER (argmax vs sure only)", f"{scored.aer_sure:.3f}")
    c3.metric("target words looking ahead to an agreement noun", len(scored.ahead))
    st.caption(
        f"Gold links from the grammar: {scored.how}. Och & Ney's AER = 1 − (|A∩S| + |A∩P|) / "
        "(|A| + |S|) with A = argmax of each row of α."
    )
    if scored.ahead:
        st.markdown(
            "**Anticipation, not an error of translation:** "
            + "; ".join(f"“{md(t)}” looks most at “{md(s)}”" for t, s in scored.ahead)
            + ". A French determiner or adjective must agree in gender and number with "
            "its noun, so while emitting it the decoder attends to that noun. The "
            "grammar marks these as *possible* links, so the first AER forgives them "
            "and the sure-only AER counts them."
        )
    st.plotly_chart(
        alignment_figure(
            scored.alpha,
            pair.src,
            pair.tgt,
            flags=amap.flags,
            sure=pair.sure,
            possible=pair.possible,
            title="α_ij with the grammar's gold links",
        ),
        key="nmt-gold",
    )
