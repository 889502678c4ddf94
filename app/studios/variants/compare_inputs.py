"""The Compare section's inputs: synthetic Q/K/V, a text, or a date through the trained model."""

from __future__ import annotations

import streamlit as st
from kit import flag, t, url_choice, url_default, url_number, url_sync
from kit.i18n import param_help, variant_param_label, variant_title
from state import variants as state
from studios.variants.compare_sources import minilm_widgets, npz_widgets

# Options keep English identities (widget state, tests); each is shown through t().
SYNTHETIC, TEXT = "Synthetic Q/K/V", "Text through a seeded random layer"
TRAINED = "A date through the trained Transformer"
MINILM = "Q/K/V of MiniLM layer L, head H for your text"
NPZ = "Upload Q/K/V (NPZ)"
EXAMPLE = (
    "The quick brown fox jumps over the lazy dog because the dog "
    "was too lazy to chase the quick brown fox ."
)
SOURCE_KEYS = {
    MINILM: "minilm",
    SYNTHETIC: "synthetic",
    TEXT: "text",
    TRAINED: "trained",
    NPZ: "npz",
}


def param_widgets(variant, n: int, source: str, defaults: dict | None = None) -> dict:
    """One widget per hyper-parameter, its limits in the label; ``defaults`` override."""
    values = {}
    for p in variant.params:
        key = f"hp-{source}-{variant.name}-{p.name}"  # per input: defaults fit its length
        label = variant_param_label(variant, p)
        if p.choices:
            values[p.name] = st.selectbox(
                label, p.choices, key=key, help=param_help(p, variant) or None
            )
        else:
            default = min(p.default, max(int(p.low), n))  # short inputs: defaults that fit
            default = (defaults or {}).get(p.name, default)  # already sized for n
            values[p.name] = st.number_input(
                label, value=default, step=1, key=key, help=param_help(p, variant) or None
            )
    return values


def source_widgets() -> dict | None:
    """The chosen input as keyword arguments of ``state.compare`` (names and params aside),
    with ``n_for_defaults`` and ``defaults`` (budgets) for the hyper-parameters; None while
    an upload is awaited."""
    from engine.text import tokenize
    from engine.variants import compare, inputs

    trained = [TRAINED] if state.trained_available() else []
    sources = [MINILM, SYNTHETIC, TEXT, *trained, NPZ]
    ids = [SOURCE_KEYS[s] for s in sources]
    source = url_choice(
        st.radio,
        "source",
        t("variants.input"),
        sources,
        ids=ids,
        key="var-source",
        horizontal=True,
        format_func=lambda s: t(f"variants.source_{SOURCE_KEYS[s]}"),
    )
    causal = st.checkbox(
        t("variants.causal"),
        url_default("causal", False, flag, key="var-causal"),
        key="var-causal",
        help=t("variants.causal_help"),
    )
    url_sync(causal=causal)
    synthetic, text, heads, d = (0, "clustered", 1.0, 0), "", 2, 32
    common = dict(source=SOURCE_KEYS[source], causal=bool(causal), synthetic=synthetic)
    if source == MINILM:
        return {**common, **minilm_widgets(EXAMPLE), "d": d}
    if source == NPZ:
        got = npz_widgets()
        return None if got is None else {**common, **got, "text": "", "heads": heads, "d": d}
    if source == TRAINED:
        limit = state.trained_max_length()
        text = st.text_input(t("variants.date", n=limit), "12 March 2021", key="var-date")
        st.caption(t("variants.date_caption", name=state.TRAINED_CHECKPOINT))
        n = max(1, len(text))
    elif source == TEXT:
        c1, c2 = st.columns(2)
        heads = url_number(
            c1.number_input, "heads", t("variants.heads"), 1, 8, 2, key="var-text-heads"
        )
        d = url_number(c2.number_input, "d", t("variants.head_size"), 8, 128, 32, key="var-text-d")
        text = st.text_area(
            t("variants.text", n=inputs.TEXT_TOKEN_LIMIT),
            url_default("text", EXAMPLE, key="var-text"),
            key="var-text",
        )
        url_sync(text=text)
        st.caption(t("variants.text_caption"))
        n = max(1, len(tokenize(text)))
    else:
        s1, s2, s3, s4, s5, s6 = st.columns(6)
        lo, hi = inputs.LENGTH_LIMITS
        top = compare.MAX_COMPARE_N
        n = url_number(
            s1.number_input, "n", f"n ({lo} … {top})", lo, top, 128, key="var-n", step=16
        )
        structure = url_choice(
            s2.selectbox,
            "structure",
            t("variants.structure"),
            inputs.STRUCTURES,
            default=2,
            key="var-structure",
            format_func=lambda s: t(f"variants.structure_{s}"),
        )
        label = t("variants.sharpness")
        sharpness = url_number(
            s3.slider, "sharpness", label, 0.1, 8.0, 1.0, key="var-sharpness", cast=float
        )
        seed = url_number(s4.number_input, "seed", t("variants.seed"), 0, 9999, 0, key="var-seed")
        heads = url_number(s5.number_input, "heads", t("variants.heads"), 1, 8, 2, key="var-heads")
        d = url_number(s6.number_input, "d", t("variants.head_size"), 8, 128, 32, key="var-d")
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


def pick_variants(names: list[str], default, parse, key: str) -> list[str]:
    """A multiselect of registry variants by title, its choice kept in ``?variants=``."""
    from engine.variants.registry import REGISTRY

    linked = url_default("variants", default, parse, key=key, choices=names)
    picked = st.multiselect(
        t("variants.variants"),
        names,
        linked,
        format_func=lambda v: variant_title(REGISTRY[v]),
        key=key,
    )
    url_sync(variants=picked)
    return picked
