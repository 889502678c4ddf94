"""The Variants lab's parts a lesson step shows too: a sweep's cost profile with its tables
and exports, and Compare's map panels as one HTML grid (views.variants, views.variants_html).
"""

from __future__ import annotations

import streamlit as st
from kit import chart, data_table, html_chart, table_exports
from kit.i18n import t
from views.heatmap import map_grid
from views.variants import loglog_figure
from views.variants_html import map_grid_html


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
    html_chart(map_grid_html(panels, **kw), f"{key}-{view}", lambda: map_grid(panels, **kw))
