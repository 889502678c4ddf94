"""Section: the first hop's memory vectors m_i of many stories, mapped with UMAP."""

import numpy as np
import streamlit as st
from kit import friendly_errors
from state.memn2n import MAP_MEMORIES, memory_map
from views.memory import memory_map as map_figure


@st.fragment
def section(map_name: str, sample, sentences):
    """A fragment: recolouring redraws the map only (the projection is cached)."""
    st.subheader("Memory embeddings m_i across many stories")
    colour = st.radio("Colour by", ["task", "entity"], horizontal=True, key="mem_colour")
    st.caption(
        f"UMAP (umap-learn) of the first hop's memory vectors m_i of `{map_name}` for about "
        f"{MAP_MEMORIES:,} sentences of test stories, plus this story's (ringed, numbered "
        "by sentence). The joint model is used when shipped, so every task shares one "
        "space. Entity = the sentence's subject."
    )
    with friendly_errors("the memory map"):
        coords, task_of, subject_of, texts, n = memory_map(map_name, sample)
        groups = (task_of if colour == "task" else subject_of) + ["this story"] * n
        is_current = np.r_[np.zeros(len(texts), bool), np.ones(n, bool)]
        st.plotly_chart(
            map_figure(
                coords, groups, texts + list(sentences), is_current, f"m_i coloured by {colour}"
            ),
            key="mem-umap",
        )
