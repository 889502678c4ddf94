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
    t,
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

# Options keep English identities (widget state, tests); each is shown through t().
OURS, PRETRAINED = "Our Transformer (trained here)", "Pretrained (HuggingFace, local files)"
KINDS = ("encoder_self", "decoder_self", "cross")
FAMILIES = ["ours", "pretrained"]
READING_IDS = ["heads", "mean", "rollout"]
# The sections' names in a link (a lesson deck's views use "grid" too).
SECTION_IDS = ["grid", "bertviz", "neuron", "qk"]
SECTIONS = {
    "Layers × heads": ("heads", section_heads.show),
    "bertviz": ("bertviz", section_bertviz.show),
    "Neuron view": ("neuron", section_neuron.show),
    "Query–key map (AttentionViz)": ("qk", section_qk.show),
}


def kind_name(kind: str) -> str:
    return t(f"transformer.kind_{kind}") if kind in KINDS else kind


page_top()
st.title(t("transformer.title"))
st.caption(t("transformer.caption"))
state.umap_warm_up()

with controls():
    linked = st.query_params.get("family", "ours")
    family = lambda s: t("transformer.ours" if s == OURS else "transformer.pretrained")  # noqa: E731
    source = url_choice(
        st.radio,
        "family",
        t("transformer.family"),
        [OURS, PRETRAINED],
        key="family",
        ids=FAMILIES,
        horizontal=True,
        format_func=family,
    )
    if linked != FAMILIES[[OURS, PRETRAINED].index(source)]:  # the link's model was the other's
        url_sync(model=None, text=None, example=None)
    trace, sinks = model_pickers.ours() if source == OURS else model_pickers.pretrained()

    c1, c2 = st.columns([2, 3])
    kind = url_choice(
        c1.selectbox,
        "attention",
        t("transformer.attention"),
        list(trace.maps),
        key="attention",
        format_func=kind_name,
    )
    readings = state.READINGS if kind != "cross" else state.READINGS[:2]
    reading = url_choice(
        c2.radio,
        "reading",
        t("transformer.read_heads"),
        readings,
        key="reading",
        ids=READING_IDS[: len(readings)],
        horizontal=True,
        format_func=lambda r: t(f"transformer.reading{state.READINGS.index(r)}"),
        help=t("transformer.read_heads_help"),
    )
    c3, c4 = st.columns(2)
    merge = c3.toggle(
        t("transformer.merge"),
        url_default("merge", False, flag, key="merge"),
        help=t("transformer.merge_help"),
        key="merge",
    )
    hide = c4.toggle(
        t("transformer.hide", sinks=" / ".join(sinks)),
        url_default("hide", False, flag, key="hide-sinks"),
        help=t("transformer.hide_help"),
        key="hide-sinks",
    )
    url_sync(merge=merge, hide=hide)
with friendly_errors(t("transformer.reading_what")):
    amap = state.read_heads(trace.maps[kind], reading, merge, hide, sinks)


# A section change reruns only this part: the model, its Trace and the map stay.
@st.fragment
def sections(shown: model_pickers.Shown) -> None:
    # One section on screen at a time: an edit redraws only what is visible.
    names = list(SECTIONS)
    section = url_choice(
        st.segmented_control,
        "section",
        t("transformer.section"),
        names,
        key="transformer-section",
        ids=SECTION_IDS,
        format_func=lambda s: t(f"transformer.section_{SECTIONS[s][0]}"),
    )
    SECTIONS[section or names[0]][1](shown)


page_toggle("transformer", amap)
sections(model_pickers.Shown(trace, kind, kind_name(kind), amap, merge, hide, tuple(sinks)))
page_bottom(f"transformer-{trace.model}", trace)
