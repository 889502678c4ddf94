"""Texts, stories, options and paths into the entry points the pages use: model cards'
trace (cheap shipped models), the story parser, every option check, the model-path check
and hiding the sink tokens. Only a result or the engine's InputError may come back."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from engine.data import babi
from engine.models import pretrained, registry
from engine.trace import AttentionMap
from engine.variants.registry import REGISTRY, get
from tests.fuzz.strategies import (
    SPECIAL_TOKENS,
    only_input_errors,
    option_dicts,
    option_values,
    stories,
    texts,
)

torch.set_num_threads(1)
# Cheap shipped models, one per family a page drives with free text or a story.
CARDS = ("transformer-dates-sinusoidal", "nmt-dates", "memn2n-task1")


@pytest.fixture(scope="module")
def models():
    names = [n for n in CARDS if n in registry.names()]
    if not names:
        pytest.skip("no shipped checkpoints")
    return {n: registry.get(n).load() for n in names}


@given(name=st.sampled_from(CARDS), text=texts)
def test_card_trace_on_any_text(models, name, text):
    if name not in models:
        return
    with only_input_errors():
        assert registry.get(name).trace(text, model=models[name]).maps


@given(story=stories)
def test_card_trace_on_any_story(models, story):
    if "memn2n-task1" not in models:
        return
    with only_input_errors():
        registry.get("memn2n-task1").trace(story, model=models["memn2n-task1"])


@given(story=stories)
def test_babi_parse_any_numbered_story(story):
    with only_input_errors():
        assert babi.parse(story)


@given(data=st.data())
def test_card_options(models, data):
    name = data.draw(st.sampled_from(sorted(models)))
    card = registry.get(name)
    options = data.draw(option_dicts([p.name for p in card.options]))
    with only_input_errors():
        card.trace(card.examples[0].input, model=models[name], **options)


@given(name=st.sampled_from(sorted(registry.names())), data=st.data())
def test_every_card_resolves_any_options(name, data):
    card = registry.get(name)
    keys = [p.name for p in card.options] + (["attend", "attend_hp"] if card.swappable else [])
    with only_input_errors():
        card.resolve(data.draw(option_dicts(keys)))


@given(name=st.sampled_from(sorted(REGISTRY)), data=st.data())
def test_every_variant_resolves_any_parameters(name, data):
    variant = get(name)
    hp = data.draw(option_dicts([p.name for p in variant.params] + ["seed"]))
    with only_input_errors():
        variant.resolve(hp, n=data.draw(st.integers(1, 64)))


PARAMS = {
    (p.name, p.default, p.low, p.high, p.choices): p
    for p in [
        *(p for v in REGISTRY.values() for p in v.params),
        *(p for n in registry.names() for p in registry.get(n).options),
    ]
}


@given(value=option_values)
def test_every_param_checks_any_value(value):
    for p in PARAMS.values():
        with only_input_errors():
            p.check(value)


@given(path=st.one_of(texts, st.text(max_size=5000), st.sampled_from(["/", "..", "~", "\x00"])))
def test_model_path(path):
    with only_input_errors():
        pretrained.check_model_dir(path)


@given(
    labels=st.lists(
        st.sampled_from(SPECIAL_TOKENS[:3]) | st.text(max_size=3), min_size=1, max_size=6
    ),
    sinks=st.lists(st.sampled_from(SPECIAL_TOKENS[:3]), max_size=3),
)
def test_hide_sinks_on_any_labels(labels, sinks):
    n = len(labels)
    amap = AttentionMap(np.full((1, 1, n, n), 1.0 / n), labels, labels, "self")
    with only_input_errors():
        hidden = amap.hide_sinks(sinks)
        sums = hidden.weights.sum(-1)
        assert np.all((np.abs(sums - 1) < 1e-5) | (sums == 0))


CELL = "mqar-256-full-s0"  # a cheap shipped cell of the variant grid (a card, not listed)


@pytest.fixture(scope="module")
def cell():
    try:
        card = registry.cell(CELL)
    except Exception:  # noqa: BLE001 - not shipped here
        pytest.skip("no shipped grid cell")
    return card, card.load()


@given(name=texts)
def test_any_name_finds_a_card_or_says_none_is_known(name):
    with only_input_errors():
        registry.get(name)
    with only_input_errors():
        registry.cell(name)


@given(text=texts)
def test_a_grid_cell_traces_any_text_or_refuses_it(cell, text):
    card, model = cell
    with only_input_errors():
        assert card.trace(text, model=model).maps["attention"].shape[0] == 2
