"""Compare: every chosen variant and full attention on one input, errors and maps."""

from __future__ import annotations

import json

import numpy as np
import streamlit as st
from kit import (
    chart,
    controls,
    data_table,
    t,
    table_exports,
    url_choice,
    url_number,
)
from kit.i18n import map_note, variant_title
from kit.url import names as url_names
from state import variants as state
from studios.variants.compare_inputs import param_widgets, pick_variants, source_widgets
from views import variants as figs


def drop_full(raw: str) -> list[str]:
    return [v for v in url_names(raw) if v != "full"]


DEFAULT_PICK = ["linformer", "performer", "longformer", "reformer", "bigbird", "mamba"]
FULL = "full (reference)"  # the reference Trace's name in state.compare's answer


def show() -> None:
    from engine.variants import REGISTRY

    with controls():
        chosen = source_widgets()
        # "full" is always drawn as the reference; a lesson's link may name it too.
        picked = pick_variants(list(REGISTRY), DEFAULT_PICK, drop_full, "var-picked")
    if chosen is None:  # an upload is awaited
        return
    n = chosen.pop("n_for_defaults")
    defaults = chosen.pop("defaults", {})
    params = {}
    with st.expander(t("variants.hyper")):
        for name in picked:
            if REGISTRY[name].params:
                # Budgets sized for n: a new length starts from its own defaults.
                where = chosen["source"] + (str(n) if defaults else "")
                params[name] = param_widgets(REGISTRY[name], n, where, defaults.get(name))
    with st.spinner(t("variants.running")):
        traces, rows = state.compare(
            names=tuple(picked), params_json=json.dumps(params, sort_keys=True), **chosen
        )
    maps(traces, picked)
    st.subheader(t("variants.error_header"))
    st.caption(t("variants.error_caption"))
    data_table(rows)
    table_exports(rows, "variants-errors")


# Head and view rerun only the maps: the variants have run and the table stays.
@st.fragment
def maps(traces: dict, picked: list[str]) -> None:
    from engine.variants import REGISTRY, compare

    ref = traces[FULL]
    n_heads = ref.maps["attention"].shape[1]
    with controls("maps"):
        label = t("variants.head", last=n_heads - 1)
        head = url_number(st.number_input, "head", label, 0, n_heads - 1, 0, key="var-head")
        view = url_choice(
            st.radio,
            "view",
            t("variants.show"),
            ["maps", "difference vs full", "pattern overlay"],
            ids=["maps", "difference", "overlay"],
            key="var-view",
            horizontal=True,
            format_func=lambda v: t(f"variants.view_{v.split()[0]}"),
        )
    shown = [FULL, *picked] if view == "maps" else picked
    panels = []
    for name in shown:
        tr = traces[name]
        amap = tr.maps["attention"]
        title = name if name in REGISTRY else t("variants.full")  # short: the flags follow
        panel = dict(x=amap.key_labels, y=amap.query_labels, title=title, flags=amap.flags)
        if view == "maps":
            panels.append({**panel, "z": amap.weights[0, head]})
        elif view == "difference vs full":
            diff = compare.difference(tr, ref)[0, head]
            panels.append({**panel, "z": diff, "title": t("variants.minus_full", name=title)})
        elif "pattern" in tr.maps:  # full attention where the variant can see, blank elsewhere
            hidden = tr.maps["pattern"].weights[0, head] == 0
            z = np.where(hidden, np.nan, ref.maps["attention"].weights[0, head])
            panels.append({**panel, "z": z, "title": t("variants.overlay_title", name=title)})
        else:
            st.info(t("variants.no_pattern", name=variant_title(REGISTRY[name])))
    if panels:
        diverging = view == "difference vs full"
        grey = view == "pattern overlay"  # hidden cells are blank: the grey behind shows
        value = "Δα" if diverging else "α"
        fig = figs.map_grid(panels, diverging=diverging, value_name=value, grey_gaps=grey)
        chart(fig, key=f"maps-{view.split()[0]}")
    notes = dict.fromkeys(traces[name].maps["attention"].note for name in shown)
    st.caption(" · ".join(map_note(n) for n in notes if n))
