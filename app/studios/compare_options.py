"""The Compare page's per-model widgets: a card's options and the attention it runs with."""

import streamlit as st
from kit import t
from kit.i18n import param_help, param_label
from state import compare as state


def options(params, key: str) -> dict:
    """A widget per parameter a card or a variant states (beam width, window, …)."""
    chosen = {}
    for p in params:
        k, label = f"{key}-{p.name}", param_label(p)
        if p.choices:  # a variant's choice parameter
            chosen[p.name] = st.selectbox(label, p.choices, p.choices.index(p.default), key=k)
        elif isinstance(p.default, int | float):
            lo, hi = type(p.default)(p.low), type(p.default)(p.high)
            label = t(f"compare.{p.name}") if p.name in ("beam", "max_new_tokens") else label
            chosen[p.name] = st.slider(label, lo, hi, p.default, key=k, help=param_help(p))
    return chosen


def attention(card, key: str) -> dict:
    """A swappable model runs any attention variant of the registry in every layer."""
    ways = ["exact", *state.variants()] if card.swappable else []
    attend = st.selectbox(t("compare.attend"), ways, key=f"{key}-attend") if ways else None
    if attend in (None, "exact"):
        return {}
    return {"attend": attend, "attend_hp": options(state.variant_params(attend), f"{key}-{attend}")}
