"""AttentionViz (Yeh et al. 2023): one head's queries and keys in one 2-D embedding."""

import streamlit as st
from kit import chart, friendly_errors, t, url_choice
from state import transformer as state
from studios.transformer.model_pickers import layer_head
from views.qk_map import dot_distance_figure, qk_scatter


def show(s) -> None:
    raw, kind = s.raw, s.kind
    q_all, k_all = s.trace.vectors.get(f"queries.{kind}"), s.trace.vectors.get(f"keys.{kind}")
    if q_all is None:
        st.info(t("transformer.no_vectors"))
        return
    layer, head = layer_head(raw)
    colour = url_choice(
        st.radio,
        "colour",
        t("transformer.colour_by"),
        ["position", "token"],
        key="qk-colour",
        horizontal=True,
        format_func=lambda c: t(f"transformer.colour_{c}"),
    )
    mask = state.allowed_keys(kind, raw.shape[2], raw.shape[3])
    with friendly_errors(t("transformer.qk_what")):
        emb = state.joint_embedding(q_all[layer, head], k_all[layer, head], mask, 0)
    title = f"{raw.layer_labels[layer]} · {raw.head_labels[head]} ({emb.method.upper()})"
    chart(
        qk_scatter(emb, raw.query_labels, raw.key_labels, colour_by=colour, title=title),
        width="stretch",
        key="tr-qk",
    )
    chart(dot_distance_figure(emb, mask), width="stretch", key="tr-qk-r")
    st.caption(t("transformer.qk_caption"))
