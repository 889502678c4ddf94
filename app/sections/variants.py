"""The Variants lab's parts a lesson step shows too: a sweep's cost profile with its tables
and exports, and Compare's map panels as one HTML grid (views.variants, views.variants_html);
and the Cost profile section whole (its controls, the queued sweep and its drawing).
"""

from __future__ import annotations

import streamlit as st
from kit import (
    chart,
    controls,
    data_table,
    html_chart,
    ints,
    notes,
    table_exports,
    url_choice,
    url_number,
)
from kit.i18n import t, variant_title
from kit.url import url_multiselect
from state import variants as state
from views import variants as figs
from views.heatmap import DIFFERENCE_FLOOR, map_grid
from views.variants import loglog_figure
from views.variants_html import map_grid_html

from engine import profile as cost_model
from engine.variants import REGISTRY
from sections import claims as claims_section

# A sweep's budgets as the page offers them: a class shares the server, so narrower than the
# engine's (engine.profile.BUDGETS), which a notebook may use whole.
TIME_S, MEMORY_GIB = (5, 120), (0.25, 4.0)
LENGTHS = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]  # the sweep's offer
HEAD_SIZES = [32, 64, 128]


def pick(widget, param: str, n: int, default: int, *, key: str) -> int:
    """The layer or head to show (``param``: "layer" or "head"), 0 … n − 1; no picker where
    there is only one: a control that cannot move tells the reader nothing."""
    if n == 1:
        return 0
    label = t(f"variants.{param}", last=n - 1)
    return url_number(widget, param, label, 0, n - 1, default, key=key)


def draw_profile(tables: dict, tolerance: float) -> None:
    """A sweep's measured time and memory against n, its fitted exponents, its table and the
    cells it did not run."""
    measured = tables["measured"]
    if measured:
        title, y_title = t("variants.time_title"), t("variants.seconds")
        chart(loglog_figure(measured, "median_s", title=title, y_title=y_title), "chart-time")
        title = t("variants.memory_title")
        fig = loglog_figure(
            measured, "peak_mib", predicted="predicted_mib", title=title, y_title="MiB"
        )
        chart(fig, key="chart-mem")
        st.markdown(t("variants.exponents", tolerance=tolerance))
        data_table(tables["exponents"])
        table_exports(tables["exponents"], "variants-exponents")
        st.markdown(t("variants.measurements"))
        data_table(tables["table"])
        table_exports(tables["table"], "variants-profile")
    if tables["skipped"]:
        st.markdown(t("variants.not_run"))
        data_table(tables["skipped"])
        table_exports(tables["skipped"], "variants-skipped")


def draw_maps(panels: list[dict], key: str, view: str = "maps") -> None:
    """Compare's map panels as one HTML grid (the figure behind it exported as Plotly):
    the lab's maps, its differences (Δα, diverging) or its overlays (hidden cells grey)."""
    value = "Δα" if view == "difference" else "α"
    kw = dict(diverging=view == "difference", value_name=value, grey_gaps=view == "overlay")
    if view == "difference":  # an exact variant's Δα of 4e-7 filled its panel with colour
        panels = [dict(p, least=DIFFERENCE_FLOOR) for p in panels]
    html_chart(map_grid_html(panels, **kw), f"{key}-{view}", lambda: map_grid(panels, **kw))


def profile() -> None:
    notes("profile-intro").markdown(t("variants.profile_intro"))
    with controls("profile"):
        names, title = list(REGISTRY), lambda v: variant_title(REGISTRY[v])
        label, kw = t("variants.profile_variants"), dict(key="profile-variants", format_func=title)
        picked = url_multiselect("variants", label, names, names, **kw)
        lengths = url_multiselect(
            "lengths",
            t("variants.lengths", lo=cost_model.LENGTH_LIMITS[0], hi=cost_model.LENGTH_LIMITS[1]),
            LENGTHS,
            cost_model.DEFAULT_LENGTHS,
            key="profile-lengths",
            cast=ints,
        )
        c1, c2, c3 = st.columns(3)
        label = t("variants.head_size_d")
        d = url_choice(c1.selectbox, "d", label, HEAD_SIZES, default=1, key="profile-d")
        (lo, hi), default_s = TIME_S, int(cost_model.TIME_BUDGET_S)
        label = t("variants.time_budget", lo=lo, hi=hi)
        time_budget = url_number(c2.slider, "time", label, lo, hi, default_s, key="profile-time")
        (lo, hi), default_gib = MEMORY_GIB, cost_model.MEMORY_BUDGET / 2**30
        label = t("variants.mem_budget", lo=lo, hi=hi)
        kw = dict(key="profile-mem", cast=float, step=0.25)
        mem = url_number(c3.slider, "memory", label, lo, hi, default_gib, **kw)
        run = st.button(t("variants.run_sweep"), type="primary", key="profile-run")
    predictions = state.predictions(picked, lengths, d, mem * 2**30)
    chart(figs.predicted_memory_figure(predictions), key="chart-predicted")
    with st.expander(t("variants.prediction")):
        data_table([{k: v for k, v in r.items() if k != "predicted_mib"} for r in predictions])
        table_exports(predictions, "variants-predictions")
    request = (tuple(picked), tuple(sorted(set(lengths))), d, time_budget, mem * 2**30)
    items, status = state.sweep_session(request if run else None)
    if status == "stopped":
        st.warning(t("variants.sweep_stopped", n=len(items)))
    if not items:
        st.info(t("variants.sweep_hint"))
        return
    draw_profile(state.sweep_tables(items), cost_model.EXPONENT_TOLERANCE)
    claims_section.show("flash", "oom")  # the seed's FlashAttention and 8K claims, measured
