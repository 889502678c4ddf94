"""Compare: every chosen variant and full attention on one input, errors and maps."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st
from kit import chart, controls, table_exports, url_choice, url_default, url_number, url_sync
from kit.url import names as url_names
from state import variants as state
from studios.variants.compare_inputs import param_widgets, source_widgets
from views import variants as figs


def drop_full(raw: str) -> list[str]:
    return [v for v in url_names(raw) if v != "full"]


DEFAULT_PICK = ["linformer", "performer", "longformer", "reformer", "bigbird", "mamba"]
FULL = "full (reference)"


def show() -> None:
    from engine.variants import REGISTRY

    with controls():
        chosen = source_widgets()
        names = list(REGISTRY)
        # "full" is always drawn as the reference; a lesson's link may name it too.
        linked = url_default("variants", DEFAULT_PICK, drop_full, key="var-picked", choices=names)
        picked = st.multiselect(
            "Variants", names, linked, format_func=lambda v: REGISTRY[v].title, key="var-picked"
        )
    n = chosen.pop("n_for_defaults")
    url_sync(variants=picked)
    params = {}
    with st.expander("Hyper-parameters"):
        for name in picked:
            if REGISTRY[name].params:
                params[name] = param_widgets(REGISTRY[name], n, chosen["source"])
    with st.spinner("Running the variants…"):
        traces, rows = state.compare(
            names=tuple(picked), params_json=json.dumps(params, sort_keys=True), **chosen
        )
    maps(traces, picked)
    st.subheader("Error against full attention")
    st.caption(
        "rel_error = ‖O − O_full‖/‖O_full‖; KL and JS (nats) compare the maps row by "
        "row (blank where the map is not a distribution); top5_overlap = share of the "
        "5 strongest keys both maps agree on; missed_mass = full-attention weight on "
        "keys the pattern cannot see. Mamba is a different model, not an approximation."
    )
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    table_exports(rows, "variants-errors")


# Head and view rerun only the maps: the variants have run and the table stays.
@st.fragment
def maps(traces: dict, picked: list[str]) -> None:
    from engine.variants import REGISTRY, compare

    ref = traces[FULL]
    n_heads = ref.maps["attention"].shape[1]
    with controls("maps"):
        label = f"head to show (0 … {n_heads - 1})"
        head = url_number(
            st.number_input, "head", label, 0, n_heads - 1, 0, key=f"var-head-{n_heads}"
        )
        view = url_choice(
            st.radio,
            "view",
            "Show",
            ["maps", "difference vs full", "pattern overlay"],
            ids=["maps", "difference", "overlay"],
            key="var-view",
            horizontal=True,
        )
    shown = [FULL, *picked] if view == "maps" else picked
    cols = st.columns(2)
    for i, name in enumerate(shown):
        tr = traces[name]
        amap = tr.maps["attention"]
        title = name if name in REGISTRY else FULL  # short: the flags follow
        with cols[i % 2]:
            if view == "maps":
                chart(figs.map_figure(amap, head, title=title), key=f"map-{name}")
            elif view == "difference vs full":
                diff = compare.difference(tr, ref)[0, head]
                fig = figs.map_figure(
                    amap, head, z=diff, title=f"{title} − full", diverging=True, value_name="Δα"
                )
                chart(fig, key=f"diff-{name}")
            elif "pattern" in tr.maps:
                fig = figs.overlay_figure(
                    ref.maps["attention"],
                    tr.maps["pattern"],
                    head,
                    title=f"full map; grey: {title} cannot see",
                )
                chart(fig, key=f"overlay-{name}")
            else:
                st.info(
                    f"{REGISTRY[name].title} has no fixed pattern: every key is reachable, "
                    "through an implied map."
                )
            st.caption(amap.note)
