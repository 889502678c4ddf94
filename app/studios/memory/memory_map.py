"""Section: the first hop's memory vectors $m_i$ of many stories, mapped with UMAP."""

import numpy as np
import streamlit as st
from kit import chart, friendly_errors, t, url_index, url_sync
from state.memn2n import MAP_MEMORIES, memory_map
from views.memory import memory_map as map_figure


@st.fragment
def section(map_name: str, sample, sentences):
    """A fragment: recolouring redraws the map only (the projection is cached)."""
    st.subheader(t("memory.map_header"))
    ways = ["task", "entity"]
    colour = st.radio(
        t("memory.colour_by"),
        ways,
        url_index("colour", ways, key="mem_colour"),
        horizontal=True,
        format_func=lambda c: t(f"memory.colour_{c}"),
        key="mem_colour",
    )
    url_sync(colour=colour)
    st.caption(t("memory.map_caption", name=map_name, n=f"{MAP_MEMORIES:,}"))
    with friendly_errors(t("memory.map_what")):
        coords, task_of, subject_of, texts, n = memory_map(map_name, sample)
        tasks = [t("memory.task_n", n=g.removeprefix("task ")) for g in task_of]  # "task 2"
        groups = (tasks if colour == "task" else subject_of) + [t("memory.this_story")] * n
        is_current = np.r_[np.zeros(len(texts), bool), np.ones(n, bool)]
        chart(
            map_figure(
                coords,
                groups,
                texts + list(sentences),
                is_current,
                t("memory.map_title", by=t(f"memory.colour_{colour}")),
            ),
            key="mem-umap",
        )
