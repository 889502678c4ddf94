"""KV cache: decoding with and without stored keys and values."""

from __future__ import annotations

import streamlit as st
from kit import chart, t, table_exports, url_number
from state import variants as state
from views import variants as figs


def show() -> None:
    limit = state.kv_length_limit()
    st.markdown(t("variants.kv_intro"))
    n = url_number(st.slider, "n", t("variants.kv_tokens", n=limit), 16, limit, 256, key="kv-n")
    with st.spinner(t("variants.kv_running")):
        res = state.kv_compare(int(n))
    c1, c2, c3 = st.columns(3)
    c1.metric(t("variants.kv_speedup"), f"{res['speedup']:.1f}×")
    c2.metric(t("variants.kv_with"), f"{res['total_cache_s']:.3f} s")
    c3.metric(t("variants.kv_without"), f"{res['total_no_cache_s']:.3f} s")
    diffs = (res["max_abs_diff_cache_vs_full"], res["max_abs_diff_no_cache_vs_full"])
    st.caption(t("variants.kv_diff", cache=f"{diffs[0]:.1e}", no_cache=f"{diffs[1]:.1e}"))
    chart(figs.per_token_figure(res), key="kv-chart")
    rows = [
        {"t": t + 1, "ms_cache": 1000 * a, "ms_no_cache": 1000 * b}
        for t, (a, b) in enumerate(
            zip(res["step_seconds_cache"], res["step_seconds_no_cache"], strict=True)
        )
    ]
    table_exports(rows, "variants-kv-cache")
