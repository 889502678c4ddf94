"""The Variants lab names its variants in the reader's language: in 中文 no map title, legend
or axis of the lab shows a registry id ("linear", "gated_deltanet") or an English sentence
of the engine's, as the visual review's language check (bench/screens.py) reads them."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from kit import i18n
from state import grid_training
from state import variants as state
from views import variants as figs

from bench import screens
from engine.messages import Message
from engine.variants import REGISTRY


@pytest.fixture
def zh():
    before = i18n._last
    i18n._last = "zh"  # what a 中文 run leaves behind, read outside a script run
    yield
    i18n._last = before


def _flagged(texts: list[str]) -> list[dict]:
    return screens.untranslated([{"text": x, "where": "stHtml"} for x in texts])


def _map(names: list[str]):
    tokens = ["a", "b", "c"]
    weights = np.full((1, 1, 3, 3), 1 / 3)
    amap = SimpleNamespace(
        weights=weights, key_labels=tokens, query_labels=tokens, flags=["exact"], shape=(1, 1)
    )
    return {name: SimpleNamespace(maps={"attention": amap}) for name in names}


def test_every_variant_has_a_chinese_name_and_english_keeps_its_id(zh):
    names = {v: state.variant_name(v) for v in REGISTRY}
    assert all(name != v and "_" not in name for v, name in names.items()), names
    assert not _flagged(list(names.values()))
    i18n._last = "en"
    assert all(state.variant_name(v) == v for v in REGISTRY)


def test_zh_map_titles_name_variants_in_chinese(zh):
    picked = ["linear", "chunked", "sparse", "gated_deltanet", "differential"]
    titles = [p["title"] for p in state.quality_panels(_map(picked), 0, 0)]
    res = {
        "tokens": ["a", "b"],
        "original_maps": np.ones((1, 1, 2, 2)),
        "results": {
            v: SimpleNamespace(maps=np.ones((1, 1, 2, 2)), map_exact=True, map_implied=False)
            for v in picked
        },
    }
    titles += [p["title"] for p in state.swap_panels(res, 0, 0)]
    assert not any(v in title for v in picked for title in titles), titles
    assert not _flagged(titles)


def test_zh_training_timeline_titles_name_variants_in_chinese(zh):
    probe = _map(["gated_deltanet"])["gated_deltanet"]
    timeline = SimpleNamespace(steps=[0, 10], at=lambda step: 1, probes=[None, [probe]])
    (panel,) = grid_training.panels({"gated_deltanet": timeline}, 10, 0, 0)
    assert panel["title"].startswith(state.variant_name("gated_deltanet"))
    assert not _flagged([panel["title"]])


def test_engine_sentences_in_results_and_notes_read_in_chinese(zh):
    for sentence in (
        REGISTRY["kv_cache"].not_in_grid,
        REGISTRY["int8"].not_in_grid,
        REGISTRY["mamba"].map_flags(after=[Message("note.mamba_causal")])["note"],  # a map's
    ):
        shown = figs.data_text(i18n.engine_text(sentence))
        assert shown != sentence and not _flagged([shown]), shown
    i18n._last = "en"
    assert figs.data_text(REGISTRY["int8"].not_in_grid) == REGISTRY["int8"].not_in_grid
