"""The Compare section's real inputs: Q/K/V of a MiniLM head for your text, or your own NPZ."""

from __future__ import annotations

import streamlit as st
from kit import t, url_default, url_number, url_sync
from state import variants as state


def minilm_widgets(example: str) -> dict:
    """Text, layer and head: Q/K/V as the pretrained model computes them (one head)."""
    from engine.variants import in_pretrained

    c1, c2 = st.columns(2)
    layer = url_number(
        c1.number_input, "layer", t("variants.layer", last=5), 0, 5, 2, key="var-layer"
    )
    head = url_number(
        c2.number_input, "qhead", t("variants.qkv_head", last=11), 0, 11, 0, key="var-qhead"
    )
    text = st.text_area(
        t("variants.swap_text", n=state.SWAP_MAX_TOKENS),
        url_default("text", example, key="var-mtext"),
        key="var-mtext",
    )
    url_sync(text=text)
    n = state.swap_token_count(text)
    if n > state.SWAP_MAX_TOKENS:
        st.info(t("variants.swap_too_long", n=n, limit=state.SWAP_MAX_TOKENS))
        st.stop()
    st.caption(t("variants.minilm_caption"))
    return dict(
        text=text,
        layer=int(layer),
        heads=int(head),
        n_for_defaults=max(n, 1),
        defaults=in_pretrained.default_budgets(max(n, 1)),
    )


def npz_widgets() -> dict | None:
    """An uploaded q, k, v file, checked before anything runs; None until one is given."""
    from engine.variants import in_pretrained as ip

    limits = t(
        "variants.npz_limits",
        n=ip.NPZ_MAX_N,
        d=ip.NPZ_MAX_D,
        slices=ip.NPZ_MAX_SLICES,
        mb=ip.NPZ_MAX_BYTES // 2**20,
    )
    upload = st.file_uploader(t("variants.npz_upload"), type=["npz"], key="var-npz", help=limits)
    st.caption(limits)
    if upload is None:
        st.info(t("variants.npz_hint"))
        return None
    data = upload.getvalue()
    n = state.npz_length(data)  # an InputError here says what is wrong with the file
    return dict(upload=data, n_for_defaults=n, defaults=ip.default_budgets(n))
