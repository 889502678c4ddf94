"""The Chat model page's measured sections: sinks, cache policies, head types, variants.

Each takes (chat, trace, request): the loaded model, the page's generation and its request.
"""

from __future__ import annotations

import streamlit as st
from kit import chart, controls, t
from kit.reveal import predict, state_key
from kit.url import url_choice, url_number
from state import chat as state
from views import chat as figs

MEASURES = ("mass_first", "local_width", "entropy")


def sinks(chat, trace, request) -> None:
    amap = trace.maps["prompt"]
    st.markdown(t("chat.sinks_intro"))
    c1, c2 = controls("chat-sinks").columns([2, 3])
    first = url_number(c1.slider, "first", t("chat.sinks_first"), 1, 4, 1, key="chat-first")
    measure = url_choice(
        c2.segmented_control,
        "measure",
        t("chat.sinks_measure"),
        MEASURES,
        key="chat-measure",
        format_func=lambda m: t(f"chat.measure_{m}"),
    )
    prof = state.sink_profile(amap.weights, first)
    control = state.first_token_control(request.prompt, request.template)
    figs.draw_sinks(prof, measure, control, chat.n_layers, chat.n_kv_heads, "chat-sinks")


def heads(chat, trace, request) -> None:
    st.markdown(t("chat.heads_intro"))
    found = state.detect_heads()
    kind = url_choice(
        st.segmented_control,
        "kind",
        t("chat.heads_kind"),
        state.HEAD_TYPES,
        key="chat-kind",
        default=2,
        format_func=lambda k: t(f"chat.kind_{k}"),
    )
    scores = found[kind]
    figs.draw_head_scores(found, kind, chat.n_kv_heads, "chat-heads")
    ranked = state.ranked_heads(scores)
    pick = url_choice(
        st.selectbox,
        "pick",
        t("chat.heads_pick"),
        ranked,
        key=f"chat-pick-{kind}",
        format_func=lambda p: t(
            "chat.head_name",
            at=p.replace(".", " H"),
            score=float(scores[tuple(map(int, p.split(".")))]),
        ),
    )
    layer, head = map(int, pick.split("."))
    amap = trace.maps["prompt"]
    title = t("chat.fig_head_map", layer=layer, head=head)
    chart(figs.head_map_figure(amap.weights[layer, head], amap.key_labels, title), "chat-head-map")
    reveal(request, state.ranked_heads(found["induction"])[0])


def reveal(request, best: str) -> None:
    """Which head copies? The best induction head reads the prompt written twice; the class
    guesses where it looks from a token of the second copy, then reveals."""
    weights, labels, n = state.repeated(request.prompt)
    if n < 3:
        st.caption(t("chat.heads_short"))
        return
    layer, head = map(int, best.split("."))
    st.markdown(t("chat.heads_reveal", layer=layer, head=head, n=n))
    row = 1 + n + 1  # the second copy's second token: its first copy is followed by a third
    key = state_key("chat-heads", request.prompt, best)
    if predict(key, weights[layer, head], labels, labels, row=row, unit="word"):
        title = t("chat.fig_head_map", layer=layer, head=head)
        chart(figs.head_map_figure(weights[layer, head], labels, title), "chat-reveal-map")


def cache(chat, trace, request) -> None:
    st.markdown(t("chat.cache_intro"))
    c1, c2, c3, c4 = controls("chat-cache").columns(4)
    name = url_choice(
        c1.selectbox,
        "policy",
        t("chat.policy"),
        state.POLICIES,
        key="chat-policy",
        default=2,
        format_func=lambda p: t(f"chat.policy_{p}"),
    )
    window = url_number(c2.number_input, "window", t("chat.window"), 1, 4096, 16, key="chat-window")
    sinks = url_number(c3.number_input, "sinks", t("chat.sinks"), 1, 16, 4, key="chat-sinks")
    budget = url_number(c4.number_input, "budget", t("chat.budget"), 1, 4096, 8, key="chat-budget")
    cut = state.generate(request, state.policy(name, window, sinks, budget))
    figs.draw_cut(trace, cut, state.same_prefix(trace, cut), "chat-cache")
