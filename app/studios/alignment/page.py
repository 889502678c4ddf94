"""Alignment studio: RNNsearch (Bahdanau, Cho & Bengio 2014) translating, with its soft alignment.

Widgets → one cached translation (a Trace) → one section at a time, each drawn by its own
module. The alignment map is [1, 1, target steps, source words].
"""

import streamlit as st
from kit import (
    answer_heading,
    controls,
    engine_text,
    friendly_errors,
    page_bottom,
    page_top,
    t,
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
st.title(t("alignment.title"))
st.caption(t("alignment.caption"))

with controls():
    task = inputs.choose_task()
    card = inputs.choose_model(task)
    text = inputs.input_text(card)
    beam = st.slider(t("alignment.beam"), 1, 10, inputs.beam(), key="nmt-beam")
url_sync(task=task, model=card.name, text=text, beam=beam)

with friendly_errors(t("alignment.what")):
    trace = state.translate(card.name, text, beam)
rec = state.train_record(card.name)
src = trace.inputs["tokens"]
answer_heading(trace, md(trace.outputs["translation"]))
if trace.outputs["unknown"]:
    st.warning(
        t("alignment.unknown", words=", ".join(f"“{md(w)}”" for w in trace.outputs["unknown"]))
    )
st.caption(
    t(
        "alignment.summary",
        title=engine_text(card.title),
        beam=beam,
        ms=f"{trace.timings['translate_ms']:.0f}",
        steps=rec.get("steps", "?"),
        batch=rec.get("batch", "?"),
        cpu=rec.get("cpu_s", "?"),
        command=rec["command"],
    )
)

# One section on screen at a time: an edit redraws what is visible, not every figure.
shown = SECTIONS[
    st.segmented_control(
        t("alignment.show"),
        list(SECTIONS),
        default=list(SECTIONS)[url_index("section", IDS, key="nmt-section")],
        format_func=lambda s: t(f"alignment.section_{SECTIONS[s]}"),
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
    st.info(t("alignment.no_alignment"))
elif shown == "soft":
    soft.section(card, trace, src)
elif shown == "steps":
    steps.section(card, trace, src)
elif shown == "compare":
    side_by_side.section(card, text, beam, src)
else:
    head_view.section(trace, src)

page_bottom(f"alignment-{card.name}", trace)
