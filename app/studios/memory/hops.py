"""Section: the answer, p_i per sentence and hop, and the story shaded at one hop."""

import streamlit as st
from kit import t
from views.memory import answer_bars, hops_figure, shaded_story


@st.fragment
def shaded(amap, support):
    """A fragment: choosing a hop redraws the story only."""
    hop = st.select_slider(
        t("memory.hop_shown"),
        list(amap.layer_labels),
        value=amap.layer_labels[-1],
        format_func=lambda h: t("memory.hop_n", n=h.removeprefix("hop ")),
        key="mem_hop",
    )
    k = amap.layer_labels.index(hop)
    st.caption(t("memory.shaded_support" if support else "memory.shaded"))
    st.html(shaded_story(amap.key_labels, amap.weights[k, 0, 0], support))


def section(trace):
    out, amap = trace.outputs, trace.maps["memory"]
    c1, c2 = st.columns([1, 2])
    c1.plotly_chart(answer_bars(out["candidates"], out["probabilities"]), key="mem-answer")
    c2.plotly_chart(hops_figure(amap, out["support"]), key="mem-hops")
    shaded(amap, out["support"])
