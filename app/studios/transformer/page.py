"""Transformer studio: our encoder–decoder trained here, and pretrained HuggingFace models.

Widgets → one cached Trace → the section on screen. Every map is [layer, head, query, key].
"""

import streamlit as st
from kit import (
    controls,
    flag,
    friendly_errors,
    page_bottom,
    page_top,
    url_choice,
    url_default,
    url_sync,
)
from kit.reveal import page_toggle
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
FAMILIES = ["ours", "pretrained"]
READING_IDS = ["heads", "mean", "rollout"]
SECTION_IDS = ["grid", "bertviz", "neuron", "qk"]
SECTIONS = {
    "Layers × heads": section_heads.show,
    "bertviz": section_bertviz.show,
    "Neuron view": section_neuron.show,
    "Query–key map (AttentionViz)": section_qk.show,
}

page_top()
st.title("Transformer")
st.caption(
    "Vaswani et al. 2017: multi-head self- and cross-attention, layer by layer and head "
    "by head, in a small encoder–decoder we trained here and in pretrained models "
    "loaded from local files (never downloaded)."
)
state.umap_warm_up()

with controls():
    linked = st.query_params.get("family", "ours")
    source = url_choice(
        st.radio,
        "family",
        "Model family",
        [OURS, PRETRAINED],
        key="family",
        ids=FAMILIES,
        horizontal=True,
    )
    if linked != FAMILIES[[OURS, PRETRAINED].index(source)]:  # the link's model was the other's
        url_sync(model=None, text=None, example=None)
    trace, sinks = model_pickers.ours() if source == OURS else model_pickers.pretrained()

    c1, c2 = st.columns([2, 3])
    kind = url_choice(
        c1.selectbox,
        "attention",
        "Attention",
        list(trace.maps),
        key="attention",
        format_func=KIND_NAMES.get,
    )
    readings = state.READINGS if kind != "cross" else state.READINGS[:2]
    reading = url_choice(
        c2.radio,
        "reading",
        "Read the heads",
        readings,
        key="reading",
        ids=READING_IDS[: len(readings)],
        horizontal=True,
        help="Rollout multiplies (½·mean-over-heads + ½·I) over layers; it needs self-attention.",
    )
    c3, c4 = st.columns(2)
    merge = c3.toggle(
        "Merge word pieces into words",
        url_default("merge", False, flag, key="merge"),
        key="merge",
        help="to a word: sum over its pieces; from a word: mean over its pieces "
        "(rows still sum to 1)",
    )
    hide = c4.toggle(
        f"Hide {' / '.join(sinks)} attention sinks",
        url_default("hide", False, flag, key="hide"),
        key="hide",
        help="drops those rows and columns and renormalises each row",
    )
    url_sync(merge=merge, hide=hide)
with friendly_errors("reading the heads"):
    amap = state.read_heads(trace.maps[kind], reading, merge, hide, sinks)


# A section change reruns only this part: the model, its Trace and the map stay.
@st.fragment
def sections(shown: model_pickers.Shown) -> None:
    # One section on screen at a time: an edit redraws only what is visible.
    names = list(SECTIONS)
    section = url_choice(
        st.segmented_control,
        "section",
        "Section",
        names,
        key="transformer-section",
        ids=SECTION_IDS,
    )
    SECTIONS[section](shown)


page_toggle("transformer", amap)
sections(model_pickers.Shown(trace, kind, KIND_NAMES[kind], amap, merge, hide, tuple(sinks)))
page_bottom(f"transformer-{trace.model}", trace)
