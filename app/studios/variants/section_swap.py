"""MiniLM swap: each variant in place of softmax attention in every layer of a real model."""

from __future__ import annotations

import json

import streamlit as st
from kit import chart, controls, data_table, t, table_exports, url_default, url_number, url_sync
from kit.i18n import engine_text, variant_title
from kit.url import names as url_names
from state import variants as state
from studios.variants.compare_inputs import EXAMPLE, param_widgets, pick_variants
from views import variants as figs


def show() -> None:
    from engine.variants import REGISTRY, in_pretrained

    st.markdown(t("variants.swap_intro"))
    with controls():
        text = st.text_area(
            t("variants.swap_text", n=state.SWAP_MAX_TOKENS),
            url_default("text", EXAMPLE, key="swap-text"),
            key="swap-text",
        )
        url_sync(text=text)
        names = list(in_pretrained.SWAPPABLE)
        picked = pick_variants(names, names, url_names, "swap-picked")
    n = state.swap_token_count(text)
    defaults = in_pretrained.default_budgets(max(n, 1))
    budgets = {}
    with st.expander(t("variants.swap_budgets")):
        st.caption(t("variants.swap_budgets_caption", n=n))
        for name in picked:
            if REGISTRY[name].params:
                budgets[name] = param_widgets(REGISTRY[name], n, f"swap{n}", defaults.get(name))
    with st.spinner(t("variants.swap_running")):
        res = state.swap(text, tuple(picked), json.dumps(budgets, sort_keys=True))
    results = res["results"]
    exact = [variant_title(REGISTRY[v]) for v, r in results.items() if r.exact]
    st.markdown(t("variants.swap_exact", names=", ".join(exact) or "—", n=res["n"]))
    rows = [
        {
            "variant": name,
            "cosine": r.cosine,
            "max_layer_error": max(r.layer_errors),
            "exact": r.exact,
            "budget": ", ".join(f"{k} = {v}" for k, v in r.params.items() if k != "seed") or "–",
            "note": "; ".join(engine_text(n) for n in r.notes),
        }
        for name, r in results.items()
    ]
    data_table(rows)
    st.caption(t("variants.swap_caption"))
    table_exports(rows, "variants-minilm-swap")
    c1, c2 = st.columns(2)
    chart(figs.cosine_figure({n: r.cosine for n, r in results.items()}), "swap-cosine", c1)
    errors = {name: r.layer_errors for name, r in results.items()}
    chart(figs.layer_error_figure(errors), key="swap-errors", where=c2)
    swap_maps(res)


@st.fragment
def swap_maps(res: dict) -> None:
    original = res["original_maps"]
    n_layers, n_heads = original.shape[:2]
    with controls("swap-maps"):
        c1, c2 = st.columns(2)
        label = t("variants.layer", last=n_layers - 1)
        layer = url_number(c1.number_input, "layer", label, 0, n_layers - 1, 0, key="swap-layer")
        label = t("variants.head", last=n_heads - 1)
        head = url_number(c2.number_input, "head", label, 0, n_heads - 1, 0, key="swap-head")
    tokens = res["tokens"]
    panels = [dict(z=original[layer, head], x=tokens, y=tokens, title=t("variants.swap_original"))]
    for name, r in res["results"].items():
        flags = ["exact"] if r.map_exact else ["implied"] if r.map_implied else []
        panels.append(dict(z=r.maps[layer, head], x=tokens, y=tokens, title=name, flags=flags))
    chart(figs.map_grid(panels), key="swap-maps")
