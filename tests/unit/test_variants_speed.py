"""The speed work on today's variants changes how much is computed at once, never what:
each bounded-memory path against the same computation done in one piece (float64)."""

from __future__ import annotations

import pytest
import torch

from engine import profile
from engine.variants import based, deltanet, gla, moba, nsa
from engine.variants.registry import get


def qkv(n=70, d=8, heads=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(3, 2, heads, n, d, generator=g, dtype=torch.float64).unbind(0)


GATHER_ONLY = {"grad": 0, "no_grad": 0}  # every query gathers its keys, however short n is
DENSE_ALWAYS = {"grad": 10**6, "no_grad": 10**6}


@pytest.mark.parametrize("name,hp", [("moba", {"block": 5, "top_k": 3}), ("nsa", {"block": 6})])
@pytest.mark.parametrize("n", [12, 70])
def test_the_dense_path_equals_the_gather_with_its_gradients(monkeypatch, name, hp, n):
    """Short sequences score every key under a mask (faster there): the same output, map,
    extras and gradients as gathering each query's keys."""
    runs = {}
    for path, ratio in (("gather", GATHER_ONLY), ("dense", DENSE_ALWAYS)):
        monkeypatch.setattr(moba, "DENSE_RATIO", ratio)
        q, k, v = (x.clone().requires_grad_() for x in qkv(n=n))
        out = get(name).run(q, k, v, hp=hp)
        (out.out * torch.linspace(-1, 1, out.out.numel()).view_as(out.out)).sum().backward()
        runs[path] = out, (q.grad, k.grad, v.grad)
    (g_out, g_grads), (d_out, d_grads) = runs["gather"], runs["dense"]
    assert torch.allclose(d_out.out, g_out.out, atol=1e-12)
    assert torch.allclose(d_out.weights, g_out.weights, atol=1e-12)
    assert all(torch.equal(d_out.extra[x], g_out.extra[x]) for x in g_out.extra)
    for a, b in zip(d_grads, g_grads, strict=True):
        assert torch.allclose(a, b, atol=1e-10)


def test_a_key_gathered_twice_is_left_to_the_gather_path():
    """The gather counts a repeated key twice; a mask cannot, so the dense path declines."""
    q, k, v = qkv(n=6)
    pos = torch.tensor([0, 0, 1]).expand(*q.shape[:-1], 3)
    ok = torch.ones_like(pos, dtype=torch.bool)
    assert moba.dense_rows(q, k, v, pos, ok, scale=0.5, want_map=False) is None
    assert moba.dense_rows(q, k, v, pos[..., 1:], ok[..., 1:], scale=0.5, want_map=False)


def test_the_dense_path_is_taken_only_where_it_pays():
    assert moba.dense_pays(16, 256, 32, grad=True) and not moba.dense_pays(16, 512, 32, True)
    assert moba.dense_pays(16, 128, 32, grad=False) and not moba.dense_pays(16, 256, 32, False)
    assert not moba.dense_pays(10**4, 256, 256, grad=True)  # n × n scores kept small


@pytest.mark.parametrize("name,hp", [("moba", {"block": 5, "top_k": 3}), ("nsa", {"block": 6})])
def test_row_groups_give_the_same_output_and_map(monkeypatch, name, hp):
    monkeypatch.setattr(moba, "DENSE_RATIO", GATHER_ONLY)
    q, k, v = qkv()
    whole = get(name).run(q, k, v, hp=hp)
    for module in (moba, nsa):  # nsa took its own name for moba's ROWS
        monkeypatch.setattr(module, "ROWS", 16)  # 70 queries: five groups, the last short
    grouped = get(name).run(q, k, v, hp=hp)
    assert torch.allclose(grouped.out, whole.out, atol=1e-12)
    assert torch.allclose(grouped.weights, whole.weights, atol=1e-12)
    assert torch.equal(grouped.extra["selected"], whole.extra["selected"])


def test_moba_block_gather_equals_the_gather_of_each_position(monkeypatch):
    monkeypatch.setattr(moba, "DENSE_RATIO", GATHER_ONLY)
    q, k, v = qkv(n=43)  # 43 = 5 blocks of 8 and a short one
    gates, causal_blocks = moba.moba_gates(q, k, 8)
    blocks = moba.moba_select(gates, causal_blocks, 8, 3)
    pos, ok = moba.block_keys(blocks, 8, 43)
    by_pos = moba.gather_rows(q, k, v, pos, ok, scale=0.3, want_map=True)
    by_block = moba.gather_rows(q, k, v, pos, ok, scale=0.3, want_map=True, blocks=blocks, b=8)
    for a, b in zip(by_pos, by_block, strict=True):
        assert torch.allclose(a, b, atol=1e-12)


def test_based_bidirectional_in_row_blocks_equals_one_piece():
    q, k, v = qkv(n=50)
    qf, kf = q[..., :4], k[..., :4]
    one = based.bidirectional(qf, kf, v, rows=50)
    assert torch.allclose(based.bidirectional(qf, kf, v, rows=7), one, atol=1e-12)
    phi_q, phi_k = based.taylor_features(qf), based.taylor_features(kf)
    dense = (phi_q @ phi_k.transpose(-2, -1)) @ v / (phi_q @ phi_k.sum(-2)[..., None])
    assert torch.allclose(one, dense, atol=1e-10)


def test_gla_chunk_groups_equal_the_recurrence(monkeypatch):
    q, k, v = qkv(n=75)
    log_alpha = gla.gate_log_alpha(k, 0)
    whole = gla.chunkwise(q, k, v, log_alpha, 0.5)
    monkeypatch.setattr(gla, "GROUP_BYTES", 1)  # one chunk per group
    assert torch.allclose(gla.chunkwise(q, k, v, log_alpha, 0.5), whole, atol=1e-12)
    assert torch.allclose(gla.recurrent(q, k, v, log_alpha, 0.5), whole, atol=1e-10)


def test_moba_and_nsa_flop_models_count_the_quadratic_block_scoring():
    """Doubling n at fixed b, k: the gates and their top-k grow 4×, the rest 2×; at n =
    32k the model's slope is within 0.1 of 2 (where bench/variants.py measures them)."""
    for name in ("moba", "nsa"):
        assert abs(profile.expected_exponent(name, (8192, 16384, 32768)) - 2.0) < 0.1
        small, double = (profile.flops(name, n, 64, 1) for n in (1024, 2048))
        assert double / small > 3.0  # the quadratic term is most of the count already


@pytest.mark.parametrize("gated", [False, True])
def test_delta_rule_chunkwise_equals_the_step_by_step_recurrence(gated):
    q, k, v = qkv(n=75)  # two full chunks of 32 and a short one
    beta, log_alpha = deltanet.write_strength(k, 0, gated)
    qn, kn = deltanet.normalize(q), deltanet.normalize(k)
    steps = deltanet.delta_recurrent(qn, kn, v, beta, log_alpha)
    for chunk in (32, 7, 1):
        out = deltanet.delta_chunkwise(qn, kn, v, beta, log_alpha, chunk, gated)
        assert torch.allclose(out, steps, atol=1e-10), chunk


def test_delta_rule_chunkwise_has_the_recurrences_gradient():
    """The trained grid backpropagates through it (no in-place step breaks autograd)."""
    q, k, v = (t.requires_grad_() for t in qkv(n=40))
    grads = []
    for form in (deltanet.delta_recurrent, deltanet.delta_chunkwise):
        beta, log_alpha = deltanet.write_strength(k, 0, True)
        form(
            deltanet.normalize(q), deltanet.normalize(k), v, beta, log_alpha
        ).square().sum().backward()
        grads.append([t.grad.clone() for t in (q, k, v)])
        for t in (q, k, v):
            t.grad = None
    for a, b in zip(*grads, strict=True):
        assert torch.allclose(a, b, atol=1e-9)
