"""bertviz's head and model views, drawn from vendored JavaScript (nothing fetched)."""

import streamlit as st
import views.bertviz_view as bv
from kit import friendly_errors, t, url_choice
from kit.i18n import Lazy
from state.transformer import READINGS, read_heads
from studios.transformer.model_pickers import layer_head


@st.cache_data(max_entries=16, show_spinner=Lazy("transformer.spinner_bertviz"))
def page_html(view: str, arguments: dict, layer: int) -> str:
    """``arguments`` are bertviz_view's keyword arguments (numpy weights and token lists)."""
    if view == "head":
        return bv.head_view_html(**arguments, layer=layer)
    return bv.model_view_html(**arguments)


def show(s) -> None:
    layer, _ = layer_head(s.raw)
    view = url_choice(
        st.radio,
        "view",
        t("transformer.bertviz_view"),
        ["head view", "model view"],
        ids=["head", "model"],
        key="bertviz-view",
        horizontal=True,
        format_func=lambda v: t(f"transformer.bertviz_{v.split()[0]}"),
    )
    one_map = len(s.trace.maps) == 1
    maps = {
        k: read_heads(m, READINGS[0], s.merge, s.hide, s.sinks) if one_map else m
        for k, m in s.trace.maps.items()
    }
    if not one_map and (s.merge or s.hide):
        st.caption(t("transformer.bertviz_raw"))
    n_tok = max(max(m.shape[2:]) for m in maps.values())
    n_layers = s.raw.shape[0]
    with friendly_errors(t("transformer.bertviz_what")):
        html = page_html(view.split()[0], bv.trace_arguments(maps), layer)
        bv.render(
            html,
            height=min(2400, 200 + 24 * n_tok) if view == "head view" else 160 + 140 * n_layers,
        )
    st.caption(t("transformer.bertviz_caption"))
