"""A lesson step's alignment and Transformer views, drawn inline from the step's link.

The same state calls, sections and figures as the Alignment and Transformer pages, with
the step's parameters in place of the pages' widgets.
"""

from __future__ import annotations

import streamlit as st
from kit import answer_heading, chart, engine_text, friendly_errors, t
from kit.reveal import predict
from state import models
from state import nmt as nmt_state
from state import transformer as tr_state
from studios.alignment import measured, soft
from studios.alignment.common import md
from views.heatmap import attention_figure
from views.transformer import head_grid


def _card(name: str, family: str):
    card = models.card(name)  # an unknown model is an InputError: a calm note, not a trace
    if card.family != family:
        raise ValueError(t("lessons.wrong_family", model=name, family=family))
    return card


def alignment(params: dict, guess, key: str) -> None:
    with friendly_errors(t("lessons.the_view")):
        card = _card(params["model"], "nmt")
        beam = int(params.get("beam", 5))
        trace = nmt_state.translate(card.name, params["text"], beam)
    answer_heading(trace, md(trace.outputs["translation"]))
    st.caption(t("lessons.model_line", title=engine_text(card.title), beam=beam))
    if trace.outputs["unknown"]:
        st.warning(t("lessons.unknown", words=", ".join(map(md, trace.outputs["unknown"]))))
    if params.get("section") == "measured":
        measured.section(card)
        return
    if "alignment" not in trace.maps:
        st.info(t("lessons.no_attention"))
        return
    a = trace.maps["alignment"]
    if guess is not None and not predict(
        key, a.weights[0, 0], a.query_labels, a.key_labels, row=guess
    ):
        return
    soft.section(card, trace, trace.inputs["tokens"])


def transformer(params: dict, guess, key: str) -> None:
    with friendly_errors(t("lessons.the_view")):
        card = _card(params["model"], "transformer")
        trace = tr_state.own_trace(card.name, params["text"])
        kind = params.get("attention", "cross")
        amap = trace.maps[kind]
        n_layers, n_heads = amap.shape[:2]
        layer = int(params.get("layer", n_layers - 1))
        head = int(params.get("head", 0))
        if layer >= n_layers or head >= n_heads:
            raise ValueError(t("lessons.no_head", layers=n_layers, heads=n_heads))
    answer_heading(trace, md(trace.outputs["translation"]))
    st.caption(engine_text(card.title))
    if trace.outputs["unknown"]:
        st.warning(t("lessons.unknown", words=", ".join(map(md, trace.outputs["unknown"]))))
    w = amap.weights[layer, head]
    if guess is not None and not predict(key, w, amap.query_labels, amap.key_labels, row=guess):
        return
    if params.get("section") == "grid":
        chart(head_grid(amap, kind), f"{key}-grid", width="stretch")
    else:
        chart(attention_figure(amap, layer, head), f"{key}-head", width="stretch")
