"""Variants lab: every efficient attention variant on the same input, side by side."""

import streamlit as st
from kit import friendly_errors
from studios.variants import (
    section_compare,
    section_int8,
    section_kv,
    section_long,
    section_profile,
)

from engine import kernels

SECTIONS = {
    "Compare": (section_compare.show, "the comparison"),
    "Cost profile": (section_profile.show, "the cost profile"),
    "Long sequences": (section_long.show, "the long-sequence map"),
    "KV cache": (section_kv.show, "the KV-cache run"),
    "INT8": (section_int8.show, "the INT8 comparison"),
}

st.title("⚡ Variants lab")
st.caption(
    "Efficient attention variants on one input: their maps, how far each is from full "
    "attention, what each can see, and what each costs — all measured here."
)
st.caption(
    f"Kernel path on this machine: **{kernels.active_path(kernels.default_device())}** "
    "(Triton runs only on a CUDA GPU)."
)
# One section at a time, so a page load computes only what is on screen.
section = (
    st.segmented_control("Section", list(SECTIONS), default="Compare", key="variants-section")
    or "Compare"
)
body, what = SECTIONS[section]
with friendly_errors(what):
    body()
