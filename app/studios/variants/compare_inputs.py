"""The Compare section's inputs: synthetic Q/K/V, a text, or a date through the trained model."""

from __future__ import annotations

import streamlit as st
from state import variants as state

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
    source = st.radio("Input", sources, horizontal=True)
    causal = st.checkbox("causal", help="Performer and Linformer are bidirectional here")
    synthetic, text, heads, d = (0, "clustered", 1.0, 0), "", 2, 32
    if source == TRAINED:
        limit = state.trained_max_length()
        text = st.text_input(
            f"A date, as you would write it (at most {limit} characters)", "12 March 2021"
        )
        st.caption(
            "Q, K, V are the first encoder layer's of the trained dates Transformer "
            f"({state.TRAINED_CHECKPOINT}). Each variant also replaces the self-attention of "
            "every encoder layer; the table shows the translation it then produces."
        )
        n = max(1, len(text))
    elif source == TEXT:
        c1, c2 = st.columns(2)
        heads = c1.number_input("heads (1 … 8)", 1, 8, 2)
        d = c2.number_input("head size d (8 … 128)", 8, 128, 32)
        text = st.text_area(
            f"Text (at most {inputs.TEXT_TOKEN_LIMIT} tokens)",
            "The quick brown fox jumps over the lazy dog because the dog "
            "was too lazy to chase the quick brown fox .",
        )
        st.caption(
            f"Q, K and V come from a {inputs.TEXT_LABEL}: word vectors seeded by the "
            "word, plus sinusoidal positions, through seeded W_Q, W_K, W_V."
        )
        n = max(1, len(tokenize(text)))
    else:
        s1, s2, s3, s4, s5, s6 = st.columns(6)
        lo, hi = inputs.LENGTH_LIMITS
        n = s1.number_input(
            f"n ({lo} … {compare.MAX_COMPARE_N})", lo, compare.MAX_COMPARE_N, 128, step=16
        )
        structure = s2.selectbox("structure", inputs.STRUCTURES, index=2)
        sharpness = s3.slider("sharpness (0.1 … 8)", 0.1, 8.0, 1.0)
        seed = s4.number_input("seed (0 … 9999)", 0, 9999, 0)
        heads = s5.number_input("heads (1 … 8)", 1, 8, 2)
        d = s6.number_input("head size d (8 … 128)", 8, 128, 32)
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
