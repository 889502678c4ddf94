"""Sigmoid attention (Ramapuram et al. 2025) in float64 against an independent form,
σ(QKᵀ/√d − log n) V written with numpy, and the facts it declares on its class."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from engine.analysis import recall_state
from engine.messages import MESSAGES
from engine.models import in_pretrained
from engine.training import variants as grid
from engine.variants.registry import get
from engine.variants.sigmoid import BLOCK

torch.set_num_threads(1)


def reference(q, k, v, causal: bool) -> tuple[np.ndarray, np.ndarray]:
    q, k, v = (t.numpy() for t in (q, k, v))
    n, d = q.shape[-2:]
    x = q @ np.swapaxes(k, -1, -2) / math.sqrt(d) - math.log(n)
    a = 1.0 / (1.0 + np.exp(-x))
    if causal:
        a = a * np.tril(np.ones((n, n)))
    return a @ v, a


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n", [7, BLOCK + 37])  # one block of query rows, and two
def test_sigmoid_attention_equals_its_formula(causal, n):
    g = torch.Generator().manual_seed(n)
    q, k, v = torch.randn(3, 2, 2, n, 8, generator=g, dtype=torch.float64).unbind(0)
    out_ref, a_ref = reference(q, k, v, causal)
    res = get("sigmoid").run(q, k, v, causal=causal)
    assert np.allclose(res.out.numpy(), out_ref, atol=1e-12)
    assert np.allclose(res.weights.numpy(), a_ref, atol=1e-12)
    fast = get("sigmoid").run(q, k, v, causal=causal, want_map=False)
    assert fast.weights is None and np.allclose(fast.out.numpy(), out_ref, atol=1e-12)


def test_the_map_is_gates_not_a_distribution():
    variant = get("sigmoid")
    q, k, v = torch.randn(3, 1, 2, 16, 8, dtype=torch.float64).unbind(0)
    w = variant.run(q, k, v).weights
    assert bool(((w > 0) & (w < 1)).all())
    assert float((w.sum(-1) - 1).abs().max()) > 0.1  # rows are not normalised
    amap = variant.trace(q, k, v).maps["attention"]
    assert amap.exact and not amap.implied and not amap.normalized and not amap.signed
    assert "not a softmax" in amap.note


def test_sigmoid_declares_its_facts_on_its_class():
    variant = get("sigmoid")
    assert grid.BUDGETS["sigmoid"] == {}  # a grid cell, every key in reach, like full
    assert "sigmoid" not in in_pretrained.SWAPPABLE
    assert variant.needs_training in MESSAGES and in_pretrained.causal_reason("sigmoid")
    kv = recall_state.layer_bytes("sigmoid", {}, 256, 32, 2)
    assert kv == recall_state.layer_bytes("full", {}, 256, 32, 2)  # a KV cache of every token
