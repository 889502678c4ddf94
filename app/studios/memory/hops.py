"""Section: the answer, p_i per sentence and hop, and the story shaded at one hop."""

import streamlit as st
from views.memory import answer_bars, hops_figure, shaded_story


@st.fragment
def shaded(amap, support):
    """A fragment: choosing a hop redraws the story only."""
    hop = st.select_slider(
        "Hop shown in the story",
        list(amap.layer_labels),
        value=amap.layer_labels[-1],
        key="mem_hop",
    )
    k = amap.layer_labels.index(hop)
    st.caption(
        "Each sentence is shaded by its weight p_i at this hop (as in the paper's Figure 2)"
        + ("; ★ marks the supporting facts." if support else ".")
    )
    st.html(shaded_story(amap.key_labels, amap.weights[k, 0, 0], support))


def section(trace):
    out, amap = trace.outputs, trace.maps["memory"]
    c1, c2 = st.columns([1, 2])
    c1.plotly_chart(answer_bars(out["candidates"], out["probabilities"]), key="mem-answer")
    c2.plotly_chart(hops_figure(amap, out["support"]), key="mem-hops")
    shaded(amap, out["support"])
