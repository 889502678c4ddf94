"""Tables whose column headers read in the reader's language.

A table's columns keep their data names (``rel_error``, ``mqar-256 ms/step``): those are
what the CSV/JSON exports and the tests read. Only the header shown changes, through
``st.column_config``: ``columns.<slug>`` in app/locales/<lang>/columns.toml, and for a
"<task> <unit>" column the unit alone (``columns.unit_<slug>``). A name with no entry is
shown as it is.
"""

from __future__ import annotations

import re

import streamlit as st

from kit.i18n import catalog, language


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def header(name: str) -> str:
    """The header shown for column ``name`` in the reader's language."""
    found = catalog(language())
    label = found.get(f"columns.{_slug(name)}")
    if label is not None:
        return label
    head, _, unit = name.rpartition(" ")
    unit_label = found.get(f"columns.unit_{_slug(unit)}") if head else None
    return f"{head} {unit_label}" if unit_label else name


def data_table(rows, **kwargs) -> None:
    """``st.dataframe`` of ``rows`` (a DataFrame or records), headers translated, no index."""
    import pandas as pd  # here, not at import: every page imports kit

    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    config = {c: st.column_config.Column(header(str(c))) for c in frame.columns}
    st.dataframe(frame, hide_index=True, column_config=config, **kwargs)
