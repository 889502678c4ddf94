"""Query-param state: a view is shareable because its widgets live in the URL."""

from __future__ import annotations

import streamlit as st


def url_default(key: str, default, cast=str):
    """Read a widget default from the URL, falling back quietly when it is malformed."""
    raw = st.query_params.get(key)
    if raw is None:
        return default
    try:
        return cast(raw)
    except (TypeError, ValueError):
        return default


def url_sync(**values) -> None:
    """Write the current widget values to the URL (only when they changed, to avoid reruns)."""
    for key, value in values.items():
        text = str(value)
        if st.query_params.get(key) != text:
            st.query_params[key] = text
