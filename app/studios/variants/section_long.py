"""Long sequences: full attention of a long input, pooled block by block."""

from __future__ import annotations

import streamlit as st
from state import variants as state
from views import variants as figs


def show() -> None:
    from engine.trace import AttentionMap
    from engine.variants.inputs import LONG_LENGTH_LIMITS

    lo, hi = LONG_LENGTH_LIMITS
    st.markdown(
        "Full attention of a long sequence, pooled block by block without ever "
        "holding the n × n matrix."
    )
    c1, c2, c3 = st.columns(3)
    n = c1.select_slider(
        f"n ({lo} … {hi}; 32k takes ≈ 20 s here)",
        [256, 1024, 2048, 4096, 8192, 16384, 32768],
        16384,
        key="long-n",
    )
    structure = c2.selectbox("Q/K structure", ["local", "random"])
    reduce = c3.selectbox("pool by", ["mean", "max"])
    with st.spinner("Pooling…"):
        pooled, block, seconds, peak, path = state.pooled_map(int(n), structure, reduce)
    full_bytes = n * n * 4
    st.markdown(
        f"Kernel path: **{path}** · block {block} → pooled ×{block} · "
        f"{seconds:.2f} s · measured peak {peak / 2**20:.1f} MiB = "
        f"{100 * peak / full_bytes:.1f}% of the {full_bytes / 2**20:.0f} MiB full map"
    )
    labels = [f"{i * block}" for i in range(pooled.shape[-1])]
    amap = AttentionMap(
        weights=pooled,
        query_labels=labels,
        key_labels=labels,
        kind="self",
        pooling=block,
        normalized=False,
        note=f"{reduce} of p_ij over {block}×{block} blocks",
    )
    st.plotly_chart(
        figs.map_figure(amap, 0, title=f"Full attention, n = {n}", value_name=f"{reduce} p"),
        key="pooled",
    )
