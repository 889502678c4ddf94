"""INT8: SageAttention-style quantised attention against the naive scheme."""

from __future__ import annotations

import streamlit as st
from kit import data_table, t, table_exports, url_number
from state import variants as state


def show() -> None:
    st.markdown(t("variants.int8_intro"))
    c1, c2, c3, c4 = st.columns(4)
    n = url_number(c1.number_input, "n", "n (16 … 1024)", 16, 1024, 256, key="int8-n", step=16)
    d = c2.selectbox(t("variants.head_size_d"), [32, 64, 128], index=1, key="int8-d")
    outlier = c3.slider(t("variants.int8_bias"), 0.0, 50.0, 20.0, key="int8-bias")
    block = c4.number_input(t("variants.int8_block"), 1, 1024, 64, key="int8-block")
    rows = state.int8_rows(int(n), int(d), float(outlier), int(block), 0)
    data_table(rows)
    table_exports(rows, "variants-int8")
