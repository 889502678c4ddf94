"""Reading numbers back out of a Plotly figure spec as the browser receives it."""

from __future__ import annotations

import base64

import numpy as np


def z_values(z) -> np.ndarray:
    """A heatmap's z as floats, flattened: Plotly sends a numeric array as base64
    (a dict with bdata/dtype) but keeps a list when any cell is None (masked)."""
    if isinstance(z, dict):
        return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).astype(float)
    return np.array(z, dtype=float).ravel()  # None -> nan


def shown_numbers(column) -> np.ndarray:
    """A table column as the page shows it, back as floats: numbers, or (st.table on a
    projector) text with "–" in the gap (kit.tables.missing_as_dash)."""
    out = [np.nan if v in ("–", None) else float(str(v).replace(",", "")) for v in column]
    return np.array(out)
