"""A MemN2N answer drawn as the Memory page and the lessons show it: the answer bars and
sentences × hops side by side (views.memory), then the story shaded at one hop.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from kit import chart, fragment, t, url_choice
from views.heatmap import column_px
from views.memory import (
    answer_bars,
    hop_label,
    hops_figure,
    shaded_story,
)


def draw_hops(amap, candidates: Sequence[str], probs: Sequence[float], support: Sequence[int]):
    """The answer's distribution, p_i per sentence and hop, and the story shaded at one hop.

    ``amap`` is a Trace's ``maps["memory"]`` ([hops, 1, 1, sentences]); the other three
    are its ``outputs``. The hop picker lives in the URL as ``?hop=`` (1 = first).
    """
    c1, c2 = st.columns([1, 2])
    chart(answer_bars(candidates, probs), "mem-answer", c1, share=1 / 3)
    chart(hops_figure(amap, support, column_px(2 / 3)), "mem-hops", c2, share=2 / 3)
    _shaded(amap, support)


@fragment
def _shaded(amap, support: Sequence[int]) -> None:
    """A fragment: choosing a hop redraws the story only (the last hop at first)."""
    labels = list(amap.layer_labels)
    hop = url_choice(
        st.select_slider,
        "hop",
        t("memory.hop_shown"),
        labels,
        key="mem_hop",
        ids=range(1, len(labels) + 1),
        default=len(labels) - 1,
        format_func=hop_label,
    )
    st.caption(t("memory.shaded_support" if support else "memory.shaded"))
    st.html(shaded_story(amap.key_labels, amap.weights[labels.index(hop), 0, 0], support))
