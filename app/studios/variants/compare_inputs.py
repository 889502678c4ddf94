"""The Compare section's inputs: synthetic Q/K/V, a text, or a date through the trained model."""

from __future__ import annotations

import streamlit as st
from kit import t
from state import variants as state

# Options keep English identities (widget state, tests); each is shown through t().
SYNTHETIC, TEXT = "Synthetic Q/K/V", "Text through a seeded random layer"
TRAINED = "A date through the trained Transformer"
SOURCE_KEYS = {SYNTHETIC: "synthetic", TEXT: "text", TRAINED: "trained"}


def param_widgets(variant, n: int, source: str) -> dict:
    """One widget per hyper-parameter, its limits in the label."""
    values = {}
    for p in variant.params:
        key = f"hp-{source}-{variant.name}-{p.name}"  # per input: defaults fit its length
        label = f"{variant.title}: {p.label} ({p.limits})"
        if p.choices:
            values[p.name] = st.selectbox(label, p.choices, key=key, help=p.help or None)
        else:
            default = min(p.default, max(int(p.low), n))  # short inputs: defaults that fit
            values[p.name] = st.number_input(
                label, value=default, step=1, key=key, help=p.help or None
            )
    return values


def source_widgets() -> dict:
    """The chosen input as keyword arguments of ``state.compare`` (names and params aside)."""
    from engine.text import tokenize
    from engine.variants import compare, inputs

    sources = [SYNTHETIC, TEXT] + ([TRAINED] if state.trained_available() else [])
    source = st.radio(
        t("variants.input"),
        sources,
        horizontal=True,
        format_func=lambda s: t(f"variants.source_{SOURCE_KEYS[s]}"),
        key="var-source",
    )
    causal = st.checkbox(t("variants.causal"), help=t("variants.causal_help"), key="var-causal")
    synthetic, text, heads, d = (0, "clustered", 1.0, 0), "", 2, 32
    if source == TRAINED:
        limit = state.trained_max_length()
        text = st.text_input(t("variants.date", n=limit), "12 March 2021", key="var-date")
        st.caption(t("variants.date_caption", name=state.TRAINED_CHECKPOINT))
        n = max(1, len(text))
    elif source == TEXT:
        c1, c2 = st.columns(2)
        heads = c1.number_input(t("variants.heads"), 1, 8, 2, key="var-text-heads")
        d = c2.number_input(t("variants.head_size"), 8, 128, 32, key="var-text-d")
        text = st.text_area(
            t("variants.text", n=inputs.TEXT_TOKEN_LIMIT),
            "The quick brown fox jumps over the lazy dog because the dog "
            "was too lazy to chase the quick brown fox .",
            key="var-text",
        )
        st.caption(t("variants.text_caption"))
        n = max(1, len(tokenize(text)))
    else:
        s1, s2, s3, s4, s5, s6 = st.columns(6)
        lo, hi = inputs.LENGTH_LIMITS
        n = s1.number_input(
            f"n ({lo} … {compare.MAX_COMPARE_N})", lo, compare.MAX_COMPARE_N, 128, 16, key="var-n"
        )
        structure = s2.selectbox(
            t("variants.structure"),
            inputs.STRUCTURES,
            2,
            format_func=lambda s: t(f"variants.structure_{s}"),
            key="var-structure",
        )
        sharpness = s3.slider(t("variants.sharpness"), 0.1, 8.0, 1.0, key="var-sharpness")
        seed = s4.number_input(t("variants.seed"), 0, 9999, 0, key="var-seed")
        heads = s5.number_input(t("variants.heads"), 1, 8, 2, key="var-heads")
        d = s6.number_input(t("variants.head_size"), 8, 128, 32, key="var-d")
        synthetic = (int(n), structure, float(sharpness), int(seed))
    return dict(
        source=SOURCE_KEYS[source],
        text=text,
        synthetic=synthetic,
        causal=bool(causal),
        heads=int(heads),
        d=int(d),
        n_for_defaults=int(n),
    )
