"""Alignment studio: RNNsearch (Bahdanau, Cho & Bengio 2014) translating, with its soft alignment.

Widgets → one cached translation (a Trace) → one section at a time, each drawn by its own
module. The alignment map is [1, 1, target steps, source words].
"""

import streamlit as st
from kit import (
    answer_heading,
    controls,
    friendly_errors,
    page_bottom,
    page_top,
    url_index,
    url_sync,
)
from kit.reveal import page_toggle
from state import nmt as state
from studios.alignment import head_view, inputs, measured, side_by_side, soft, steps
from studios.alignment.common import md

# The sections' names in a link (a lesson deck's views use the same).
IDS = ["alignment", "steps", "side-by-side", "head-view", "measured"]
SECTIONS = {
    "Alignment": "soft",
    "Step by step": "steps",
    "Side by side": "compare",
    "Head view": "bertviz",
    "Measured": "measured",
}

page_top()
st.title("Alignment (Bahdanau)")
st.caption(
    "RNNsearch (Bahdanau, Cho & Bengio 2014): a bidirectional GRU reads the source; at "
    "every target word the decoder scores each source annotation $h_j$, "
    r"$e_{ij} = v_a^\top \tanh(W_a s_{i-1} + U_a h_j)$, weighs them with "
    r"$\alpha_{ij} = \mathrm{softmax}_j(e_{ij})$ and reads the context "
    r"$c_i = \sum_j \alpha_{ij} h_j$. "
    "Trained here on generated data (English→French with gold alignments, and dates)."
)

with controls():
    task = inputs.choose_task()
    card = inputs.choose_model(task)
    text = inputs.input_text(card)
    beam = st.slider("Beam width (1 = greedy; 1–10)", 1, 10, inputs.beam(), key="nmt-beam")
url_sync(task=task, model=card.name, text=text, beam=beam)

with friendly_errors("the translation"):
    trace = state.translate(card.name, text, beam)
rec = state.train_record(card.name)
src = trace.inputs["tokens"]
answer_heading(trace, md(trace.outputs["translation"]))
if trace.outputs["unknown"]:
    st.warning(
        "Not in the model's vocabulary, read as <unk>: "
        + ", ".join(f"“{md(w)}”" for w in trace.outputs["unknown"])
    )
st.caption(
    f"{card.title} · beam {beam} · {trace.timings['translate_ms']:.0f} ms · trained "
    f"{rec.get('steps', '?')} steps × {rec.get('batch', '?')} sentences "
    f"({rec.get('cpu_s', '?')} s CPU) · `{rec['command']}`"
)

# One section on screen at a time: an edit redraws what is visible, not every figure.
shown = SECTIONS[
    st.segmented_control(
        "Show",
        list(SECTIONS),
        default=list(SECTIONS)[url_index("section", IDS, key="nmt-section")],
        required=True,
        key="nmt-section",
    )
    or "Alignment"
]
url_sync(section=IDS[list(SECTIONS.values()).index(shown)])
page_toggle("alignment", trace.maps.get("alignment"), when=shown != "measured")
if shown == "measured":
    measured.section(card)
elif "alignment" not in trace.maps:
    st.info(
        "The RNNencdec baseline has no alignment: every target word is produced from the "
        "same fixed vector c = [h→_T ; h←_1]. Pick an attention model to see α."
    )
elif shown == "soft":
    soft.section(card, trace, src)
elif shown == "steps":
    steps.section(card, trace, src)
elif shown == "compare":
    side_by_side.section(card, text, beam, src)
else:
    head_view.section(trace, src)

page_bottom(f"alignment-{card.name}", trace)
