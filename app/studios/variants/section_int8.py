"""INT8: SageAttention-style quantised attention against the naive scheme."""

from __future__ import annotations

import pandas as pd
import streamlit as st
from kit import table_exports
from state import variants as state


def show() -> None:
    st.markdown(
        "SageAttention-style INT8: K smoothed (its mean over tokens removed — softmax "
        "does not change), Q and K quantised per block of tokens; against the naive "
        "one-scale-per-tensor INT8. A K channel bias is what breaks the naive scheme."
    )
    c1, c2, c3, c4 = st.columns(4)
    n = c1.number_input("n (16 … 1024)", 16, 1024, 256, step=16)
    d = c2.selectbox("head size d", [32, 64, 128], index=1, key="int8-d")
    outlier = c3.slider("K channel bias up to (0 … 50)", 0.0, 50.0, 20.0)
    block = c4.number_input("block (1 … 1024 tokens)", 1, 1024, 64)
    rows = state.int8_rows(int(n), int(d), float(outlier), int(block), 0)
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    table_exports(rows, "variants-int8")
