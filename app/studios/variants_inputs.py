"""The Variants lab's inputs: where Q/K/V come from, which variants run, their budgets.

Each source is a function returning keyword arguments of ``state.compare`` (names and
params aside) with ``n_for_defaults`` and, where the budgets depend on the input,
``defaults``; an upload not yet given, or a text over its limits, returns None.
"""

from __future__ import annotations

import streamlit as st
from kit import engine_text, flag, t, url_choice, url_default, url_number, url_sync
from kit.i18n import param_help, variant_param_label, variant_title
from kit.knobs import Knobs
from kit.textbox import char_gate, gated_text, subword_gate, word_gate
from kit.url import url_multiselect, url_text
from state import variants as state

from engine.models import in_pretrained
from engine.text import tokenize
from engine.variants import REGISTRY, compare, inputs

# The ranges the engine's inputs take (each label states its widget's range)
HEAD_SIZE, HEADS = inputs.HEAD_DIM_LIMITS, inputs.HEADS_LIMITS
SHARPNESS = inputs.SHARPNESS_LIMITS
SEED_MAX = 9999
EXAMPLE = (
    "The quick brown fox jumps over the lazy dog because the dog "
    "was too lazy to chase the quick brown fox ."
)


def param_widgets(variant, n: int, source: str, knobs: Knobs, defaults: dict | None = None):
    """One widget per hyper-parameter, its limits in the label; ``defaults`` override, and
    a link's values (``knobs``, ``?hp=``) override those once."""
    values = {}
    for p in variant.params:
        key = f"hp-{source}-{variant.name}-{p.name}"  # per input: defaults fit its length
        label, help = variant_param_label(variant, p), param_help(p, variant) or None
        name = f"{variant.name}.{p.name}"
        if p.choices:
            values[p.name] = knobs.choice(name, p, label, key=key, help=help)
            continue
        kind = type(p.default)  # Streamlit refuses a float value with an int step
        default = min(p.default, max(int(p.low), n))  # short inputs: defaults that fit
        default = kind((defaults or {}).get(p.name, default))  # already sized for n
        first = knobs.first(name, p, default, key)
        step = 1 if kind is int else None
        value = st.number_input(label, value=first, step=step, key=key, help=help)
        knobs.chose(name, value, default)
        values[p.name] = value
    return values


def pick_variants(names: list[str], default, parse, key: str) -> list[str]:
    """A multiselect of registry variants by title, its choice kept in ``?variants=``."""
    kw = dict(key=key, cast=parse, format_func=lambda v: variant_title(REGISTRY[v]))
    return url_multiselect("variants", t("variants.variants"), names, default, **kw)


def minilm() -> dict | None:
    """Text, layer and head: Q/K/V as the pretrained model computes them (one head)."""

    c1, c2 = st.columns(2)
    config = state.minilm_config()
    last_layer, last_head = config["n_layers"] - 1, config["n_heads"] - 1
    label = t("variants.layer", last=last_layer)
    layer = url_number(c1.number_input, "layer", label, 0, last_layer, 2, key="var-layer")
    label = t("variants.qkv_head", last=last_head)
    head = url_number(c2.number_input, "qhead", label, 0, last_head, 0, key="var-qhead")
    label = t("variants.swap_text", n=state.SWAP_MAX_TOKENS)
    gate = subword_gate(state.minilm().tokenizer, state.SWAP_MAX_TOKENS)
    text = url_text(st.text_area, label, EXAMPLE, key="var-mtext", **gate)
    if text is None:
        return None  # over the limit: the box has said so and offered the cut
    n = max(state.swap_tokens(text), 1)
    st.caption(t("variants.minilm_caption"))
    defaults = in_pretrained.default_budgets(n)
    return dict(text=text, layer=int(layer), heads=int(head), n_for_defaults=n, defaults=defaults)


def npz() -> dict | None:
    """An uploaded q, k, v file, checked before anything runs; None until one is given."""

    limits = t(
        "variants.npz_limits",
        n=inputs.NPZ_MAX_N,
        d=inputs.NPZ_MAX_D,
        slices=inputs.NPZ_MAX_SLICES,
        mb=inputs.NPZ_MAX_BYTES // 2**20,
    )
    upload = st.file_uploader(t("variants.npz_upload"), type=["npz"], key="var-npz", help=limits)
    st.caption(limits)
    if upload is None:
        st.info(t("variants.npz_hint"))
        return None
    data = upload.getvalue()
    n = state.npz_length(data)  # an InputError here says what is wrong with the file
    return dict(upload=data, n_for_defaults=n, defaults=in_pretrained.default_budgets(n))


def trained() -> dict | None:
    """A date through the registry's trained dates Transformer."""
    limit = state.trained_max_length()
    label = t("variants.date", n=limit)
    text = gated_text(st.text_input, label, "12 March 2021", key="var-date", **char_gate(limit))
    if text is None:
        return None
    st.caption(t("variants.date_caption", name=state.trained_name()))
    if said := state.date_warning(text):  # as the Transformer page says it, before any table
        st.warning(engine_text(said, markdown=True))
    return dict(text=text, n_for_defaults=max(1, len(text)))


def text() -> dict | None:
    """A text through a seeded random multi-head layer."""

    c1, c2 = st.columns(2)
    label = t("variants.heads", lo=HEADS[0], hi=HEADS[1])
    heads = url_number(c1.number_input, "heads", label, *HEADS, 2, key="var-text-heads")
    label = t("variants.head_size", lo=HEAD_SIZE[0], hi=HEAD_SIZE[1])
    d = url_number(c2.number_input, "d", label, *HEAD_SIZE, 32, key="var-text-d")
    label, gate = t("variants.text", n=inputs.TEXT_TOKEN_LIMIT), word_gate(inputs.TEXT_TOKEN_LIMIT)
    text = url_text(st.text_area, label, EXAMPLE, key="var-text", **gate)
    if text is None:
        return None
    st.caption(t("variants.text_caption"))
    return dict(text=text, heads=int(heads), d=int(d), n_for_defaults=max(1, len(tokenize(text))))


def synthetic() -> dict:
    """Seeded Q/K/V of a chosen length and structure."""

    s1, s2, s3, s4, s5, s6 = st.columns(6)
    lo, top = inputs.LENGTH_LIMITS[0], compare.MAX_COMPARE_N
    n = url_number(s1.number_input, "n", f"n ({lo} … {top})", lo, top, 128, key="var-n", step=16)
    structure = url_choice(
        s2.selectbox,
        "structure",
        t("variants.structure"),
        inputs.STRUCTURES,
        default=2,
        key="var-structure",
        format_func=lambda s: t(f"variants.structure_{s}"),
    )
    label = t("variants.sharpness", lo=SHARPNESS[0], hi=SHARPNESS[1])
    sharpness = url_number(
        s3.slider, "sharpness", label, *SHARPNESS, 1.0, key="var-sharpness", cast=float
    )
    label = t("variants.seed", hi=SEED_MAX)
    seed = url_number(s4.number_input, "seed", label, 0, SEED_MAX, 0, key="var-seed")
    label = t("variants.heads", lo=HEADS[0], hi=HEADS[1])
    heads = url_number(s5.number_input, "heads", label, *HEADS, 2, key="var-heads")
    label = t("variants.head_size", lo=HEAD_SIZE[0], hi=HEAD_SIZE[1])
    d = url_number(s6.number_input, "d", label, *HEAD_SIZE, 32, key="var-d")
    synthetic = (int(n), structure, float(sharpness), int(seed))
    return dict(synthetic=synthetic, heads=int(heads), d=int(d), n_for_defaults=int(n))


# Source id (widget value = URL value = locale key suffix) → its widgets.
SOURCES = {"minilm": minilm, "synthetic": synthetic, "text": text, "trained": trained, "npz": npz}


def source_widgets() -> dict | None:
    """The chosen input as keyword arguments of ``state.compare``; None while an upload
    is awaited."""
    ids = [s for s in SOURCES if s != "trained" or state.trained_name() is not None]
    source = url_choice(
        st.radio,
        "source",
        t("variants.input"),
        ids,
        key="var-source",
        horizontal=True,
        format_func=lambda s: t(f"variants.source_{s}"),
    )
    causal = st.checkbox(
        t("variants.causal"),
        url_default("causal", False, flag, key="var-causal"),
        key="var-causal",
        help=t("variants.causal_help"),
    )
    url_sync(causal=causal)
    chosen = SOURCES[source]()
    if chosen is None:
        return None
    # What a source does not set: the synthetic defaults, unused by that source.
    common = dict(text="", synthetic=(0, "clustered", 1.0, 0), heads=2, d=32)
    return common | dict(source=source, causal=bool(causal)) | chosen
