"""The causal checks drawn: head ablation, activation patching with its typed pair, and the
faithfulness meter of one output, each figure (views.causal) with its captions and tables.
The Chat page draws them all; the Transformer page draws the meter.
"""

from __future__ import annotations

import streamlit as st
from kit import chart, data_table
from kit.i18n import t
from kit.url import url_choice, url_default
from views.causal import (
    ablation_figure,
    agreement_rows,
    faithful_figure,
    negligible,
    patching_figure,
    token_rows,
    top_heads,
)
from views.chat import head_map_figure


def draw_faithful(found, layer: int, caption: str, key: str) -> None:
    """The meter for one output: the scaled columns, a one-line verdict against occlusion,
    the agreement table, and the raw numbers per token."""
    if found.stopped:
        st.info(t("causal.faithful_stopped"))
        return
    fig = faithful_figure(found.scaled(layer), found.tokens, layer, found.output)
    chart(fig, key=f"{key}-figure")
    verdict = {r: t(f"causal.verdict_{v}") for r, v in found.verdict(layer).items()}
    st.markdown(t("causal.faithful_verdict", layer=layer, **verdict))
    data_table(agreement_rows(found.agreement(layer), layer))
    st.caption(caption)
    with st.expander(t("causal.faithful_numbers")):
        rows = found.readings(layer) | found.attributions()
        data_table(token_rows(found.tokens, rows, layer))


def draw_ablation(found: dict, chat, head_types: dict, prompt_map, k: int) -> None:
    """The every-head sweep: the layer × head effects, what was removed from what, the
    heads that matter most beside their head-type scores, and the top head's pattern
    (``prompt_map``: the prompt's map, the sink hidden)."""
    if found["stopped"]:
        st.info(t("causal.stopped", done=len(found["layers_done"]), total=chat.n_layers))
    chart(ablation_figure(found, chat.n_kv_heads), key="causal-ablation")
    st.caption(
        t(
            "causal.ablation_caption",
            answer=found["answer"],
            log_p=f"{found['log_prob']:.2f}",
            loss=f"{found['loss']:.2f}",
            n=found["n_tokens"],
            seconds=f"{found['seconds']:.0f}",
        )
    )
    rows = top_heads(found, head_types, k)
    if not rows:
        return
    st.markdown(negligible(found["delta_log_prob"]) or t("causal.top_heads"))
    data_table(rows)
    layer, head = (int(x[1:]) for x in rows[0][t("causal.col_head")].split())
    title = t("causal.fig_top_head", layer=layer, head=head)
    weights = prompt_map.weights[layer, head]
    chart(head_map_figure(weights, prompt_map.key_labels, title), key="causal-top-map")


def pair_form(d, sweeps, limit: int, residual: int) -> tuple:
    """The clean/corrupted pair, the two answers and the sweep, typed in one form (each
    field in the link): ``(clean, corrupted, answer, wrong, sweep)``."""
    with st.form("causal-pair", border=False):
        clean = st.text_input(
            t("causal.clean"), url_default("clean", d.clean, key="causal-clean"), key="causal-clean"
        )
        corrupted = st.text_input(
            t("causal.corrupted"),
            url_default("corrupted", d.corrupted, key="causal-corrupted"),
            key="causal-corrupted",
        )
        c1, c2, c3 = st.columns([2, 2, 3])
        answer = c1.text_input(
            t("causal.answer"),
            url_default("answer", d.answer, key="causal-answer"),
            key="causal-answer",
            help=t("causal.answer_help"),
        )
        wrong = c2.text_input(
            t("causal.wrong"), url_default("wrong", d.wrong, key="causal-wrong"), key="causal-wrong"
        )
        sweep = url_choice(
            c3.radio,
            "sweep",
            t("causal.sweep"),
            sweeps,
            key="causal-sweep",
            format_func=lambda s: t(f"causal.sweep_{s}"),
            horizontal=True,
            help=t("causal.sweep_help", heads=limit, positions=residual),
        )
        st.form_submit_button(t("causal.run_patch"), type="primary")
    return clean, corrupted, answer, wrong, sweep


def draw_patching(found: dict, chat) -> None:
    if found["stopped"]:
        st.info(t("causal.stopped_patch"))
    chart(patching_figure(found, chat.n_heads, chat.n_kv_heads), key="causal-patching")
    st.caption(t("causal.patching_caption", seconds=f"{found['seconds']:.0f}"))
