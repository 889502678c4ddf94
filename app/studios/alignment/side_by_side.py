"""Section: this sentence through every scoring function, or through several beam widths.

A fragment: switching between the two comparisons redraws this section only.
"""

import streamlit as st
from kit import chart, engine_text, friendly_errors, t, url_index, url_sync
from state import nmt as state
from studios.alignment.common import md
from views.alignment import alignment_figure

BEAMS = (1, 5, 10)


def _panel(trace, src, title: str, key: str):
    a = trace.maps["alignment"]
    chart(
        alignment_figure(a.weights[0, 0], src, a.query_labels, title=title, flags=a.flags),
        key=key,
    )


@st.fragment
def section(card, text: str, beam: int, src: list[str]):
    st.header(t("alignment.section_compare"))
    what = st.segmented_control(
        t("alignment.compare"),
        ["Scoring functions", "Beam widths"],
        default=["Scoring functions", "Beam widths"][
            url_index("compare", ["scoring", "beams"], key="nmt-compare")
        ],
        required=True,
        format_func=lambda s: t(
            "alignment.scoring" if s == "Scoring functions" else "alignment.beams"
        ),
        key="nmt-compare",
    )
    url_sync(compare="beams" if what == "Beam widths" else "scoring")
    with friendly_errors(t("alignment.compare_what")):
        if what == "Beam widths":
            cols = st.columns(len(BEAMS))
            for col, b in zip(cols, BEAMS, strict=True):
                tr = state.translate(card.name, text, b)
                with col:
                    st.markdown(
                        f"**{t('alignment.beam_n', b=b)}** (log p = {tr.outputs['log_prob']:.2f}): "
                        f"{md(tr.outputs['translation'])}"
                    )
                    _panel(tr, src, t("alignment.beam_n", b=b), f"nmt-beam-{b}")
            return
        # Only models with attention have an α to compare.
        others = [c for c in state.cards(card.task) if c.variant != "none"] or [card]
        cols = st.columns(max(1, min(len(others), 3)))
        for k, other in enumerate(others):
            tr = state.translate(other.name, text, beam)
            steps = state.train_record(other.name).get("steps", "?")
            with cols[k % len(cols)]:
                st.markdown(
                    f"**{engine_text(other.title)}** ({t('alignment.training_steps', n=steps)}): "
                    f"{md(tr.outputs['translation'])}"
                )
                _panel(tr, src, other.variant, f"nmt-cmp-{other.name}")
