"""Transformer studio: our encoder–decoder trained here, and pretrained HuggingFace models.

Widgets → one cached Trace → the section on screen. Every map is [layer, head, query, key].
"""

import streamlit as st
from kit import export_buttons, friendly_errors, t
from kit.reveal import page_toggle
from state import transformer as state
from studios.transformer import (
    model_pickers,
    section_bertviz,
    section_heads,
    section_neuron,
    section_qk,
)

# Options keep English identities (widget state, tests); each is shown through t().
OURS, PRETRAINED = "Our Transformer (trained here)", "Pretrained (HuggingFace, local files)"
KINDS = ("encoder_self", "decoder_self", "cross")
SECTIONS = {
    "Layers × heads": ("heads", section_heads.show),
    "bertviz": ("bertviz", section_bertviz.show),
    "Neuron view": ("neuron", section_neuron.show),
    "Query–key map (AttentionViz)": ("qk", section_qk.show),
}


def kind_name(kind: str) -> str:
    return t(f"transformer.kind_{kind}") if kind in KINDS else kind


st.title(t("transformer.title"))
st.caption(t("transformer.caption"))
state.umap_warm_up()

source = st.radio(
    t("transformer.family"),
    [OURS, PRETRAINED],
    horizontal=True,
    format_func=lambda s: t("transformer.ours" if s == OURS else "transformer.pretrained"),
    key="family",
)
trace, sinks = model_pickers.ours() if source == OURS else model_pickers.pretrained()

c1, c2 = st.columns([2, 3])
kind = c1.selectbox(
    t("transformer.attention"), list(trace.maps), format_func=kind_name, key="attention"
)
reading = c2.radio(
    t("transformer.read_heads"),
    state.READINGS if kind != "cross" else state.READINGS[:2],
    horizontal=True,
    format_func=lambda r: t(f"transformer.reading{state.READINGS.index(r)}"),
    help=t("transformer.read_heads_help"),
    key="reading",
)
c3, c4 = st.columns(2)
merge = c3.toggle(t("transformer.merge"), help=t("transformer.merge_help"), key="merge")
hide = c4.toggle(
    t("transformer.hide", sinks=" / ".join(sinks)),
    help=t("transformer.hide_help"),
    key="hide-sinks",
)
with friendly_errors(t("transformer.reading_what")):
    amap = state.read_heads(trace.maps[kind], reading, merge, hide, sinks)


# A section change reruns only this part: the model, its Trace and the map stay.
@st.fragment
def sections(shown: model_pickers.Shown) -> None:
    # One section on screen at a time: an edit redraws only what is visible.
    names = list(SECTIONS)
    section = st.segmented_control(
        t("transformer.section"),
        names,
        default=names[0],
        format_func=lambda s: t(f"transformer.section_{SECTIONS[s][0]}"),
        key="transformer-section",
    )
    SECTIONS[section or names[0]][1](shown)


page_toggle("transformer", amap)
sections(model_pickers.Shown(trace, kind, kind_name(kind), amap, merge, hide, tuple(sinks)))
export_buttons(trace, f"transformer-{trace.model}")
