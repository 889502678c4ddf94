"""A table on a projector: st.dataframe draws on a canvas the presenter's CSS cannot
enlarge (the Alignment "Measured" table read small from the back of a room), so presenter
mode draws a table of up to ``PRESENTED_ROWS`` rows as HTML in its own larger type."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest
from kit.presenter import _CSS_PRESENTING
from kit.tables import LEAST_TABLE_PX, PRESENTED_ROWS, PRESENTER_TABLE_PX
from streamlit.testing.v1 import AppTest


def _script(n_rows: int) -> None:
    from kit.tables import data_table

    rows = [{"aer": 0.0833, "bleu": 92.01, "steps": 2400, "model": "a", "causal": True}]
    rows += [{"aer": None, "bleu": 8.6, "steps": 1200, "model": "b", "causal": False}] * (
        n_rows - 1
    )
    data_table(rows)


def _drawn(present: bool, n_rows: int = 2) -> AppTest:
    at = AppTest.from_function(_script, args=(n_rows,))
    if present:
        at.query_params["present"] = "1"
    at.run()
    assert not at.exception
    return at


def shown(table) -> list[list[str]]:
    """What the browser writes in each cell: the Styler's display values."""
    values = table.proto.arrow_data.styler.display_values
    frame = pa.ipc.open_stream(values).read_all().to_pandas()
    return [list(frame.columns)] + frame.astype(str).values.tolist()


def test_a_projector_gets_the_table_as_html_with_the_screens_numbers():
    at = _drawn(present=True)
    assert len(at.table) == 1 and not at.dataframe
    cells = shown(at.table[0])
    assert cells[0][:4] == ["aer", "BLEU", "steps", "model"]  # in the reader's language
    assert cells[1] == ["0.0833", "92.01", "2400", "a", "✓"]  # not "92.0100", not "True"
    assert cells[2] == ["–", "8.6", "1200", "b", "✗"]
    assert "[data-testid=stTable]" in _CSS_PRESENTING  # the presenter's type reaches it


@pytest.mark.parametrize(("present", "n_rows"), [(False, 2), (True, PRESENTED_ROWS + 1)])
def test_a_screen_and_a_long_table_keep_the_scrolling_grid(present, n_rows):
    at = _drawn(present, n_rows)
    assert len(at.dataframe) == 1 and not at.table


def _wide(columns: int) -> None:
    from kit.tables import data_table

    row = {f"agreement after eviction {i}": 262.0781 + i for i in range(columns)}
    data_table([row, row])


@pytest.mark.parametrize(("columns", "fitted"), [(5, False), (13, True)])
def test_a_wide_table_takes_the_type_that_fits_the_projector(columns, fitted):
    """The Chat page's cache table (13 columns) took 1,222 px of a 956-px projector page in
    the presenter's type, its last columns off the edge: a table that wide takes its own
    smaller type, 14 px at the least, and narrower cell padding; a narrow one keeps 18.7."""
    at = AppTest.from_function(_wide, args=(columns,))
    at.query_params["present"] = "1"
    at.run()
    assert not at.exception and len(at.table) == 1
    styles = at.table[0].proto.arrow_data.styler.styles
    sizes = [float(px) for px in re.findall(r"font-size:\s*([\d.]+)px", styles)]
    if fitted:
        assert sizes and len(set(sizes)) == 1 and LEAST_TABLE_PX <= sizes[0] <= PRESENTER_TABLE_PX
    else:
        assert not sizes
