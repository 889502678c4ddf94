"""Section: this sentence through every scoring function, or through several beam widths.

A fragment: switching between the two comparisons redraws this section only.
"""

import streamlit as st
from kit import friendly_errors
from state import nmt as state
from studios.alignment.common import md
from views.alignment import alignment_figure

BEAMS = (1, 5, 10)


def _panel(trace, src, title: str, key: str):
    a = trace.maps["alignment"]
    st.plotly_chart(
        alignment_figure(a.weights[0, 0], src, a.query_labels, title=title, flags=a.flags),
        key=key,
    )


@st.fragment
def section(card, text: str, beam: int, src: list[str]):
    st.header("Side by side")
    what = st.segmented_control(
        "Compare",
        ["Scoring functions", "Beam widths"],
        default="Scoring functions",
        required=True,
        key="nmt-compare",
    )
    with friendly_errors("the comparison"):
        if what == "Beam widths":
            cols = st.columns(len(BEAMS))
            for col, b in zip(cols, BEAMS, strict=True):
                t = state.translate(card.name, text, b)
                with col:
                    st.markdown(
                        f"**beam {b}** (log p = {t.outputs['log_prob']:.2f}): "
                        f"{md(t.outputs['translation'])}"
                    )
                    _panel(t, src, f"beam {b}", f"nmt-beam-{b}")
            return
        # Only models with attention have an α to compare.
        others = [c for c in state.cards(card.task) if c.variant != "none"] or [card]
        cols = st.columns(max(1, min(len(others), 3)))
        for k, other in enumerate(others):
            t = state.translate(other.name, text, beam)
            steps = state.train_record(other.name).get("steps", "?")
            with cols[k % len(cols)]:
                st.markdown(
                    f"**{other.title}** ({steps} training steps): {md(t.outputs['translation'])}"
                )
                _panel(t, src, other.variant, f"nmt-cmp-{other.name}")
