"""Today's attention variants, each checked in float64 against an independent form of the
same computation: GQA/MQA by hand, MLA naive = absorbed, window + sinks against a dense
masked softmax, differential attention directly, MoBA and NSA against dense masks built
by hand, and the linear-recurrent family's implicit maps against their recurrences."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from engine.errors import InputError
from engine.variants.base import generator
from engine.variants.based import Based
from engine.variants.deltanet import DeltaNet, GatedDeltaNet, delta_recurrent, write_strength
from engine.variants.differential import Differential, lambda_init
from engine.variants.gla import GLA, gate_log_alpha
from engine.variants.gqa import GQA
from engine.variants.mamba import Mamba
from engine.variants.mla import MLA, cache_table
from engine.variants.moba import MoBA
from engine.variants.nsa import NSA, gate_weights
from engine.variants.retnet import RetNet
from engine.variants.sinks import Sinks

torch.set_num_threads(1)
TOL = 1e-10


def qkv(n=37, d=8, heads=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(3, 2, heads, n, d, generator=g, dtype=torch.float64).unbind(0)


def masked_softmax(s, allowed):
    """Softmax over the allowed entries by exp and sum (rows with none: 0)."""
    s = s.masked_fill(~allowed, -math.inf)
    m = s.amax(-1, keepdim=True).clamp(min=-1e300)
    e = torch.exp(s - m)
    return e / e.sum(-1, keepdim=True).clamp(min=1e-300)


def dense_attention(q, k, v, allowed):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    p = masked_softmax(s, allowed)
    return p @ v, p


def causal(n):
    return torch.ones(n, n, dtype=torch.bool).tril()


# -- GQA / MQA ------------------------------------------------------------------------


@pytest.mark.parametrize("is_causal", [False, True])
def test_gqa_with_g_equal_h_is_full_attention(is_causal):
    q, k, v = qkv()
    allowed = causal(37) if is_causal else torch.ones(37, 37, dtype=torch.bool)
    ref, p = dense_attention(q, k, v, allowed)
    res = GQA().run(q, k, v, causal=is_causal, hp={"groups": 4})
    assert torch.allclose(res.out, ref, atol=TOL) and torch.allclose(res.weights, p, atol=1e-6)


@pytest.mark.parametrize("groups", [1, 2])
def test_gqa_pools_each_groups_heads_mqa_by_hand(groups):
    q, k, v = qkv()
    res = GQA().run(q, k, v, causal=True, hp={"groups": groups})
    size = 4 // groups
    for h in range(4):  # query head h reads the mean of its group's key/value heads
        g = h // size
        kg = k[:, g * size : (g + 1) * size].mean(1)
        vg = v[:, g * size : (g + 1) * size].mean(1)
        ref, p = dense_attention(q[:, h], kg, vg, causal(37))
        assert torch.allclose(res.out[:, h], ref, atol=TOL)
        assert torch.allclose(res.weights[:, h], p, atol=1e-6)
    assert torch.allclose(res.weights @ res.extra["values"], res.out, atol=1e-6)
    if groups == 1:  # MQA: one key/value head for every query head
        assert torch.equal(res.extra["values"][:, 0], res.extra["values"][:, 3])


def test_gqa_labels_heads_with_groups_and_divides_the_cache():
    q, k, v = qkv(d=8)
    tr = GQA().trace(q.float(), k.float(), v.float(), hp={"groups": 2})
    assert tr.maps["attention"].head_labels == ("H0·g0", "H1·g0", "H2·g1", "H3·g1")
    gqa = GQA()
    mha = gqa.cache_bytes_per_token(64, 8, {"groups": 8})
    assert mha == 2 * 8 * 64 * 4 and gqa.cache_bytes_per_token(64, 8, {"groups": 2}) == mha / 4
    with pytest.raises(InputError, match="must divide the query heads H = 4"):
        gqa.run(q, k, v, hp={"groups": 3})


# -- MLA ------------------------------------------------------------------------------


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("hp", [{}, {"latent": 5, "rope_pairs": 1, "seed": 3}])
def test_mla_naive_equals_absorbed(is_causal, hp):
    q, k, v = qkv()
    absorbed = MLA().run(q, k, v, causal=is_causal, hp={**hp, "form": "absorbed"})
    naive = MLA().run(q, k, v, causal=is_causal, hp={**hp, "form": "naive"})
    assert torch.allclose(absorbed.out, naive.out, atol=TOL)
    assert torch.allclose(absorbed.weights, naive.weights, atol=TOL)
    assert torch.allclose(absorbed.weights @ absorbed.extra["values"], absorbed.out, atol=TOL)
    assert torch.allclose(absorbed.weights.sum(-1), torch.ones((), dtype=q.dtype), atol=TOL)
    fused = MLA().run(q, k, v, causal=is_causal, hp=hp, want_map=False)  # the kernel path
    assert torch.allclose(fused.out, naive.out, atol=TOL)
    d_c = hp.get("latent", 32)
    assert absorbed.extra["latent"].shape == (2, 1, 37, d_c)  # one latent per token, shared


@pytest.mark.parametrize("is_causal", [False, True])
def test_mla_learned_start_is_multi_head_attention(is_causal):
    """A trained grid model's MLA (issue 31) starts as MHA: with d_c = 4·d_h = 2·H·d_h and
    W_QR = 0 its scores are q·k / √(d + d_R) head by head, on both paths, and the
    projections take gradients."""
    heads, d = 2, 8
    q, k, v = qkv(heads=heads, d=d)
    start = MLA().learned(heads, d)
    assert MLA().grid_hp(d) == {"latent": 4 * d, "rope_pairs": d // 4}
    assert start["W_DKV"].shape == (2 * heads * d, 4 * d) and start["W_KR"].shape[-1] == d // 2
    W = {name: t.double().requires_grad_() for name, t in start.items()}
    allowed = causal(37) if is_causal else torch.ones(37, 37, dtype=torch.bool)
    s = (q @ k.transpose(-2, -1)) / math.sqrt(d + d // 2)
    p = masked_softmax(s, allowed)
    res = MLA().run(q, k, v, causal=is_causal, learned=W)
    assert torch.allclose(res.weights, p, atol=TOL) and torch.allclose(res.out, p @ v, atol=TOL)
    fused = MLA().run(q, k, v, causal=is_causal, want_map=False, learned=W)
    assert torch.allclose(fused.out, p @ v, atol=TOL)
    (fused.out * torch.randn_like(fused.out)).sum().backward()
    # W_KR's first gradient is 0 (it meets q^R = 0); it moves once W_QR has (LoRA's B = 0).
    moved = {name for name in W if W[name].grad.abs().sum() > 0}
    assert moved == {"W_DKV", "W_UK", "W_UV", "W_QR"} and W["W_KR"].grad is not None


@pytest.mark.parametrize("variant", [GLA(), Mamba(), NSA()], ids=["gla", "mamba", "nsa"])
def test_a_trained_model_s_own_gate_starts_seeded_and_is_per_head(variant):
    """GLA's gate (W_α1, W_α2, b_α), Mamba's selection (W_B, W_C, W_Δ, b_Δ, A) and NSA's
    branch gates (W_g, b_g) are learned in the grid's models (issue 31): they start as the
    seeded untrained ones on every head, each head then runs with its own, and every one
    takes gradients."""
    heads, d = 2, 8
    q, k, v = qkv(n=21, d=d, heads=heads)
    hp = variant.grid_hp(d)
    start = {name: t.double() for name, t in variant.learned(heads, d).items()}
    seeded = variant.run(q, k, v, causal=True, hp={**hp, "seed": 0})
    own = variant.run(q, k, v, causal=True, hp=hp, learned=start)
    assert torch.allclose(own.out, seeded.out, atol=TOL)
    assert torch.allclose(own.weights, seeded.weights, atol=TOL)
    g = torch.Generator().manual_seed(5)
    moved = {name: t.clone() for name, t in start.items()}
    for t in moved.values():
        t[1] += 0.1 * torch.randn(t[1].shape, generator=g, dtype=t.dtype)
    res = variant.run(q, k, v, causal=True, hp=hp, learned=moved)
    assert torch.allclose(res.out[:, :1], seeded.out[:, :1], atol=TOL)
    one = (t[:, 1:] for t in (q, k, v))
    alone = variant.run(*one, causal=True, hp=hp, learned={n: t[1:] for n, t in moved.items()})
    assert torch.allclose(res.out[:, 1:], alone.out, atol=TOL)
    W = {name: t.requires_grad_() for name, t in moved.items()}
    out = variant.run(q, k, v, causal=True, want_map=False, hp=hp, learned=W).out
    (out * torch.randn(out.shape, generator=g, dtype=out.dtype)).sum().backward()
    assert all(t.grad is not None and t.grad.abs().sum() > 0 for t in W.values())


@pytest.mark.parametrize("is_causal", [False, True])
def test_differential_learned_lambdas_start_at_the_seeded_draw_and_take_gradients(is_causal):
    q, k, v = qkv(n=19, d=8, heads=3)
    hp = Differential().grid_hp(8)
    assert hp == {"head_norm": "on"}  # the paper's headwise norm in the grid
    start = {name: t.double() for name, t in Differential().learned(3, 8).items()}
    seeded = Differential().run(q, k, v, causal=is_causal, hp={**hp, "seed": 0})
    W = {name: t.clone().requires_grad_() for name, t in start.items()}
    own = Differential().run(q, k, v, causal=is_causal, hp=hp, learned=W)
    assert torch.allclose(own.out, seeded.out, atol=TOL)
    assert torch.allclose(own.weights, seeded.weights, atol=TOL)
    fused = Differential().run(q, k, v, causal=is_causal, want_map=False, hp=hp, learned=W)
    assert torch.allclose(fused.out, seeded.out, atol=TOL)
    (fused.out * torch.linspace(-1, 1, fused.out.numel()).view_as(fused.out)).sum().backward()
    assert all(t.grad is not None and t.grad.abs().sum() > 0 for t in W.values())


def test_mla_cache_beside_mha_and_gqa():
    # DeepSeek-V2: d_h = 128, 128 heads, d_c = 4·d_h, d_R = d_h/2: the cache of GQA with
    # 2.25 groups (the paper's Table 1), 1/57 of multi-head attention's.
    t = cache_table(d=128, heads=128, groups=8, d_c=512, d_r=64)
    assert t["mla"] == (512 + 64) * 4 and t["mla"] / t["mqa"] == pytest.approx(2.25)
    assert t["mha"] / t["mla"] == pytest.approx(128 / 2.25)
    assert MLA().cache_bytes_per_token(128, 128, {"latent": 512, "rope_pairs": 32}) == t["mla"]


# -- window + sinks -------------------------------------------------------------------


def sink_reference(q, k, v, w, s, sink, is_causal):
    """Dense masked scores with the sink logit appended as a column, dropped after."""
    n = q.shape[-2]
    i, j = torch.arange(n)[:, None], torch.arange(n)
    allowed = ((i - j).abs() < w) | (j < s)
    if is_causal:
        allowed &= j <= i
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~allowed, -math.inf)
    if sink is not None:
        col = torch.full((*scores.shape[:-1], 1), sink, dtype=scores.dtype)
        scores = torch.cat([scores, col], dim=-1)
    e = torch.exp(scores - scores.amax(-1, keepdim=True))
    p = e / e.sum(-1, keepdim=True)
    mass = p[..., -1] if sink is not None else torch.zeros(p.shape[:-1], dtype=p.dtype)
    p = p[..., :n]
    return p @ v, p, mass, allowed


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("w,s,sink", [(5, 2, 1.0), (3, 0, -2.0), (20, 4, None), (1, 1, 3.0)])
def test_window_and_sinks_equal_the_dense_masked_softmax(is_causal, w, s, sink):
    q, k, v = qkv(n=70)
    hp = {"window": w, "sinks": s, "logit": "off" if sink is None else "on"}
    if sink is not None:
        hp["sink_logit"] = sink
    res = Sinks().run(q, k, v, causal=is_causal, hp=hp)
    ref, p, mass, allowed = sink_reference(q, k, v, w, s, sink, is_causal)
    assert torch.allclose(res.out, ref, atol=TOL) and torch.allclose(res.weights, p, atol=TOL)
    assert torch.allclose(res.extra["sink_mass"], mass, atol=TOL)
    assert torch.allclose(res.weights.sum(-1), 1 - mass, atol=TOL)  # rows sum to 1 − m
    assert torch.equal(res.pattern, allowed)
    fast = Sinks().run(q, k, v, causal=is_causal, hp=hp, want_map=False)
    assert torch.allclose(fast.out, res.out, atol=TOL)


@pytest.mark.parametrize("is_causal", [False, True])
def test_a_learned_sink_logit_per_head_equals_the_dense_form_head_by_head(is_causal):
    """gpt-oss's σ_h, one real value per head (issue 31): each head's rows equal the dense
    reference with that head's logit, and the logits take gradients."""
    q, k, v = qkv(n=23, heads=3)
    sigma = torch.tensor([-1.5, 0.25, 2.0], dtype=torch.float64, requires_grad=True)
    hp = {"window": 4, "sinks": 2}
    res = Sinks().run(q, k, v, causal=is_causal, hp=hp, learned={"sink_logit": sigma})
    for h, value in enumerate(sigma.tolist()):
        one = (t[:, h : h + 1] for t in (q, k, v))
        ref, p, mass, _ = sink_reference(*one, 4, 2, value, is_causal)
        assert torch.allclose(res.out[:, h : h + 1], ref, atol=TOL)
        assert torch.allclose(res.weights[:, h : h + 1], p, atol=TOL)
        assert torch.allclose(res.extra["sink_mass"][:, h : h + 1], mass, atol=TOL)
    res.out.sum().backward()
    assert sigma.grad is not None and (sigma.grad != 0).all()
    with pytest.raises(ValueError, match="learns no"):
        Sinks().run(q, k, v, hp=hp, learned={"gate": sigma})


@pytest.mark.parametrize("is_causal", [False, True])
def test_window_covering_n_without_sink_logit_is_full_attention(is_causal):
    q, k, v = qkv(n=40)
    allowed = causal(40) if is_causal else torch.ones(40, 40, dtype=torch.bool)
    ref, _ = dense_attention(q, k, v, allowed)
    res = Sinks().run(q, k, v, causal=is_causal, hp={"window": 40, "sinks": 3, "logit": "off"})
    assert torch.allclose(res.out, ref, atol=TOL)


def test_sinks_limits_and_bounded_cache():
    q, k, v = qkv(n=20)
    with pytest.raises(InputError, match="at most n = 20"):
        Sinks().run(q, k, v, hp={"window": 21})
    with pytest.raises(InputError, match="1 … 4096"):
        Sinks().run(q, k, v, hp={"window": 0})
    # 4 sinks + 1020 window tokens, d = 64, 8 heads: 8 KiB per token, 8 MiB at most.
    hp = {"window": 1020, "sinks": 4}
    assert Sinks().cache_bytes(10**6, 64, 8, hp) == 1024 * 2 * 8 * 64 * 4


# -- differential attention -----------------------------------------------------------


def test_lambda_init_schedule():
    assert lambda_init(1) == pytest.approx(0.2)
    assert lambda_init(2) == pytest.approx(0.8 - 0.6 * math.exp(-0.3))
    assert lambda_init(64) == pytest.approx(0.8, abs=1e-6)


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("layer,seed", [(1, 0), (5, 7)])
def test_differential_attention_direct(is_causal, layer, seed):
    q, k, v = qkv(d=8)
    res = Differential().run(q, k, v, causal=is_causal, hp={"layer": layer, "seed": seed})
    g = generator(seed)  # the λ vectors, drawn as the variant draws them (N(0, 0.1²))
    lq1, lk1, lq2, lk2 = (torch.randn(4, generator=g, dtype=torch.float64) * 0.1 for _ in "1234")
    lam = math.exp(lq1 @ lk1) - math.exp(lq2 @ lk2) + 0.8 - 0.6 * math.exp(-0.3 * (layer - 1))
    allowed = causal(37) if is_causal else torch.ones(37, 37, dtype=torch.bool)
    a1 = masked_softmax(q[..., :4] @ k[..., :4].transpose(-2, -1) / 2.0, allowed)
    a2 = masked_softmax(q[..., 4:] @ k[..., 4:].transpose(-2, -1) / 2.0, allowed)
    w = a1 - lam * a2
    assert torch.allclose(res.weights, w, atol=TOL) and torch.allclose(res.out, w @ v, atol=TOL)
    assert torch.allclose(res.extra["softmax1"], a1, atol=TOL)
    assert float(res.extra["lambda"]) == pytest.approx(lam, abs=1e-12)
    assert torch.allclose(res.weights.sum(-1), torch.full((), 1 - lam, dtype=w.dtype), atol=TOL)
    assert float(res.weights.min()) < 0  # signed
    fast = Differential().run(
        q, k, v, causal=is_causal, hp={"layer": layer, "seed": seed}, want_map=False
    )
    assert torch.allclose(fast.out, w @ v, atol=TOL)  # two fused attentions, subtracted


def test_differential_flags_head_norm_and_odd_heads():
    variant = Differential()
    assert variant.map_signed and not variant.map_normalized
    q, k, v = qkv(d=8)
    plain = variant.run(q, k, v, hp={"layer": 3})
    o = plain.out
    # The paper's and the official code's RMSNorm over each head's d channels (eps 1e-5,
    # gain 1), then × (1 − λ_init): not mean-centred, so it differs from a LayerNorm.
    rms = np.sqrt((o.numpy() ** 2).mean(-1, keepdims=True) + 1e-5)
    ref = torch.from_numpy(o.numpy() / rms * (1 - (0.8 - 0.6 * math.exp(-0.3 * 2))))
    layer_norm = torch.nn.functional.layer_norm(o, o.shape[-1:], eps=1e-5) * (1 - lambda_init(3))
    assert (layer_norm - ref).abs().max() > 0.1
    for want_map in (True, False):
        normed = variant.run(q, k, v, hp={"layer": 3, "head_norm": "on"}, want_map=want_map)
        assert torch.allclose(normed.out, ref, atol=1e-9)
    with pytest.raises(InputError, match="must be even; got 7"):
        variant.run(*qkv(d=7))
    with pytest.raises(InputError, match="1 … 64"):
        variant.run(q, k, v, hp={"layer": 0})


# -- MoBA -----------------------------------------------------------------------------


def test_moba_with_every_block_is_causal_full_attention():
    q, k, v = qkv(n=70)
    ref, p = dense_attention(q, k, v, causal(70))
    res = MoBA().run(q, k, v, hp={"block": 8, "top_k": 9})  # ⌈70/8⌉ = 9 blocks
    assert torch.allclose(res.out, ref, atol=TOL) and torch.allclose(res.weights, p, atol=TOL)


@pytest.mark.parametrize("b,top_k", [(8, 2), (5, 3), (16, 1)])
def test_moba_selection_by_hand_and_never_in_the_future(b, top_k):
    n = 70
    q, k, v = qkv(n=n)
    res = MoBA().run(q, k, v, hp={"block": b, "top_k": top_k})
    nb = math.ceil(n / b)
    means = torch.stack([k[..., c * b : (c + 1) * b, :].mean(-2) for c in range(nb)], dim=-2)
    gates = q @ means.transpose(-2, -1)
    want = torch.zeros(2, 4, n, nb, dtype=torch.bool)
    for i in range(n):
        own = i // b
        past = gates[:, :, i, :own]
        want[:, :, i, own] = True
        if own and top_k > 1:
            idx = past.topk(min(top_k - 1, own), dim=-1).indices
            want[:, :, i].scatter_(-1, idx, True)
    assert torch.equal(res.extra["selected"].bool(), want)
    blocks = torch.arange(nb)
    assert not (res.extra["selected"].bool() & (blocks > (torch.arange(n) // b)[:, None])).any()
    allowed = want.repeat_interleave(b, dim=-1)[..., :n] & causal(n)
    ref, p = dense_attention(q, k, v, allowed)
    assert torch.allclose(res.out, ref, atol=TOL) and torch.allclose(res.weights, p, atol=TOL)
    assert torch.equal(res.pattern, allowed)


def test_moba_limits():
    q, k, v = qkv(n=20)
    with pytest.raises(InputError, match=r"number of blocks ⌈n / block⌉ = 3; got 4"):
        MoBA().run(q, k, v, hp={"block": 8, "top_k": 4})
    with pytest.raises(InputError, match="at most n = 20"):
        MoBA().run(q, k, v, hp={"block": 21, "top_k": 1})


# -- NSA ------------------------------------------------------------------------------


@pytest.mark.parametrize("l,top_n,w", [(5, 2, 6), (8, 1, 3), (4, 0, 10), (7, 10, 1)])
def test_nsa_equals_three_dense_branches_mixed_by_gates(l, top_n, w):
    n = 70
    q, k, v = qkv(n=n, seed=2)
    res = NSA().run(q, k, v, hp={"block": l, "top_n": top_n, "window": w})
    nb = math.ceil(n / l)
    i, j = torch.arange(n)[:, None], torch.arange(n)
    # compressed: block means, seen once the block has ended
    kc = torch.stack([k[..., c * l : (c + 1) * l, :].mean(-2) for c in range(nb)], dim=-2)
    vc = torch.stack([v[..., c * l : (c + 1) * l, :].mean(-2) for c in range(nb)], dim=-2)
    seen = (torch.arange(nb) + 1) * l - 1 <= i
    o_cmp, p_cmp = dense_attention(q, kc, vc, seen)
    # selected: initial and own block, then the top-n finished others by p_cmp
    sel = torch.zeros(2, 4, n, nb, dtype=torch.bool)
    for t in range(n):
        own = t // l
        sel[:, :, t, 0] = sel[:, :, t, own] = True
        others = list(range(1, own))
        if others and top_n:
            idx = p_cmp[:, :, t, 1:own].topk(min(top_n, len(others)), dim=-1).indices + 1
            sel[:, :, t].scatter_(-1, idx, True)
    sel_tokens = sel.repeat_interleave(l, dim=-1)[..., :n] & (j <= i)
    o_slc, p_slc = dense_attention(q, k, v, sel_tokens)
    o_win, p_win = dense_attention(q, k, v, (i - j < w) & (j <= i))
    g = torch.sigmoid(q @ gate_weights(8, 0, q.dtype))
    out = g[..., :1] * o_cmp + g[..., 1:2] * o_slc + g[..., 2:] * o_win
    sizes = torch.tensor([min(l, n - c * l) for c in range(nb)], dtype=q.dtype)
    spread = (p_cmp / sizes).repeat_interleave(l, dim=-1)[..., :n]
    weights = g[..., :1] * spread + g[..., 1:2] * p_slc + g[..., 2:] * p_win
    assert torch.allclose(res.out, out, atol=TOL)
    assert torch.allclose(res.weights, weights, atol=TOL)
    assert torch.allclose(res.weights @ v, res.out, atol=TOL)
    assert torch.equal(res.extra["selected"].bool(), sel)
    assert not (sel & (torch.arange(nb) > i // l)).any()  # never a future block
    assert torch.allclose(res.extra["gates"], g, atol=TOL)


def test_nsa_limits():
    q, k, v = qkv(n=20)
    with pytest.raises(InputError, match="= 3; got 5"):
        NSA().run(q, k, v, hp={"block": 8, "top_n": 5})
    with pytest.raises(InputError, match="at most n = 20"):
        NSA().run(q, k, v, hp={"window": 30})


# -- the linear-recurrent family: parallel (implicit map) = recurrent -----------------


def rope_by_hand(x):
    n, d = x.shape[-2:]
    out = torch.empty_like(x)
    for p in range(d // 2):
        theta = torch.arange(n, dtype=x.dtype) * 10000.0 ** (-2 * p / d)
        a, b = x[..., 2 * p], x[..., 2 * p + 1]
        out[..., 2 * p] = a * theta.cos() - b * theta.sin()
        out[..., 2 * p + 1] = a * theta.sin() + b * theta.cos()
    return out


def test_retnet_parallel_equals_recurrent():
    q, k, v = qkv(n=70)
    res = RetNet().run(q, k, v)
    qr, kr = rope_by_hand(q), rope_by_hand(k) / math.sqrt(8)
    gamma = 1 - 2.0 ** (-5 - torch.arange(4, dtype=torch.float64))
    t = torch.arange(70)
    gap = (t[:, None] - t).double()
    D = torch.where(gap >= 0, gamma[:, None, None] ** gap.clamp(min=0), 0.0)
    parallel = (qr @ kr.transpose(-2, -1)) * D
    S = torch.zeros(2, 4, 8, 8, dtype=torch.float64)
    for step in range(70):
        S = gamma[:, None, None] * S + kr[:, :, step, :, None] * v[:, :, step, None, :]
        assert torch.allclose(res.out[:, :, step], (qr[:, :, step, None] @ S)[:, :, 0], atol=TOL)
    assert torch.allclose(res.weights, parallel, atol=TOL)
    assert torch.allclose(res.out, parallel @ v, atol=TOL)


def test_gla_implicit_map_equals_recurrence():
    q, k, v = qkv(n=70)
    res = GLA().run(q, k, v, hp={"seed": 4})
    alpha = gate_log_alpha(k, 4).exp()
    assert float(alpha.min()) > 0 and float(alpha.max()) < 1
    S = torch.zeros(2, 4, 8, 8, dtype=torch.float64)
    for t in range(70):  # S_t = diag(α_t) S_{t−1} + k_tᵀ v_t, o_t = q_t S_t / √d
        S = alpha[:, :, t, :, None] * S + k[:, :, t, :, None] * v[:, :, t, None, :]
        assert torch.allclose(res.out[:, :, t], (q[:, :, t, None] @ S)[:, :, 0] / math.sqrt(8))
    assert torch.allclose(res.weights @ v, res.out, atol=TOL)
    assert float(res.weights.triu(1).abs().max()) == 0.0 and float(res.weights.min()) < 0


@pytest.mark.parametrize("variant", [DeltaNet(), GatedDeltaNet()], ids=lambda v: v.name)
def test_deltanet_implicit_map_equals_the_delta_rule(variant):
    q, k, v = qkv(n=50)
    res = variant.run(q, k, v)
    beta, log_alpha = write_strength(k, 0, variant.gated)
    qn, kn = q / q.norm(dim=-1, keepdim=True), k / k.norm(dim=-1, keepdim=True)
    eye = torch.eye(8, dtype=torch.float64)
    S = torch.zeros(2, 4, 8, 8, dtype=torch.float64)  # [d_v, d_k], as the papers write it
    for t in range(50):
        kt = kn[:, :, t, :, None]
        b = beta[:, :, t, None, None]
        a = log_alpha[:, :, t, None, None].exp()
        S = S @ (a * (eye - b * kt @ kt.transpose(-2, -1))) + b * v[:, :, t, :, None] @ kt.mT
        assert torch.allclose(res.out[:, :, t], (S @ qn[:, :, t, :, None])[..., 0], atol=TOL)
    assert torch.allclose(res.weights @ v, res.out, atol=TOL)
    assert float(res.weights.triu(1).abs().max()) == 0.0 and float(res.weights.min()) < 0
    if variant.gated:
        assert float(log_alpha.max()) < 0  # the gate forgets
    else:
        assert float(log_alpha.abs().max()) == 0


def test_deltanet_overwrites_a_key_written_twice():
    """The delta rule's point: writing v₂ under a key that holds v₁ replaces it (β → 1)."""
    k = torch.zeros(1, 1, 3, 4, dtype=torch.float64)
    k[..., :, 0] = 1.0  # the same unit key three times
    v = torch.tensor([[[[1.0, 0, 0, 0], [0, 2.0, 0, 0], [0, 0, 0, 0]]]], dtype=torch.float64)
    beta = torch.ones(1, 1, 3, dtype=torch.float64)
    out = delta_recurrent(k, k, v, beta, torch.zeros_like(beta))
    assert torch.allclose(out[0, 0, 1], v[0, 0, 1]) and torch.allclose(out[0, 0, 2], v[0, 0, 2])


@pytest.mark.parametrize("is_causal", [False, True])
def test_based_taylor_map_equals_recurrence(is_causal):
    q, k, v = qkv(n=150)  # > one causal block of 64 rows
    res = Based().run(q, k, v, causal=is_causal, hp={"features": 4})
    qf, kf = q[..., :4], k[..., :4]  # the first d' dims: the model's W_Q, W_K rows project
    s = qf @ kf.transpose(-2, -1) / 2.0  # √d' = 2
    a = torch.exp(s) - (torch.exp(s) - 1 - s - s**2 / 2)  # exp's Taylor polynomial
    assert float(a.min()) > 0
    if is_causal:
        a = a.tril()
    a = a / a.sum(-1, keepdim=True)
    assert torch.allclose(res.weights, a, atol=TOL) and torch.allclose(res.out, a @ v, atol=TOL)
    if is_causal:  # the recurrence on φ: state S = Σ φ(k) vᵀ, z = Σ φ(k)

        def phi(x):
            x = x / math.sqrt(2)  # d'^{1/4} = √2
            outer = (x[..., :, None] * x[..., None, :]).flatten(-2) / math.sqrt(2)
            return torch.cat([torch.ones_like(x[..., :1]), x, outer], -1)

        S = torch.zeros(2, 4, 21, 8, dtype=torch.float64)
        z = torch.zeros(2, 4, 21, dtype=torch.float64)
        for t in range(150):
            fk, fq = phi(kf[:, :, t]), phi(qf[:, :, t])
            S, z = S + fk[..., None] * v[:, :, t, None, :], z + fk
            o = (fq[:, :, None] @ S)[:, :, 0] / (fq * z).sum(-1, keepdim=True)
            assert torch.allclose(res.out[:, :, t], o, atol=TOL)


def test_based_feature_dim_is_at_most_the_head_width():
    """d' > d reads all d dims of q, k: the same output, and the state counted with d."""
    q, k, v = qkv(n=20)  # head width 8
    wide = Based().run(q, k, v, causal=True, want_map=False, hp={"features": 64})
    whole = Based().run(q, k, v, causal=True, want_map=False, hp={"features": 8})
    assert torch.equal(wide.out, whole.out)
    assert Based().cache_bytes(20, 8, 1, {"features": 64}) == (1 + 8 + 64) * 9 * 4


def test_recurrent_state_sizes():
    # d = 64, 8 heads, float32: a d×d state per head for RetNet, GLA and DeltaNet.
    for variant in (RetNet(), GLA(), DeltaNet(), GatedDeltaNet()):
        assert variant.cache_bytes(10**6, 64, 8) == 8 * 64 * 64 * 4
    assert Based().cache_bytes(10**6, 64, 8) == 8 * (1 + 16 + 256) * 65 * 4


@pytest.mark.parametrize(
    "variant",
    [GQA(), MLA(), Sinks(), Differential(), MoBA(), NSA(), RetNet(), GLA(), DeltaNet(), Based()],
    ids=lambda v: v.name,
)
def test_flop_model_is_linear_or_quadratic_as_stated(variant):
    hp = variant.resolve({})
    ratio = variant.flops(8192, 64, hp) / variant.flops(4096, 64, hp)
    # n² or n·(n/b) (MoBA's gates, NSA's compressed keys): quadratic at large n
    quadratic = "n²" in variant.time_complexity or "n/" in variant.time_complexity
    assert ratio == pytest.approx(4.0 if quadratic else 2.0, rel=0.15)


def test_sinks_trace_draws_the_missing_mass_as_a_sink_column():
    q, k, v = (t.float() for t in qkv(n=20))
    tr = Sinks().trace(q, k, v, causal=True, hp={"window": 4, "sinks": 1, "sink_logit": 2.0})
    amap, with_sink = tr.maps["attention"], tr.maps["with_sink"]
    assert not amap.normalized and with_sink.normalized  # rows with the sink sum to 1
    assert with_sink.key_labels[-1] == "⟨sink⟩" and with_sink.shape[-1] == 21
    assert (with_sink.weights[..., -1] > 0.05).all()
    assert abs(with_sink.weights.sum(-1) - 1).max() < 1e-5


@pytest.mark.parametrize(
    "variant,signed",
    [(Differential(), True), (RetNet(), True), (GLA(), True), (DeltaNet(), True)]
    + [(GatedDeltaNet(), True), (Based(), False), (Sinks(), False), (GQA(), False)],
    ids=lambda x: getattr(x, "name", str(x)),
)
def test_maps_say_when_they_are_signed(variant, signed):
    q, k, v = (t.float() for t in qkv(n=24))
    amap = variant.trace(q, k, v).maps["attention"]
    assert amap.signed == signed and ("signed" in amap.flags) == signed
    if signed:
        assert not amap.normalized and float(amap.weights.min()) < 0


def test_cache_after_n_tokens_grows_for_caches_and_not_for_states():
    kv = (GQA(), MLA(), Differential(), MoBA(), NSA())
    for variant in kv:
        assert variant.cache_bytes(2048, 64, 8) == 2 * variant.cache_bytes(1024, 64, 8)
    for variant in (RetNet(), GLA(), DeltaNet(), GatedDeltaNet(), Based(), Sinks()):
        assert variant.cache_bytes(4096, 64, 8) == variant.cache_bytes(2048, 64, 8)
