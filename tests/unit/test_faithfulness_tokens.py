"""The token-level faithfulness meter: attention and rollout beside occlusion, gradient ×
input and IG, for the chat model and MiniLM.

Properties that must hold: a token after the read position has occlusion exactly 0 (the
causal model never reads it); MiniLM's IG sums to f(x) − f(0); a reading compared with
itself agrees perfectly; every attention row is a distribution over the inputs.
"""

import dataclasses

import numpy as np
import pytest
import torch

from engine.analysis import faithfulness_tokens as FT
from engine.errors import InputError
from engine.models import chat as chat_model
from engine.models import precision, pretrained, registry

TEXT = "The cat sat on the mat."
LONGER = "The cat sat on the mat because it was very tired after the long walk home."


@pytest.fixture(scope="module")
def minilm():
    if not pretrained.minilm_path().exists():
        pytest.skip("MiniLM is not installed: run bash scripts/setup.sh")
    torch.set_num_threads(1)
    return registry.get(registry.MINILM).load()


@pytest.fixture(scope="module")
def encoder(minilm):
    return FT.for_encoder(minilm, TEXT, 2, ig_steps=64)


def test_occluding_a_token_after_the_read_position_changes_nothing_exactly(chat):
    ids = chat_model.encode(chat, LONGER, template=False)  # 18 copies: chunks of 6
    q = 2
    delta = FT.chat_occlusion(chat, ids, q, chat.tokenizer(" dog")["input_ids"][0])
    assert len(delta) == len(ids) > q + 2
    assert (delta[q + 1 :] == 0).all()  # exactly: never read by position q
    assert (delta[: q + 1] != 0).all()


def test_chat_rows_and_the_models_own_next_token(chat):
    ids = chat_model.encode(chat, TEXT, template=False)
    r = FT.for_chat(chat, ids)
    n = len(ids)
    assert r.attention.shape == (chat.n_layers, n) and r.rollout.shape == (n,)
    np.testing.assert_allclose(r.attention.sum(-1), 1.0, atol=1e-4)
    np.testing.assert_allclose(r.rollout.sum(), 1.0, atol=1e-4)
    assert r.occlusion.shape == r.grad_x_input.shape == (n,) and r.integrated is None
    assert np.isfinite(r.occlusion).all() and np.isfinite(r.grad_x_input).all()
    with torch.inference_mode(), precision.only(torch.float32):
        logits = chat.model(input_ids=torch.tensor([ids]), use_cache=False).logits[0, -1]
    lp = torch.log_softmax(logits.float(), -1)
    assert r.output == chat_model.token_labels(chat, [int(lp.argmax())])[0]
    assert r.value == pytest.approx(float(lp.max()), abs=1e-3)
    assert not r.stopped and set(r.verdict(0)) == {"attention", "rollout"}


def test_integrated_gradients_are_complete(minilm, encoder):
    """Σ_j IG_j = f(x) − f(0), f = ⟨h_q, u⟩, f(0) with every word embedding zero."""
    r = encoder
    enc = pretrained.encode(minilm, TEXT)
    x = minilm.model.get_input_embeddings()(enc["input_ids"])
    rest = {k: v for k, v in enc.items() if k != "input_ids"}
    with torch.no_grad():
        h = minilm.model(**enc).last_hidden_state[0, 2]
        h0 = minilm.model(inputs_embeds=torch.zeros_like(x), **rest).last_hidden_state[0, 2]
    f_x, f_0 = float(h.norm()), float(h0 @ (h / h.norm()))
    assert r.value == pytest.approx(f_x, rel=1e-5)
    assert float(r.integrated.delta) == pytest.approx(f_x - f_0, rel=1e-4)
    assert abs(r.integrated.attributions.sum() - (f_x - f_0)) < 0.01 * abs(f_x - f_0)
    assert r.output == "cat" and len(r.tokens) == len(enc["input_ids"][0])
    np.testing.assert_allclose(r.attention.sum(-1), 1.0, atol=1e-4)


def test_a_reading_agrees_with_itself(encoder):
    layer = 3
    same = dataclasses.replace(encoder, occlusion=encoder.attention[layer].copy())
    a = same.agreement(layer)["attention", "occlusion"]
    assert a.spearman == pytest.approx(1.0) and a.top1
    assert same.verdict(layer)["attention"] == "agrees"
    flipped = dataclasses.replace(encoder, occlusion=-encoder.attention[layer])
    assert flipped.verdict(layer)["attention"] == "disagrees"
    scaled = encoder.scaled(layer)
    assert set(scaled) == {*FT.READINGS, *FT.ATTRIBUTIONS}
    assert all(np.abs(v).max() == pytest.approx(1.0) for v in scaled.values())


def test_stop_and_bad_input(minilm):
    r = FT.for_encoder(minilm, TEXT, 1, should_stop=lambda: True)
    assert r.stopped and np.isnan(r.occlusion).all() and r.integrated is None
    assert ("attention", "occlusion") not in r.agreement(0)
    for text, token, key in (("  ", 0, "text.empty"), (TEXT, 99, "causal.position_range")):
        with pytest.raises(InputError) as err:
            FT.for_encoder(minilm, text, token)
        assert err.value.message.key == key
