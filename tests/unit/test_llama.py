"""The one Llama layer: the full cache through engine.models.llama is the model's own
forward; a per-head mask is that head's attention over its kept keys alone; the fused
kernel gives the explicit softmax's output."""

import math

import numpy as np
import pytest
import torch

from engine.models import chat as chat_model
from engine.models import llama, precision, registry

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def chat():
    if not chat_model.available():
        pytest.skip(f"{chat_model.CHAT_DIR} is missing: run bash scripts/setup.sh")
    return registry.chat().load()


def causal_forward(chat, ids):
    """The layer loop with a plain causal attention: what transformers computes."""
    t = len(ids)
    cos, sin = llama.rotary(chat.model, range(t))
    mask = torch.full((t, t), -math.inf).triu(1)

    def attend(li, q, k, v):
        q, k = llama.rope(q.transpose(0, 1), cos, sin), llama.rope(k.transpose(0, 1), cos, sin)
        o, _ = llama.attention(q, k, v.transpose(0, 1), scale=chat.head_dim**-0.5, mask=mask)
        return o.transpose(0, 1)

    return llama.forward(chat.model, ids, attend)


def test_the_layer_loop_is_the_models_own_forward(chat):
    ids = chat.tokenizer.encode("It is a truth universally acknowledged, that a single man")
    with torch.no_grad(), precision.only(torch.float32):
        ours = causal_forward(chat, ids)
        theirs = chat.model(torch.tensor([ids]), use_cache=False).logits[0]
    assert (ours - theirs).abs().max() < 1e-3
    assert ours.argmax(-1).tolist() == theirs.argmax(-1).tolist()


def test_a_per_head_mask_is_each_heads_own_attention():
    torch.manual_seed(0)
    hkv, g, t, n, d = 3, 3, 4, 10, 8
    q, k, v = torch.randn(hkv * g, t, d), torch.randn(hkv, n, d), torch.randn(hkv, n, d)
    kept = torch.rand(hkv, n) < 0.6
    kept[:, 0] = True
    mask = torch.zeros(hkv, 1, n).masked_fill(~kept[:, None], -math.inf)  # per K/V head
    o, alpha = llama.attention(q, k, v, scale=0.5, mask=mask)
    for h in range(hkv * g):
        j = kept[h // g]
        e = q[h] @ k[h // g, j].T * 0.5
        want = torch.softmax(e, -1) @ v[h // g, j]
        assert torch.allclose(o[h], want, atol=1e-6)
        assert alpha[h][:, ~j].abs().max() == 0.0
    per_query_head = mask.repeat_interleave(g, dim=0)  # (H, 1, n): the same, said per query head
    assert torch.equal(llama.attention(q, k, v, scale=0.5, mask=per_query_head)[0], o)
    fused, none = llama.attention(q, k, v, scale=0.5, mask=mask, weights=False)
    assert none is None and np.allclose(fused, o, atol=1e-6)
