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


def test_every_long_range_tasks_description_has_a_translation():
    """The Quality section's task picker says what the task is in the results' words
    (engine.data.long_range): "associative recall, n = 256, 32 key–value pairs (Zoology)"
    stood in English under 任务. Each task's description is a line of both catalogs."""
    import tomllib

    from engine.data import long_range

    catalogs = {
        lang: tomllib.loads((APP_DIR / f"locales/{lang}/variants.toml").read_text())["data"]
        for lang in ("en", "zh")
    }
    english = {v: k for k, v in catalogs["en"].items()}
    for name, task in long_range.TASKS.items():
        assert task.description in english, f"{name}: {task.description!r} not in [data]"
        assert english[task.description] in catalogs["zh"], name


def test_the_quality_task_is_described_in_chinese():
    at = AppTest.from_file(str(APP_DIR / "studios/variants.py"), default_timeout=300)
    at.query_params.update(lang="zh", section="quality", task="mqar-256")
    at.run()
    assert not at.exception
    assert "关联回忆，n = 256，32 个键值对（Zoology）" in [c.value for c in at.caption]
