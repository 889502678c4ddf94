"""Variants in MiniLM: exact ones change nothing, approximations are graded; real Q/K/V
of a layer as the lab's input; uploaded NPZ files are checked before use."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
import torch

from engine.errors import InputError
from engine.models import in_pretrained as ip
from engine.models import pretrained as hf
from engine.models import registry
from engine.variants import inputs

torch.set_num_threads(1)
TEXT = "Attention lets every word look at every other word in the sentence it is in."


@pytest.fixture(scope="module")
def minilm():
    return registry.get(registry.MINILM).load()


@pytest.fixture(scope="module")
def swapped(minilm):
    return ip.swap(minilm, TEXT)


def test_exact_variants_change_nothing_and_approximations_something(swapped):
    res = swapped["results"]
    assert set(res) == set(ip.SWAPPABLE)
    for name in ("full", "flash"):
        assert res[name].exact and res[name].cosine == pytest.approx(1.0, abs=1e-5)
    for name in ("chunked", "longformer", "linformer", "performer", "linear", "mamba"):
        r = res[name]
        assert not r.exact and -1.0 <= r.cosine < 0.9999
        assert len(r.layer_errors) == 6 and all(e > 0 for e in r.layer_errors)


def test_default_budgets_give_errors_that_mean_something(swapped):
    """Under the default budgets no approximation is exact, and none is pure noise."""
    res = swapped["results"]
    for name in ("chunked", "longformer", "bigbird", "reformer", "linformer", "performer"):
        assert 0 < res[name].layer_errors[0] < 0.5, (name, res[name].layer_errors)


def test_maps_are_per_layer_and_head(swapped):
    n = swapped["n"]
    assert swapped["original_maps"].shape == (6, 12, n, n)
    assert swapped["results"]["longformer"].maps.shape == (6, 12, n, n)
    assert len(swapped["tokens"]) == n


def test_a_budget_that_covers_the_text_makes_an_approximation_exact(minilm):
    n = minilm.tokenizer(TEXT, return_tensors="pt")["input_ids"].shape[1]
    out = ip.swap(minilm, TEXT, ("linformer",), {"linformer": {"k": n}})
    assert out["results"]["linformer"].exact
    with pytest.raises(InputError, match="Linformer"):
        ip.swap(minilm, TEXT, ("linformer",), {"linformer": {"k": n + 1}})


def test_layer_qkv_reproduces_the_layers_attention(minilm):
    q, k, v, tokens = ip.layer_qkv(minilm, TEXT, layer=2)
    assert q.shape == (1, 12, len(tokens), 32) and k.shape == v.shape == q.shape
    shown = hf.trace(minilm, TEXT).maps["encoder_self"].weights[2]  # [H, N, N]
    w = torch.softmax(q @ k.transpose(-2, -1) / 32**0.5, dim=-1)[0]
    assert np.allclose(w.numpy(), shown, atol=1e-5)
    q1, _, _, _ = ip.layer_qkv(minilm, TEXT, layer=2, head=5)
    assert torch.equal(q1[0, 0], q[0, 5])
    with pytest.raises(InputError, match="Layer"):
        ip.layer_qkv(minilm, TEXT, layer=6)
    with pytest.raises(InputError, match="Head"):
        ip.layer_qkv(minilm, TEXT, layer=0, head=12)


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def test_npz_of_three_or_four_dimensions_loads_as_float32():
    a = np.random.default_rng(0).standard_normal((2, 10, 8)).astype(np.float64)
    q, k, v = inputs.load_qkv_npz(_npz(q=a, k=a, v=a))
    assert q.shape == (1, 2, 10, 8) and q.dtype == torch.float32
    b = a[None].astype(np.float16)
    assert inputs.load_qkv_npz(_npz(q=b, k=b, v=b))[0].shape == (1, 2, 10, 8)


@pytest.mark.parametrize(
    "arrays,match",
    [
        (dict(q=np.ones((2, 4, 8)), k=np.ones((2, 4, 8))), "missing v"),
        (dict(q=np.ones((2, 4, 8)), k=np.ones((2, 4, 8)), v=np.ones((2, 5, 8))), "one shape"),
        (dict(q=np.ones((4, 8)), k=np.ones((4, 8)), v=np.ones((4, 8))), r"\[H, N, D\]"),
        (dict(q=np.ones((1, 4, 8), int), k=np.ones((1, 4, 8)), v=np.ones((1, 4, 8))), "dtype"),
        (dict(q=np.full((1, 4, 8), np.nan), k=np.ones((1, 4, 8)), v=np.ones((1, 4, 8))), "NaN"),
        (dict(q=np.ones((1, 2000, 8)), k=np.ones((1, 2000, 8)), v=np.ones((1, 2000, 8))), "N ≤"),
    ],
)
def test_bad_npz_files_get_a_clear_message(arrays, match):
    with pytest.raises(InputError, match=match):
        inputs.load_qkv_npz(_npz(**arrays))


def test_not_an_npz_and_pickled_objects_are_refused():
    with pytest.raises(InputError, match="not a readable"):
        inputs.load_qkv_npz(b"hello")
    obj = np.array([{"a": 1}], dtype=object)
    buf = io.BytesIO()
    np.savez(buf, q=obj, k=obj, v=obj)
    with pytest.raises(InputError, match="plain float"):
        inputs.load_qkv_npz(buf.getvalue())
    with pytest.raises(InputError, match="MB"):
        inputs.load_qkv_npz(b"0" * (inputs.NPZ_MAX_BYTES + 1))


# -- variants inside the chat model (SmolLM2, a causal decoder) ------------------------------
PARAGRAPH = (
    "It was a bright cold day in April, and the clocks in the old town were striking "
    "thirteen. The baker opened his shop, the children ran to school, and the river "
    "carried the last of the winter ice down to the sea."
)


@pytest.fixture(scope="module")
def chat():
    from engine.models import chat as chat_model

    if not chat_model.available():
        pytest.skip(f"{chat_model.CHAT_DIR} is missing: run bash scripts/setup.sh")
    return registry.chat().load()


@pytest.fixture(scope="module")
def ids(chat):
    return chat.tokenizer(PARAGRAPH, add_special_tokens=False)["input_ids"][:32]


@pytest.mark.parametrize("name", ["full", "kv_cache"])
def test_an_exact_variant_in_the_llm_gives_the_models_own_logits(chat, ids, name):
    from engine.variants.registry import attend_fn

    own = ip._llm_logits(chat, ids, None)
    with torch.no_grad():
        eager = chat.model(input_ids=torch.tensor([ids]), use_cache=False).logits[0]
    assert torch.equal(own, eager)  # nothing asked: the model's own eager attention
    swapped = ip._llm_logits(chat, ids, attend_fn(name))
    assert swapped.dtype == torch.float32
    assert torch.allclose(swapped, eager, atol=1e-4, rtol=1e-5)


def test_a_bidirectional_variant_is_refused_with_a_reason(chat, ids):
    for name in ("linformer", "performer"):
        r = ip.variant_perplexity(chat, name, None, ids)
        assert r["runs"] is False and r["reason"].key == "llm_variant.not_causal"
    assert ip.causal_reason("longformer") is None


def test_a_variant_that_needs_training_says_so(chat, ids):
    for name in ("retnet", "mla", "differential", "sigmoid"):
        r = ip.variant_perplexity(chat, name, None, ids)
        assert r["runs"] is False and r["reason"].key == "llm_variant.needs_training"
    for name in ("sinks", "moba", "nsa"):  # training-free: the issue asks for their cost
        assert ip.causal_reason(name) is None


def test_a_variant_in_chosen_layers_only(chat, ids):
    ref = ip.full_reference(chat, ids, new_tokens=2)
    hp = {"window": 2, "globals": 0}
    one = ip.variant_perplexity(chat, "longformer", hp, ids, [3], reference=ref)
    every = ip.variant_perplexity(chat, "longformer", hp, ids, reference=ref)
    assert one["layers"] == [3] and every["layers"] == list(range(chat.n_layers))
    assert 0 < one["max_logit_diff"] < every["max_logit_diff"]
    assert one["ppl_full"] == every["ppl_full"] == pytest.approx(ref["ppl"])
    with pytest.raises(InputError) as caught:
        ip.variant_perplexity(chat, "longformer", hp, ids, [chat.n_layers], reference=ref)
    assert caught.value.message.key == "llm_variant.layers"


def test_every_registry_variant_runs_causally_or_says_why_not(chat, ids):
    from engine.variants.registry import REGISTRY

    results = ip.variants_in_llm(chat, ids[:16], new_tokens=1)
    assert list(results) == list(REGISTRY)
    for name, r in results.items():
        if REGISTRY[name].causal_support == "never" or REGISTRY[name].needs_training:
            assert not r["runs"] and r["reason"]
            continue
        assert r["runs"] and math.isfinite(r["ppl"]) and r["n_tokens"] == 16
        assert r["continuation_full"] and isinstance(r["continuation"], str)
    for name in ("full", "flash", "kv_cache"):
        assert results[name]["ppl"] == pytest.approx(results[name]["ppl_full"], rel=1e-4)
        assert results[name]["agreement"] == 1.0
    assert results["longformer"]["agreement"] <= 1.0


def test_a_text_too_short_for_perplexity_is_refused(chat):
    with pytest.raises(InputError) as caught:
        ip.full_reference(chat, [1, 2, 3])
    assert caught.value.message.key == "llm_variant.text_tokens"
