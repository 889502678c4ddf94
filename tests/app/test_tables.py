"""Table headers in the reader's language, data column names untouched."""

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
