"""Layers × heads: every head as a thumbnail, and the chosen one enlarged."""

import streamlit as st
from kit import chart
from studios.transformer.model_pickers import layer_head
from views.heatmap import attention_figure
from views.transformer import head_grid


def show(s) -> None:
    chart(head_grid(s.amap, s.title), width="stretch", key="tr-grid")
    enlarged(s)


# Layer and head rerun only the enlarged head: the grid above stays as drawn.
@st.fragment
def enlarged(s) -> None:
    layer, head = layer_head(s.raw)
    shown_head = head if s.amap.shape[1] == s.raw.shape[1] else 0
    layer = min(layer, s.amap.shape[0] - 1)
    chart(attention_figure(s.amap, layer, shown_head), width="stretch", key="tr-head")
    if s.amap.note:
        st.caption(s.amap.note)
