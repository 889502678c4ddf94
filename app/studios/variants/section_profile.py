"""Cost profile: measured time and peak memory against n, with the models beside them."""

from __future__ import annotations

import streamlit as st
from kit import chart, data_table, t, table_exports
from state import variants as state
from views import variants as figs


def show() -> None:
    from engine import profile
    from engine.variants import REGISTRY

    st.markdown(t("variants.profile_intro"))
    picked = st.multiselect(
        t("variants.profile_variants"), list(REGISTRY), list(REGISTRY), key="profile-variants"
    )
    options = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]
    lengths = st.multiselect(
        t("variants.lengths", lo=profile.LENGTH_LIMITS[0], hi=profile.LENGTH_LIMITS[1]),
        options,
        list(profile.DEFAULT_LENGTHS),
        key="profile-lengths",
    )
    c1, c2, c3 = st.columns(3)
    d = c1.selectbox(t("variants.head_size_d"), [32, 64, 128], index=1, key="profile-d")
    time_budget = c2.slider(
        t("variants.time_budget"), 5, 120, int(profile.TIME_BUDGET_S), key="profile-time"
    )
    mem_gib = c3.slider(t("variants.mem_budget"), 0.25, 4.0, 2.0, step=0.25, key="profile-mem")
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
    with st.expander(t("variants.prediction")):
        data_table(predictions)
        table_exports(predictions, "variants-predictions")
    sweep_state = st.session_state.setdefault("variants-sweep", {"items": [], "status": "idle"})
    if st.button(t("variants.run_sweep"), type="primary", key="profile-run"):
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
        st.warning(t("variants.sweep_stopped", n=len(items)))
    if not items:
        st.info(t("variants.sweep_hint"))
        return
    rows = [
        {**r, "peak_mib": r["peak_bytes"] / 2**20, "predicted_mib": r["predicted_bytes"] / 2**20}
        for r in profile.as_rows(points)
    ]
    if rows:
        chart(
            figs.loglog_figure(
                rows, "median_s", title=t("variants.time_title"), y_title=t("variants.seconds")
            ),
            key="chart-time",
        )
        chart(
            figs.loglog_figure(
                rows,
                "peak_mib",
                predicted="predicted_mib",
                title=t("variants.memory_title"),
                y_title="MiB",
            ),
            key="chart-mem",
        )
        summary = profile.as_rows(profile.summarize(points))
        st.markdown(t("variants.exponents", tolerance=profile.EXPONENT_TOLERANCE))
        data_table(summary)
        table_exports(summary, "variants-exponents")
        st.markdown(t("variants.measurements"))
        table = [{k: v for k, v in r.items() if k != "times_s"} for r in rows]
        data_table(table)
        table_exports(table, "variants-profile")
    if skips:
        st.markdown(t("variants.not_run"))
        skipped = profile.as_rows(skips)
        data_table(skipped)
        table_exports(skipped, "variants-skipped")
