"""KV cache: decoding with and without stored keys and values."""

from __future__ import annotations

import streamlit as st
from kit import table_exports
from state import variants as state
from views import variants as figs


def show() -> None:
    limit = state.kv_length_limit()
    st.markdown(
        "One seeded attention layer (d_model 256, 4 heads) decodes n tokens: without "
        "a cache it re-projects the whole prefix at every step; with one it projects "
        "only the new token and attends against the stored keys and values."
    )
    n = st.slider(f"tokens to generate (16 … {limit})", 16, limit, 256)
    with st.spinner("Decoding both ways…"):
        res = state.kv_compare(int(n))
    c1, c2, c3 = st.columns(3)
    c1.metric("speedup (total time)", f"{res['speedup']:.1f}×")
    c2.metric("with cache", f"{res['total_cache_s']:.3f} s")
    c3.metric("without cache", f"{res['total_no_cache_s']:.3f} s")
    st.caption(
        f"Largest difference from full causal attention: cache "
        f"{res['max_abs_diff_cache_vs_full']:.1e}, no cache "
        f"{res['max_abs_diff_no_cache_vs_full']:.1e}."
    )
    st.plotly_chart(figs.per_token_figure(res), key="kv-chart")
    rows = [
        {"t": t + 1, "ms_cache": 1000 * a, "ms_no_cache": 1000 * b}
        for t, (a, b) in enumerate(
            zip(res["step_seconds_cache"], res["step_seconds_no_cache"], strict=True)
        )
    ]
    table_exports(rows, "variants-kv-cache")
