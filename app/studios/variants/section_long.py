"""Long sequences: full attention of a long input, pooled block by block."""

from __future__ import annotations

import streamlit as st
from kit import chart, t, url_choice
from state import variants as state
from views import variants as figs


def show() -> None:
    from engine.trace import AttentionMap
    from engine.variants.inputs import LONG_LENGTH_LIMITS

    lo, hi = LONG_LENGTH_LIMITS
    st.markdown(t("variants.long_intro"))
    c1, c2, c3 = st.columns(3)
    n = url_choice(
        c1.select_slider,
        "n",
        t("variants.long_n", lo=lo, hi=hi),
        [256, 1024, 2048, 4096, 8192, 16384, 32768],
        default=5,
        key="long-n",
    )
    structure = c2.selectbox(
        t("variants.long_structure"),
        ["local", "random"],
        format_func=lambda s: t(f"variants.structure_{s}"),
        key="long-structure",
    )
    reduce = c3.selectbox(
        t("variants.long_pool"),
        ["mean", "max"],
        format_func=lambda r: t(f"variants.pool_{r}"),
        key="long-reduce",
    )
    with st.spinner(t("variants.long_running")):
        pooled, block, seconds, peak, path = state.pooled_map(int(n), structure, reduce)
    full_bytes = n * n * 4
    mib = dict(peak=f"{peak / 2**20:.1f}", full=f"{full_bytes / 2**20:.0f}")
    share = f"{100 * peak / full_bytes:.1f}"
    st.markdown(
        t("variants.long_stats", path=path, block=block, s=f"{seconds:.2f}", share=share, **mib)
    )
    labels = [f"{i * block}" for i in range(pooled.shape[-1])]
    amap = AttentionMap(
        weights=pooled,
        query_labels=labels,
        key_labels=labels,
        kind="self",
        pooling=block,
        normalized=False,
        note=t("variants.long_note", reduce=t(f"variants.pool_{reduce}"), block=block),
    )
    chart(
        figs.map_figure(amap, 0, title=t("variants.long_title", n=n), value_name=f"{reduce} p"),
        key="pooled",
    )
