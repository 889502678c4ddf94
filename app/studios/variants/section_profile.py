"""Cost profile: measured time and peak memory against n, with the models beside them."""

from __future__ import annotations

import pandas as pd
import streamlit as st
from kit import table_exports
from state import variants as state
from views import variants as figs


def show() -> None:
    from engine import profile
    from engine.variants import REGISTRY

    st.markdown(
        "Median of 3 timed runs after one warm-up, one torch thread. Peak memory: "
        "the most tensor storage live at once during the warm-up, counted op by op "
        "(engine/profile.py says how); dashed lines are the memory models. The first "
        "sweep in a server process also loads torch's dispatch machinery (≈ 4 s once, "
        "outside the time budget)."
    )
    picked = st.multiselect(
        "Variants to profile", list(REGISTRY), list(REGISTRY), key="profile-variants"
    )
    options = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
    lengths = st.multiselect(
        f"Lengths n ({profile.LENGTH_LIMITS[0]} … {profile.LENGTH_LIMITS[1]})",
        options,
        list(profile.DEFAULT_LENGTHS),
    )
    c1, c2, c3 = st.columns(3)
    d = c1.selectbox("head size d", [32, 64, 128], index=1)
    time_budget = c2.slider("time budget, s (5 … 120)", 5, 120, int(profile.TIME_BUDGET_S))
    mem_gib = c3.slider("memory budget per run, GiB (0.25 … 4)", 0.25, 4.0, 2.0, step=0.25)
    budget = mem_gib * 2**30
    predictions = [
        {
            "variant": v,
            "n": n,
            "predicted_memory": profile.human_bytes(profile.predict_bytes(v, n, d, 1)),
            "predicted_gflop": profile.flops(v, n, d, 1) / 1e9,
            "over_budget": profile.predict_bytes(v, n, d, 1) > budget,
        }
        for n in sorted(lengths)
        for v in picked
    ]
    with st.expander("Prediction before running (memory model vs budget)"):
        st.dataframe(pd.DataFrame(predictions), hide_index=True)
        table_exports(predictions, "variants-predictions")
    sweep_state = st.session_state.setdefault("variants-sweep", {"items": [], "status": "idle"})
    if st.button("Run sweep", type="primary"):
        sweep_state["request"] = (
            tuple(picked),
            tuple(sorted(set(lengths))),
            d,
            time_budget,
            budget,
        )
    if request := sweep_state.get("request"):  # a rerun while it runs keeps waiting for it
        items, stopped = state.sweep(*request)
        sweep_state.update(items=items, status="stopped" if stopped else "done", request=None)
    items = sweep_state["items"]
    points = [p for p in items if isinstance(p, profile.Point)]
    skips = [s for s in items if isinstance(s, profile.Skip)]
    if sweep_state["status"] == "stopped":
        st.warning(f"Sweep stopped after {len(items)} points; showing what was measured.")
    if not items:
        st.info("Run a sweep to measure time and memory.")
        return
    rows = [
        {**r, "peak_mib": r["peak_bytes"] / 2**20, "predicted_mib": r["predicted_bytes"] / 2**20}
        for r in profile.as_rows(points)
    ]
    if rows:
        st.plotly_chart(
            figs.loglog_figure(rows, "median_s", title="Median time vs n", y_title="seconds"),
            key="chart-time",
        )
        st.plotly_chart(
            figs.loglog_figure(
                rows,
                "peak_mib",
                predicted="predicted_mib",
                title="Peak memory vs n (measured; dashed: model)",
                y_title="MiB",
            ),
            key="chart-mem",
        )
        summary = profile.as_rows(profile.summarize(points))
        st.markdown(
            f"**Fitted log-log exponents** (tolerance ±{profile.EXPONENT_TOLERANCE}"
            " of the FLOP model's slope)"
        )
        st.dataframe(pd.DataFrame(summary), hide_index=True)
        table_exports(summary, "variants-exponents")
        st.markdown("**Measurements**")
        table = [{k: v for k, v in r.items() if k != "times_s"} for r in rows]
        st.dataframe(pd.DataFrame(table), hide_index=True)
        table_exports(table, "variants-profile")
    if skips:
        st.markdown("**Not run** (trimmed to stay within the budgets)")
        skipped = profile.as_rows(skips)
        st.dataframe(pd.DataFrame(skipped), hide_index=True)
        table_exports(skipped, "variants-skipped")
