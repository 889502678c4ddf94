"""Variants lab: every efficient attention variant on the same input, side by side."""

import streamlit as st
from kit import friendly_errors, page_bottom, page_top, t, url_choice
from studios.variants import (
    section_compare,
    section_int8,
    section_kv,
    section_long,
    section_profile,
    section_quality,
    section_swap,
)

from engine import kernels

# Each section's own parameters: a link's values belong to the section it was copied on.
PARAMS = (
    "source",
    "causal",
    "n",
    "structure",
    "sharpness",
    "seed",
    "heads",
    "d",
    "text",
    "variants",
    "head",
    "view",
    "pool",
    "layer",
    "qhead",
    "task",
    "cost",
)
# Section identities (the widget's state) → (body, its name in variants.toml and links).
SECTIONS = {
    "Compare": (section_compare.show, "compare"),
    "Quality": (section_quality.show, "quality"),
    "MiniLM swap": (section_swap.show, "swap"),
    "Cost profile": (section_profile.show, "profile"),
    "Long sequences": (section_long.show, "long"),
    "KV cache": (section_kv.show, "kv"),
    "INT8": (section_int8.show, "int8"),
}

page_top()
st.title(t("variants.title"))
st.caption(t("variants.caption"))
st.caption(t("variants.kernel_path", path=kernels.active_path(kernels.default_device())))
# One section at a time, so a page load computes only what is on screen.
section = url_choice(
    st.segmented_control,
    "section",
    t("variants.section"),
    list(SECTIONS),
    ids=[name for _, name in SECTIONS.values()],
    key="variants-section",
    resets=PARAMS,
    format_func=lambda s: t(f"variants.section_{SECTIONS[s][1]}"),
)
body, name = SECTIONS[section]
with friendly_errors(t(f"variants.what_{name}")):
    body()
page_bottom(f"variants-{name}")
