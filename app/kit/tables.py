"""Tables whose column headers read in the reader's language.

A table's columns keep their data names (``rel_error``, ``mqar-256 ms/step``): those are
what the CSV/JSON exports and the tests read. Only the header shown changes, through
``st.column_config``: ``columns.<slug>`` in app/locales/<lang>/columns.toml, and for a
"<task> <unit>" column the unit alone (``columns.unit_<slug>``). A name with no entry is
shown with spaces for underscores. A missing value shows as "–", never "None".
"""

from __future__ import annotations

import re

import streamlit as st

from kit.fonts import label_px
from kit.i18n import catalog, language
from kit.presenter import PAGE_PX, presenting

# st.dataframe draws on a canvas the presenter's CSS cannot enlarge: on a projector a table
# up to this many rows is drawn as st.table (HTML, in the presenter's type); a longer one
# stays a grid that scrolls, since a room reads no more rows than one screen holds.
PRESENTED_ROWS = 30


# A presented table's type (the presenter's 1.1 rem) and the least it takes to fit the page
# (a room still reads 14 px; under it, the table scrolls sideways as before). A fitted
# table's cells keep 0.25 rem each side; a column then takes 15 px beside its longest run
# (measured in Chromium on the studio's wide tables: the header's padding and spacing), and
# 0.1 rem each side where 14 px would not fit otherwise.
PRESENTER_TABLE_PX, LEAST_TABLE_PX, COLUMN_PAD_PX = 18.7, 14.0, 15
FITTED = "font-size: {size}px; padding-left: {pad}; padding-right: {pad}"


def fitted_css(shown) -> str | None:
    """The CSS a presented table (a Styler) fits the page with: narrower padding and the
    presenter's type or smaller, down to LEAST_TABLE_PX; None where it fits as it is. A
    table is as wide as the longest run of each column (headers and cells wrap at spaces);
    the Chat page's cache table took 1,222 px in the presenter's type, and its last columns
    were hidden off the projector's edge."""
    frame = shown.data
    widest = 0.0
    for c in frame.columns:
        write = {"f": _as_on_screen, "b": _tick}.get(frame[c].dtype.kind, str)
        widest += label_px(_unbroken(" ".join([str(c), *map(write, frame[c])])), PRESENTER_TABLE_PX)
    n = len(frame.columns)
    if widest + 2 * COLUMN_PAD_PX * n <= PAGE_PX:  # fits with its padding
        return None
    size = max(
        LEAST_TABLE_PX, min(1.0, (PAGE_PX - COLUMN_PAD_PX * n) / widest) * PRESENTER_TABLE_PX
    )
    tight = widest * size / PRESENTER_TABLE_PX + COLUMN_PAD_PX * n > PAGE_PX
    return FITTED.format(size=round(size, 1), pad="0.1rem" if tight else "0.25rem")


_OPEN, _CLOSE = "（(「『【", "）)」』】，。、：；！？"
# A word between spaces, or a CJK character alone; a bracket or mark stays with its
# neighbour ("（MemN2N）" is one run: 跳权重命中率（MemN2N） took 133 px, not 92).
_UNBROKEN = re.compile(
    rf"[{_OPEN}]*(?:[^\s{_OPEN}{_CLOSE}\u2e80-\uffff]+|[\u2e80-\uffff])[{_CLOSE}]*"
)


def _unbroken(text: str) -> list[str]:
    """The runs a table cell never breaks (the line breaks Chromium takes in a table)."""
    return _UNBROKEN.findall(text) or [""]


def _tick(value) -> str:
    """A boolean as st.dataframe's checkbox column shows it: not "True" in every language."""
    return "✓" if value else "✗"


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
    return f"{head} {unit_label}" if unit_label else name.replace("_", " ")


def missing_as_dash(frame, numbers: bool = True):
    """``frame`` with "–" where a value is missing. A text column takes the dash as it is;
    with ``numbers``, a number column with a gap becomes text, its numbers written out (a
    column of numbers and strings would make Arrow fail on every render); a full number
    column stays numbers. st.dataframe keeps every number column numbers (it sorts them as
    numbers, and its ``placeholder`` writes the gap); st.table needs the text."""
    from pandas.api.types import is_numeric_dtype

    frame = frame.copy()
    for c in frame.columns:
        if not is_numeric_dtype(frame[c]):
            frame[c] = frame[c].map(_dash)
        elif numbers and frame[c].isna().any():
            frame[c] = frame[c].map(_number).astype(object)
    return frame


def _number(value) -> str:
    if value != value:  # NaN: the gap
        return "–"
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:.6g}"


# A number as a table writes it: "0.0833", "1,200", "-3e-04", "12%".
_NUMBER = re.compile(r"[-−+]?\d[\d,]*(\.\d+)?(e[-+]?\d+)?%?")


def _numbers(column) -> bool:
    """Whether every value of a text column reads as a number or is a gap ("–"), one at least."""
    texts = [str(v).strip() for v in column]
    return any(x != "–" for x in texts) and all(x == "–" or _NUMBER.fullmatch(x) for x in texts)


def _dash(value):
    missing = value is None or (isinstance(value, float) and value != value)
    return "–" if missing else value if isinstance(value, str) else str(value)


def _of_kind(frame, kind: str) -> list:
    """The columns whose numpy dtype is of ``kind`` ("f": floats, "b": booleans)."""
    return [c for c in frame.columns if frame[c].dtype.kind == kind]


def _as_on_screen(value: float) -> str:
    """A float as st.dataframe writes it on a screen (up to 4 decimals, no trailing zeros):
    st.table would pad 92.01 to "92.0100", a precision the number does not have. A value
    that 4 decimals would round to 0 keeps three significant digits."""
    if value and abs(value) < 5e-5:
        return f"{value:.3g}"
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def data_table(rows, **kwargs) -> None:
    """``st.dataframe`` of ``rows`` (a DataFrame or records), headers translated, missing
    values as "–", no index; as wide as its frame, scrolling sideways when wider. On a
    projector, a table of up to ``PRESENTED_ROWS`` rows is HTML in the presenter's type."""
    import pandas as pd  # here, not at import: every page imports kit
    from pandas.api.types import is_numeric_dtype

    rows = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    headers = {c: header(str(c)) for c in rows.columns}
    as_table = presenting() and len(rows) <= PRESENTED_ROWS
    as_table = as_table and len(set(headers.values())) == len(headers)
    frame = missing_as_dash(rows, numbers=as_table)
    # A column of numbers that is text (a gap, "–", made it so in st.table; or numbers
    # written out, a rate as "3e-04"): st.table and st.dataframe set text flush left.
    right = [c for c in frame.columns if not is_numeric_dtype(frame[c]) and _numbers(frame[c])]
    if as_table:
        shown = frame.rename(columns=headers).style.hide(axis="index")
        shown = shown.format(_as_on_screen, subset=_of_kind(shown.data, "f"))
        shown = shown.format(_tick, subset=_of_kind(shown.data, "b"))
        flush = [headers[c] for c in right]
        # !important: st.table sets each cell's alignment inline, by the column's Arrow type.
        shown = shown.set_properties(flush, **{"text-align": "right !important"})
        css = fitted_css(shown)
        if css is not None:  # its own type and padding, over the presenter's CSS (an id wins)
            shown = shown.set_table_styles([dict(selector="th, td", props=css)])
        heads = {h: [dict(selector="th", props="text-align: right !important")] for h in flush}
        shown = shown.set_table_styles(heads, overwrite=False)  # their headers too
        st.table(shown, border="horizontal")
        return
    config = {
        c: st.column_config.Column(h, alignment="right" if c in right else None)
        for c, h in headers.items()
    }
    kwargs.setdefault("width", "stretch")
    # A missing number stays a number ("–" drawn in its place): a column with a gap sorted
    # as text put 74,256 before 8,192 and "–" anywhere.
    st.dataframe(frame, hide_index=True, column_config=config, placeholder="–", **kwargs)
