"""The demonstrations' size knobs, as a notebook may pass them: a count that is not a whole
number in its range (0, −1, 2.5, NaN, ±inf, "x", None, True, a list, 10¹²) is the engine's
InputError before anything is built. Before these checks heads=0 in the cost profile
stopped the whole process (SIGFPE), d_model=0 divided by zero and the rest raised
TypeError, IndexError or ValueError from deep inside numpy and torch."""

import math

import numpy as np
import pytest

from engine import gate, positional, profile, projection, walkthrough
from engine.analysis import ablation, cache_eval, faithfulness_tokens, heads, logit_lens, sinks
from engine.errors import InputError
from engine.models import in_pretrained, registry
from engine.trace import AttentionMap
from engine.variants import inputs, int8, kv_cache

QKV = inputs.synthetic(16)[:3]
IDS = list(range(100, 164))

BAD = [0, -1, 2.5, math.nan, math.inf, "x", None, True, [1], 10**12]


def seed(v):
    """BAD for a seed, whose range is 0 … 2⁶³ − 1: 0 and 10¹² are seeds."""
    return {0: -1, 10**12: 2**64}.get(v, v) if type(v) is int else v


def offset(v):
    """BAD for an offset, whose range is ±100,000: 0 and −1 are offsets."""
    return {0: 10**6, -1: -(10**6)}.get(v, v) if type(v) is int else v


def bias(v):
    """BAD for a key bias, whose range is 0 … 50: 0 and 2.5 are biases."""
    return {0: -1, 2.5: 50.5}.get(v, v) if type(v) in (int, float) else v


CALLS = {
    "kv_cache n": lambda v: kv_cache.compare(v),
    "kv_cache d_model": lambda v: kv_cache.compare(8, d_model=v),
    "kv_cache heads": lambda v: kv_cache.compare(8, heads=v),
    "synthetic n": lambda v: inputs.synthetic(v),
    "synthetic heads": lambda v: inputs.synthetic(16, heads=v),
    "synthetic seed": lambda v: inputs.synthetic(16, seed=seed(v)),
    "text_layer d": lambda v: inputs.text_layer("a b c", d=v),
    "text_layer seed": lambda v: inputs.text_layer("a b c", seed=seed(v)),
    "long_qk n": lambda v: inputs.long_qk(v),
    "long_qk d": lambda v: inputs.long_qk(256, v),
    "sinusoidal n": lambda v: positional.sinusoidal(v, 16),
    "sinusoidal d_model": lambda v: positional.sinusoidal(8, v),
    "rotation k": lambda v: positional.rotation(offset(v), 16),
    "verify_rotation k": lambda v: positional.verify_rotation(offset(v), 8, 16),
    "walkthrough heads": lambda v: walkthrough.walkthrough(
        "a b", walkthrough.WalkthroughConfig(n_heads=v)
    ),
    "walkthrough head": lambda v: walkthrough.walkthrough(
        "a b", walkthrough.WalkthroughConfig(head=v if v != 0 else 4)
    ),
    "walkthrough seed": lambda v: walkthrough.walkthrough(
        "a b", walkthrough.WalkthroughConfig(seed=seed(v))
    ),
    "profile heads": lambda v: list(profile.sweep(["full"], [64], heads=v)),
    "int8 block": lambda v: int8.int8_attention(*QKV, scheme="sage", block=v),
    "int8 compare n": lambda v: int8.compare(v, 32, 0.0),
    "int8 compare d": lambda v: int8.compare(16, v, 0.0),
    "int8 compare bias": lambda v: int8.compare(16, 32, bias(v)),
    "int8 compare block": lambda v: int8.compare(16, 32, 0.0, v),
    "sink_profile first": lambda v: sinks.sink_profile(np.full((1, 1, 4, 4), 0.25), first=v),
    # refused before the model is read: no chat model is needed to see it
    "budget_sweep budget": lambda v: cache_eval.budget_sweep(None, IDS, [v]),
    "budget_sweep chunk": lambda v: cache_eval.budget_sweep(None, IDS, [8], chunk=v),
}


@pytest.mark.parametrize("value", BAD, ids=repr)
@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_a_size_outside_its_limits_is_refused(call, value):
    with pytest.raises(InputError):
        call(value)


def test_the_limits_still_let_every_value_inside_them_through():
    assert kv_cache.compare(4, d_model=8, heads=2, seed=3)["n"] == 4
    assert inputs.synthetic(16, heads=8, sharpness=8.0, seed=2**40)[0].shape == (1, 8, 16, 32)
    assert positional.sinusoidal(3, 4, offset=-100_000).shape == (3, 4)
    assert positional.verify_rotation(100_000, 8, 16) < 1e-6
    cfg = walkthrough.WalkthroughConfig(d_model=16, n_heads=16, head=15, seed=2**32 - 1)
    assert walkthrough.walkthrough("a b", cfg).maps
    assert [r["scheme"] for r in int8.compare(16, 128, 50.0, 1)] == ["sage", "naive"]


@pytest.mark.parametrize(
    ("value", "lo", "hi", "found"),
    [(3, 1, 8, 3), ("3", 1, 8, 3), (3.0, 1, 8, 3), (2, 0.5, 4.0, 2.0), (0.5, 0.5, 4.0, 0.5)],
)
def test_bounded_gives_the_number_in_the_kind_of_its_limits(value, lo, hi, found):
    out = gate.bounded(value, lo, hi)
    assert out == found and type(out) is type(lo)


@pytest.mark.parametrize("value", [2.5, 9, 0, "3.5", math.nan, True, None, "x"])
def test_bounded_refuses_what_is_not_a_whole_number_in_range(value):
    with pytest.raises(ValueError):
        gate.bounded(value, 1, 8)


# Token ids and the chat model's analyses: an id outside the vocabulary raised IndexError
# inside the embedding, a prompt length past the ids divided by zero, n = 0 random tokens
# raised ValueError, and an unbounded n would have asked for L·H·(2n + 1)² floats.
CHAT_CALLS = {
    "ablate ids": lambda chat, v: ablation.ablate(chat, [1, v], mode="zero", loss_for=1),
    "lens ids": lambda chat, v: logit_lens.for_generation(chat, [1, 2, v], 2),
    "lens prompt length": lambda chat, v: logit_lens.for_generation(
        chat, [1, 2, 3], 3 if v in (1, True) else v
    ),
    "faithful ids": lambda chat, v: faithfulness_tokens.for_chat(chat, [1, v], 5),
    "cache eval ids": lambda chat, v: cache_eval.evaluate_policies(chat, [1, 2, v], []),
    "detect n": lambda chat, v: heads.detect_heads(chat, n=v),
    "detect seed": lambda chat, v: heads.detect_heads(chat, seed=seed(v), n=4),
}
NOT_IDS = [-1, 2.5, math.nan, "x", None, True, [1], 10**12]


@pytest.mark.parametrize("value", NOT_IDS, ids=repr)
@pytest.mark.parametrize("call", CHAT_CALLS.values(), ids=CHAT_CALLS.keys())
def test_the_chat_models_analyses_refuse_what_is_not_an_id_or_a_size(chat, call, value):
    with pytest.raises(InputError):
        call(chat, value)


@pytest.fixture(scope="module")
def minilm():
    return registry.get(registry.MINILM).load()


MINILM_CALLS = {
    "layer_qkv layer": lambda m, v: in_pretrained.layer_qkv(m, "the cat sat", layer=v),
    # head None is every head
    "layer_qkv head": lambda m, v: in_pretrained.layer_qkv(
        m, "the cat", head=99 if v is None else v
    ),
    "swap budgets": lambda m, v: in_pretrained.swap(m, "the cat sat", budgets=[v]),
}


@pytest.mark.parametrize("value", NOT_IDS, ids=repr)
@pytest.mark.parametrize("call", MINILM_CALLS.values(), ids=MINILM_CALLS.keys())
def test_minilm_s_layers_and_heads_are_whole_indices(minilm, call, value):
    with pytest.raises(InputError):
        call(minilm, value)


@pytest.mark.parametrize("value", [*BAD, -0.5, 1.5], ids=repr)
def test_rollout_s_residual_is_a_weight_from_0_to_1(value):
    if value in (0, True) and type(value) is int:
        value = -1  # 0 is a weight (no skip connection); True is refused as a number
    amap = AttentionMap(np.full((2, 1, 3, 3), 1 / 3, np.float32), list("abc"), list("abc"), "self")
    with pytest.raises(InputError):
        amap.rollout(residual=value)


@pytest.mark.parametrize("points", ["x", [[1.0, 2.0], [3.0]], np.zeros(3), np.full((4, 2), np.nan)])
def test_a_projection_of_what_is_not_points_is_refused(points):
    with pytest.raises(InputError):
        projection.pca_2d(points)


@pytest.mark.parametrize("name", ["transformer-enfr-sinusoidal", "nmt-enfr-additive"])
@pytest.mark.parametrize(
    "target",
    [None, "le chat .", [], [1, 2], ["le"] * 70],
    ids=["none", "text", "empty", "ints", "70"],
)
def test_a_forced_alignment_reads_lists_of_words_the_model_can_hold(name, target):
    """A string was read letter by letter: 'le chat' past the Transformer's 67 positions
    raised RuntimeError in its positional table. The RNN takes any length."""
    card = registry.get(name)
    if name.startswith("nmt") and isinstance(target, list) and len(target) == 70:
        assert card.forced_alignments(("the", "cat", "."), target)  # an RNN reads any length
        return
    with pytest.raises(InputError):
        card.forced_alignments(("the", "cat", "."), target)


@pytest.mark.parametrize(
    "kw", [{"layer": -1}, {"layer": 2.5}, {"layer": 9}, {"head": 4}, {"head": "x"}]
)
def test_a_transformer_layer_or_head_outside_the_model_is_refused(kw):
    with pytest.raises(InputError):
        registry.get("transformer-enfr-sinusoidal").attention_inputs("the cat .", **kw)


NOT_TEXT = [None, 3, ["a"], b"x", 2.5]


@pytest.mark.parametrize("value", NOT_TEXT, ids=repr)
@pytest.mark.parametrize(
    "name", ["nmt-enfr-additive", "transformer-enfr-sinusoidal", "memn2n-joint", "induction-2l"]
)
def test_a_card_refuses_an_input_that_is_neither_text_nor_its_own_kind(name, value):
    """trace checked only text: a list or None reached the model (AttributeError in MemN2N's
    reader and the induction toy's tokenizer)."""
    with pytest.raises(InputError):
        registry.get(name).trace(value)


@pytest.mark.parametrize("value", [*NOT_TEXT, "64", "-1", "x"], ids=repr)
def test_a_grid_cell_takes_the_number_of_a_probe_example_as_text(value):
    with pytest.raises(InputError):
        registry.cell("mqar-256-mamba-s0").trace(value)
