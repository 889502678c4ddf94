"""bertviz's neuron view: how one query's scores and weights come out of q and k."""

import streamlit as st
from kit import chart, t, url_choice
from state import transformer as state
from studios.transformer.model_pickers import layer_head
from views.transformer import neuron_figure


def show(s) -> None:
    raw, kind = s.raw, s.kind
    q_all, k_all = s.trace.vectors.get(f"queries.{kind}"), s.trace.vectors.get(f"keys.{kind}")
    if q_all is None:
        st.info(t("transformer.no_vectors"))
        return
    layer, head = layer_head(raw)
    i = url_choice(
        st.selectbox,
        "query",
        t("transformer.query_token"),
        range(raw.shape[2]),
        key="neuron-query",
        format_func=lambda j: f"{j}: {raw.query_labels[j]}",
    )
    mask = state.allowed_keys(kind, raw.shape[2], raw.shape[3])
    row = None if mask is None else mask[i]
    nv = state.neuron(q_all[layer, head, i], k_all[layer, head], row)
    chart(neuron_figure(nv, raw.query_labels[i], raw.key_labels), width="stretch", key="tr-neuron")
    where = f"{raw.layer_labels[layer]} · {raw.head_labels[head]}"
    st.caption(t("transformer.neuron_caption", where=where))
