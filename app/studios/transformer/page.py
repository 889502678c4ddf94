"""Transformer studio: our encoder–decoder trained here, and pretrained HuggingFace models.

Widgets → one cached Trace → the section on screen. Every map is [layer, head, query, key].
"""

import streamlit as st
from kit import export_buttons, friendly_errors
from state import transformer as state
from studios.transformer import (
    model_pickers,
    section_bertviz,
    section_heads,
    section_neuron,
    section_qk,
)

OURS, PRETRAINED = "Our Transformer (trained here)", "Pretrained (HuggingFace, local files)"
KIND_NAMES = {
    "encoder_self": "encoder self-attention",
    "decoder_self": "decoder self-attention",
    "cross": "cross-attention (decoder → encoder)",
}
SECTIONS = {
    "Layers × heads": section_heads.show,
    "bertviz": section_bertviz.show,
    "Neuron view": section_neuron.show,
    "Query–key map (AttentionViz)": section_qk.show,
}

st.title("Transformer")
st.caption(
    "Vaswani et al. 2017: multi-head self- and cross-attention, layer by layer and head "
    "by head, in a small encoder–decoder we trained here and in pretrained models "
    "loaded from local files (never downloaded)."
)
state.umap_warm_up()

source = st.radio("Model family", [OURS, PRETRAINED], horizontal=True, key="family")
trace, sinks = model_pickers.ours() if source == OURS else model_pickers.pretrained()

c1, c2 = st.columns([2, 3])
kind = c1.selectbox("Attention", list(trace.maps), format_func=KIND_NAMES.get, key="attention")
reading = c2.radio(
    "Read the heads",
    state.READINGS if kind != "cross" else state.READINGS[:2],
    horizontal=True,
    help="Rollout multiplies (½·mean-over-heads + ½·I) over layers; it needs self-attention.",
)
c3, c4 = st.columns(2)
merge = c3.toggle(
    "Merge word pieces into words",
    help="to a word: sum over its pieces; from a word: mean over its pieces (rows still sum to 1)",
)
hide = c4.toggle(
    f"Hide {' / '.join(sinks)} attention sinks",
    help="drops those rows and columns and renormalises each row",
)
with friendly_errors("reading the heads"):
    amap = state.read_heads(trace.maps[kind], reading, merge, hide, sinks)


# A section change reruns only this part: the model, its Trace and the map stay.
@st.fragment
def sections(shown: model_pickers.Shown) -> None:
    # One section on screen at a time: an edit redraws only what is visible.
    names = list(SECTIONS)
    section = (
        st.segmented_control("Section", names, default=names[0], key="transformer-section")
        or names[0]
    )
    SECTIONS[section](shown)


sections(model_pickers.Shown(trace, kind, KIND_NAMES[kind], amap, merge, hide, tuple(sinks)))
export_buttons(trace, f"transformer-{trace.model}")
