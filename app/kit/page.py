"""The two calls every page makes: ``page_top(page)`` first, ``page_bottom(...)`` last.

Top: the presenter toggle and its CSS, and a fresh list of the figures drawn. Bottom: the
link to this view and the export row (both hidden while presenting).
"""

from __future__ import annotations

import streamlit as st

from kit.exports import Rows, reset_figures, view_exports
from kit.presenter import presenter_toggle
from kit.url import PAGE_KEY, current_link, link_box


def page_top(page: str) -> bool:
    """Call first on every page, with its url name (``kit.params.PAGES``): its URL widgets
    then read that page's declared parameters. Returns whether presenter mode is on."""
    st.session_state[PAGE_KEY] = page
    reset_figures()
    return presenter_toggle()


def page_bottom(stem: str, trace=None, tables: dict[str, Rows] | None = None) -> None:
    """Call last: "Copy link to this view", then the downloads of this view."""
    link_box()
    view_exports(stem, current_link(), trace, tables)
