"""The two calls every page makes: ``page_top()`` first, ``page_bottom(...)`` last.

Top: the presenter toggle and its CSS, and a fresh list of the figures drawn. Bottom: the
link to this view and the export row (both hidden while presenting).
"""

from __future__ import annotations

from kit.exports import Rows, reset_figures, view_exports
from kit.presenter import presenter_toggle
from kit.url import current_link, link_box


def page_top() -> bool:
    """Call first on every page; returns whether presenter mode is on."""
    reset_figures()
    return presenter_toggle()


def page_bottom(stem: str, trace=None, tables: dict[str, Rows] | None = None) -> None:
    """Call last: "Copy link to this view", then the downloads of this view."""
    link_box()
    view_exports(stem, current_link(), trace, tables)
