"""The Chat model page's causal checks (Does it matter?): the logit lens of the written
tokens, the every-head ablation sweep of the prompt and activation patching on a typed
clean/corrupted pair, each through the queue (``state.causal``).

Each section takes (chat, trace, request), as the page's other sections do.
"""

from __future__ import annotations

import streamlit as st
from kit import chart, data_table, t
from kit.url import url_choice, url_default, url_sync
from state import causal as causal_state
from state import chat as state
from views import causal as causal_figs
from views import chat as figs

CHECKS = ("lens", "ablate", "patch")


def causal(chat, trace, request) -> None:
    st.markdown(t("causal.intro"))
    check = url_choice(
        st.segmented_control,
        "check",
        t("causal.check"),
        CHECKS,
        key="causal-check",
        format_func=lambda c: t(f"causal.check_{c}"),
    )
    {"lens": lens, "ablate": ablate, "patch": patch}[check](chat, trace)


def lens(chat, trace) -> None:
    out = trace.outputs
    found = causal_state.lens(tuple(out["token_ids"]), out["n_prompt"])
    chart(causal_figs.lens_figure(found), key="causal-lens")
    st.caption(t("causal.lens_caption", last=chat.n_layers - 1))


def ablate(chat, trace) -> None:
    mode = url_choice(
        st.radio,
        "mode",
        t("causal.mode"),
        causal_state.MODES,
        key="causal-mode",
        format_func=lambda m: t(f"causal.mode_{m}"),
        horizontal=True,
        help=t("causal.mode_help"),
    )
    ids = causal_state.prompt_ids(trace)
    if len(ids) > causal_state.LIMIT:
        st.info(t("causal.too_long", n=len(ids), limit=causal_state.LIMIT))
        return
    found = causal_state.ablate(tuple(ids), mode)
    if found["stopped"]:
        st.info(t("causal.stopped", done=len(found["layers_done"]), total=chat.n_layers))
    chart(causal_figs.ablation_figure(found, chat.n_kv_heads), key="causal-ablation")
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
    rows = causal_figs.top_heads(found, state.detect_heads())
    if not rows:
        return
    st.markdown(t("causal.top_heads"))
    data_table(rows)
    top = rows[0][t("causal.col_head")]
    layer, head = (int(x[1:]) for x in top.split())
    amap = state.without_first(trace.maps["prompt"])
    title = t("causal.fig_top_head", layer=layer, head=head)
    weights = amap.weights[layer, head]
    chart(figs.head_map_figure(weights, amap.key_labels, title), key="causal-top-map")


def patch(chat, trace) -> None:
    d = causal_state.Pair()
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
        sweep = c3.radio(
            t("causal.sweep"),
            causal_state.SWEEPS,
            key="causal-sweep",
            format_func=lambda s: t(f"causal.sweep_{s}"),
            horizontal=True,
            help=t("causal.sweep_help", heads=causal_state.LIMIT, positions=causal_state.RESIDUAL),
        )
        st.form_submit_button(t("causal.run_patch"), type="primary")
    url_sync(clean=clean, corrupted=corrupted, answer=answer, wrong=wrong)
    found = causal_state.patch(causal_state.Pair(clean, corrupted, answer, wrong), sweep)
    if found["stopped"]:
        st.info(t("causal.stopped_patch"))
    chart(causal_figs.patching_figure(found, chat.n_heads, chat.n_kv_heads), key="causal-patching")
    st.caption(t("causal.patching_caption", seconds=f"{found['seconds']:.0f}"))
