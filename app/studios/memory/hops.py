"""Section: the answer, p_i per sentence and hop, and the story shaded at one hop."""

import streamlit as st
from kit import chart, t, url_default, url_sync
from views.memory import answer_bars, hops_figure, shaded_story


@st.fragment
def shaded(amap, support):
    """A fragment: choosing a hop redraws the story only."""
    n = len(amap.layer_labels)
    first = url_default("hop", n, int, key="mem_hop", lo=1, hi=n)
    hop = st.select_slider(
        t("memory.hop_shown"),
        list(amap.layer_labels),
        value=amap.layer_labels[first - 1],
        format_func=lambda h: t("memory.hop_n", n=h.removeprefix("hop ")),
        key="mem_hop",
    )
    k = amap.layer_labels.index(hop)
    url_sync(hop=k + 1)
    st.caption(t("memory.shaded_support" if support else "memory.shaded"))
    st.html(shaded_story(amap.key_labels, amap.weights[k, 0, 0], support))


def section(trace):
    out, amap = trace.outputs, trace.maps["memory"]
    c1, c2 = st.columns([1, 2])
    chart(answer_bars(out["candidates"], out["probabilities"]), "mem-answer", c1)
    chart(hops_figure(amap, out["support"]), "mem-hops", c2)
    shaded(amap, out["support"])
