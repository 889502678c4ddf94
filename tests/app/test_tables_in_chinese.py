"""A Chinese reader's tables hold no English: the visual review could not read
st.dataframe's canvas, and once presenter mode drew tables as HTML it found the Variants
lab's titles, map kinds, state formulas, parameter names and ids, and the Alignment
decodings, in English in 中文 views. Checked here on the tables themselves, with the
review's own test of what is untranslated."""

from __future__ import annotations

import pyarrow as pa
import pytest
from catalog import APP_DIR
from streamlit.testing.v1 import AppTest

from bench.screens import untranslated
from engine.analysis import recall_state
from engine.variants import names


def cells(table) -> list[dict]:
    values = table.proto.arrow_data.styler.display_values
    frame = pa.ipc.open_stream(values).read_all().to_pandas()
    texts = [str(c) for c in frame.columns] + [str(v) for v in frame.values.ravel()]
    return [{"text": text, "where": "stTable"} for text in texts]


@pytest.mark.parametrize(
    ("page", "section"),
    [
        ("variants", "compare"),
        ("variants", "quality"),
        ("variants", "swap"),
        ("alignment", "measured"),
    ],
)
def test_a_presented_table_in_chinese_is_chinese(page, section):
    at = AppTest.from_file(str(APP_DIR / f"studios/{page}.py"), default_timeout=300)
    at.query_params.update(lang="zh", present="1", section=section)
    at.run()
    assert not at.exception
    assert at.table, "presenter mode draws these tables as HTML"
    found = [x for table in at.table for x in untranslated(cells(table))]
    assert not found, found


def test_every_variants_state_formula_has_a_translation():
    """The Quality tables show where a state size comes from (the first line of the
    variant's cache_bytes): a new variant's formula needs its line in both catalogs."""
    import tomllib

    catalogs = {
        lang: tomllib.loads((APP_DIR / f"locales/{lang}/variants.toml").read_text())["data"]
        for lang in ("en", "zh")
    }
    english = {v: k for k, v in catalogs["en"].items()}
    for name in names():
        formula = recall_state.source(name)
        assert formula in english, f"{name}: {formula!r} is not in variants.toml [data]"
        assert english[formula] in catalogs["zh"], name
