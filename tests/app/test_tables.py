"""Table headers in the reader's language, data column names untouched."""

import re

import pytest
from kit import tables


@pytest.mark.parametrize(
    "lang, name, shown",
    [
        ("zh", "rel_error", "相对输出误差"),
        ("zh", "mqar-256 ms/step", "mqar-256 毫秒/步"),
        ("zh", "top5_overlap", "前 5 重合"),
        ("en", "rel_error", "relative output error"),
        ("en", "mqar-512 MiB", "mqar-512 MiB"),
        ("zh", "a column nobody named", "a column nobody named"),
    ],
)
def test_headers(monkeypatch, lang, name, shown):
    monkeypatch.setattr(tables, "language", lambda: lang)
    assert tables.header(name) == shown


def test_variants_tables_keep_their_data_names():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file("../../app/studios/variants.py", default_timeout=300)
    at.query_params.update(section="profile", lang="zh")
    at.run()
    assert not at.exception
    columns = {c for df in at.dataframe for c in map(str, df.value.columns)}
    assert "predicted_memory" in columns  # what the exports and the CSV read


def test_a_missing_number_is_a_dash_not_none():
    """st.dataframe draws a missing number as "None" whatever a Styler says: a number
    column with a gap is written out as text, "–" in the gap (issue 29)."""
    import pandas as pd

    shown = tables.missing_as_dash(
        pd.DataFrame({"variant": ["a", "b"], "missed_mass": [0.35864, None], "n": [3, 4]})
    )
    assert list(shown["missed_mass"]) == ["0.35864", "–"]
    assert list(shown["n"]) == [3, 4]  # a full number column stays numbers


def test_every_table_goes_through_data_table():
    """A page that called ``st.dataframe`` itself showed "None" for a missing number (the
    Alignment page's measured AER of a greedy decode) and English-only data headers; one
    that called ``st.table`` set a column of numbers with a gap flush left (Memory's
    every-task table)."""
    from pathlib import Path

    app = Path(tables.__file__).resolve().parents[1]
    calls = [
        f"{p.relative_to(app)}:{i}"
        for p in sorted(app.rglob("*.py"))
        if p.name != "tables.py"
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if "st.dataframe(" in line or "st.table(" in line
    ]
    assert calls == []


def test_the_alignment_table_shows_a_dash_where_there_is_no_aer():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file("../../app/studios/alignment.py", default_timeout=300)
    at.query_params.update(section="measured")
    at.run()
    assert not at.exception
    shown = at.dataframe[0]  # numbers, sorted as numbers, the gap written "–"
    assert shown.value["AER"].isna().any() and shown.proto.placeholder == "–"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_two_columns_of_a_table_share_a_header(monkeypatch, lang):
    """Compare's table holds a variant's id and its title: two headers, not "variant" twice."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file("../../app/studios/variants.py", default_timeout=300)
    at.query_params.update(lang=lang)
    at.run()
    assert not at.exception and at.dataframe
    monkeypatch.setattr(tables, "language", lambda: lang)
    for df in at.dataframe:
        shown = [tables.header(str(c)) for c in df.value.columns]
        assert len(set(shown)) == len(shown), shown


def _gapped_table():
    import pandas as pd
    import streamlit as st
    from kit.tables import data_table

    if st.query_params.get("present") == "1":
        st.session_state["kit-present"] = True
    frame = pd.DataFrame({"variant": ["a", "b"], "missed_mass": [0.35864, None], "n": [3, 4]})
    data_table(frame)


@pytest.mark.parametrize("present", ["0", "1"])
def test_a_number_column_with_a_gap_is_still_set_flush_right(present):
    """Its gap made it text, and text is set flush left: a column of numbers read ragged.
    In st.dataframe it stays numbers: as text it sorted 74,256 before 8,192."""
    import json

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_gapped_table)
    at.query_params["present"] = present
    at.run()
    assert not at.exception
    if present == "0":  # st.dataframe: still numbers (they sort as numbers), "–" in the gap
        shown = at.dataframe[0]
        assert shown.value["missed_mass"].dtype.kind == "f" and shown.proto.placeholder == "–"
        assert shown.value["missed_mass"].isna().tolist() == [False, True]
        config = json.loads(shown.proto.columns)
        assert not any("alignment" in c for c in config.values())  # numbers: right by type
        return
    styles = at.table[0].proto.arrow_data.styler.styles
    # !important: st.table aligns each cell inline by its Arrow type (text: left).
    right = [s for s in styles.split("}") if "text-align: right !important" in s]
    assert len(right) == 2 and "th.col1" in right[0], styles  # the header, then the cells
    assert set(re.findall(r"col(\d+)", "".join(right))) == {"1"}, styles


def test_the_transformers_aer_by_head_is_a_data_table():
    """It was ``st.table`` of a dict: no presenter type, no translated header."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file("../../app/studios/transformer.py", default_timeout=300)
    at.query_params.update(model="transformer-enfr-sinusoidal", lang="zh")
    at.run()
    assert not at.exception
    (aer,) = [d for d in at.dataframe if "head" in d.value.columns]
    assert list(aer.value.columns) == ["head", "L0", "L1"] and len(aer.value) == 4
    import json

    assert json.loads(aer.proto.columns)["head"]["label"] == "头"  # in the reader's language
