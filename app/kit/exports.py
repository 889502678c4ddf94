"""Downloads of a view's Trace in the formats the engine reads back."""

from __future__ import annotations

import streamlit as st


def export_buttons(trace, stem: str) -> None:
    """Download the Trace as JSON and NPZ: the same format the engine reads back."""
    c1, c2 = st.columns(2)
    c1.download_button(
        "Download trace (JSON)",
        trace.to_json(),
        f"{stem}.json",
        mime="application/json",
        key=f"dl-json-{stem}",
    )
    c2.download_button(
        "Download trace (NPZ)",
        trace.to_npz(),
        f"{stem}.npz",
        mime="application/octet-stream",
        key=f"dl-npz-{stem}",
    )
