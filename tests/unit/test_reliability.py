"""No degenerate answers: bounded decoding and a plain warning when the input is far
from what a model learned, and none on the inputs it was trained for."""

from __future__ import annotations

import pytest

from engine.models import registry

TRANSLATORS = [c for c in registry.cards() if c.family in ("nmt", "transformer")]
OUT_OF_GRAMMAR = "My cat likes eating pizza on Sundays with friends"


@pytest.mark.parametrize("card", TRANSLATORS, ids=lambda c: c.name)
def test_examples_translate_without_a_warning(card):
    if card.variant == "none":
        pytest.skip("the no-attention / no-PE baselines are shown failing on purpose")
    for example in card.examples:
        assert "warning" not in card.trace(example.input).outputs, example.label


@pytest.mark.parametrize(
    "card", [c for c in TRANSLATORS if c.task == "en-fr"], ids=lambda c: c.name
)
def test_out_of_grammar_sentence_is_bounded_and_flagged(card):
    trace = card.trace(OUT_OF_GRAMMAR)
    n_src = len(trace.inputs["tokens"])
    assert len(trace.outputs["steps"]) <= n_src + 11  # n + 10 words, then </s>
    assert "not in this model's vocabulary" in trace.outputs["warning"]


@pytest.mark.parametrize("name", ["nmt-enfr-additive", "transformer-enfr-sinusoidal"])
def test_known_words_out_of_grammar_are_flagged_by_confidence(name):
    trace = registry.get(name).trace("the the the the the the")
    assert "confidence" in trace.outputs["warning"]
    assert len(trace.outputs["steps"]) <= 6 + 11


@pytest.mark.parametrize("name", ["nmt-dates", "transformer-dates-sinusoidal"])
def test_dates_model_says_when_it_cannot_read_a_date(name):
    card = registry.get(name)
    assert "warning" not in card.trace("Tuesday, 3 May 1979").outputs
    trace = card.trace("hello world how are you")
    assert "date" in trace.outputs["warning"]
    assert len(trace.outputs["translation"]) <= 10


def test_memory_network_flags_a_story_it_cannot_read():
    card = registry.get("memn2n-joint")
    assert "warning" not in card.trace(card.examples[0].input).outputs
    trace = card.trace("The dragon flew to the moon.\nWhere is the dragon?")
    assert "“dragon”" in trace.outputs["warning"]
