"""The positional-encoding sections that need only their inputs: the table, the similarity
of positions and the rotation, each a caption and its figure (views.positional)."""

from __future__ import annotations

import numpy as np
import streamlit as st
from kit.exports import chart
from kit.i18n import t
from views.positional import rotation_figure, similarity_figure, table_figure

from engine import positional as pe_lib


# The page's sections that need only their inputs: the Positional page and a lesson step
# that shows it call these same functions (kit.params names the link's parameters).
def draw_table(pe: np.ndarray, key: str) -> None:
    st.caption(t("positional.table_caption"))
    chart(table_figure(pe, "PE"), key=key)


def draw_similarity(pe: np.ndarray, key: str) -> None:
    st.caption(t("positional.similarity_caption"))
    sim = pe_lib.similarity(pe)
    chart(similarity_figure(sim, "PE(i) · PE(j)", "dot", height=520), key=key)


def draw_rotation(k: int, length: int, d_model: int, key: str) -> None:
    err = pe_lib.verify_rotation(k, length, d_model)
    st.markdown(t("positional.rotation_text", n=length, err=f"{err:.2e}"))
    show = min(d_model, 16)
    chart(rotation_figure(pe_lib.rotation(k, d_model)[:show, :show], k), key=key)
