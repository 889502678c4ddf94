"""The seed's claims, checked, drawn in one expander on the page each topic belongs to;
views.claims reads the measured file and builds the rows."""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from kit import data_table
from kit.i18n import t
from views.claims import COMMAND, caption, load, missing_message, table_rows


def show(*topics: str, directory: Path | None = None) -> None:
    """The claims of ``topics`` as tables in one expander, each under the seed's words."""
    result = load(directory)
    with st.expander(t("claims.title")):
        if result is None:
            st.info(missing_message())
            return
        for topic in topics:
            st.markdown(t("claims.quote", claim=t(f"claims.wording.{topic}")))
            rows = table_rows(result, topic)
            if rows:
                data_table(rows)
            else:
                st.info(t("claims.topic_missing", command=COMMAND))
        st.caption(caption(result))
