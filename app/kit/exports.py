"""Downloads of a view's Trace and tables in the formats the engine and a notebook read back."""

from __future__ import annotations

import io
import json

import streamlit as st

from kit.i18n import t


def export_buttons(trace, stem: str) -> None:
    """Download the Trace as JSON and NPZ: the same format the engine reads back.

    The files are written when a button is clicked, not on every rerun: a Transformer
    Trace with its queries and keys is megabytes, serialised and sent for each edit.
    """
    c1, c2 = st.columns(2)
    c1.download_button(
        t("kit.download_trace_json"),
        trace.to_json,
        f"{stem}.json",
        mime="application/json",
        key=f"dl-json-{stem}",
    )
    c2.download_button(
        t("kit.download_trace_npz"),
        trace.to_npz,
        f"{stem}.npz",
        mime="application/octet-stream",
        key=f"dl-npz-{stem}",
    )


def table_exports(rows: list[dict], stem: str) -> None:
    """CSV and JSON downloads of one table, written when clicked."""

    def csv() -> str:
        import pandas as pd

        buf = io.StringIO()
        pd.DataFrame(rows).to_csv(buf, index=False)
        return buf.getvalue()

    c1, c2 = st.columns(2)
    c1.download_button(
        t("kit.download_csv"), csv, f"{stem}.csv", mime="text/csv", key=f"csv-{stem}"
    )
    c2.download_button(
        t("kit.download_json"),
        lambda: json.dumps(rows, default=str, indent=1),
        f"{stem}.json",
        mime="application/json",
        key=f"json-{stem}",
    )
