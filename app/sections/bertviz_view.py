"""bertviz's offline page (views.bertviz_view builds it) shown in the app, in an iframe."""

from __future__ import annotations

import streamlit as st


def render(html: str, height: int = 600) -> None:
    """Show a page from :func:`head_view_html` / :func:`model_view_html` in the app."""
    st.iframe(html, height=height)
