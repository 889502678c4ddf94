"""Properties every variant must have: exact ones equal full attention, maps are honest,
patterns have the promised shape, approximations converge as their budget grows."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from engine.attention import scaled_dot_product_attention
from engine.errors import InputError
from engine.trace import Trace
from engine.variants import REGISTRY, get, names
from engine.variants.map_distance import relative_error

torch.set_num_threads(1)
TOL = 1e-5


def qkv(n=48, d=16, heads=2, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    q, k, v = torch.randn(3, 1, heads, n, d, generator=g).unbind(0)
    return q * scale, k * scale, v


def full(q, k, v, causal=False):
    return scaled_dot_product_attention(q, k, v, causal=causal)


def test_registry_is_complete_and_consistent():
    expected = {
        "full",
        "flash",
        "linformer",
        "performer",
        "longformer",
        "reformer",
        "bigbird",
        "chunked",
        "sparse",
        "mamba",
        "kv_cache",
        "int8",
        "linear",
    }
    assert expected <= set(names())
    for name, v in REGISTRY.items():
        assert v.name == name
        assert v.title and v.paper and v.time_complexity.startswith("O(")
        assert v.memory_complexity.startswith("O(")
        hp = v.resolve({})
        assert v.flops(1024, 64, hp) > 0 and v.memory(1024, 64, hp) > 0
    with pytest.raises(InputError, match="Unknown variant"):
        get("nope")


def test_complexities_are_stated_correctly():
    assert "log" not in get("performer").time_complexity  # O(n), not O(n log n)
    assert "log" in get("reformer").time_complexity
    assert get("full").time_complexity == "O(n²·d)"
    assert get("flash").memory_complexity == "O(n·d)"


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("name", ["full", "flash"])
def test_exact_variants_equal_full_attention(name, causal):
    q, k, v = qkv()
    ref, w = full(q, k, v, causal)
    res = get(name).run(q, k, v, causal=causal)
    assert torch.allclose(res.out, ref, atol=TOL, rtol=0)
    assert torch.allclose(res.weights, w, atol=TOL, rtol=0)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("name", ["full", "flash"])
def test_exact_variants_without_map_equal_float64_attention(name, causal):
    q, k, v = qkv(n=70)
    s = (q.double() @ k.double().transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(~torch.ones(70, 70, dtype=torch.bool).tril(), -math.inf)
    res = get(name).run(q, k, v, causal=causal, want_map=False)
    assert res.weights is None
    assert torch.allclose(res.out.double(), torch.softmax(s, -1) @ v.double(), atol=TOL)


def test_kv_cache_decoding_equals_full_causal_attention():
    q, k, v = qkv(n=40)
    ref, w = full(q, k, v, causal=True)
    res = get("kv_cache").run(q, k, v)
    assert torch.allclose(res.out, ref, atol=TOL, rtol=0)
    assert torch.allclose(res.weights, w, atol=TOL, rtol=0)


def test_a_pause_in_one_decoding_run_is_not_a_step_of_the_chart(monkeypatch):
    """Each step is the fastest of the runs: an 80 ms pause of the machine in one run (it
    drew the Variants lab's KV-cache chart at 80 ms over steps under 1 ms) is dropped, and
    so are pauses in two of the three (a median kept those: 25 spikes in 256 steps)."""
    from engine.variants import kv_cache

    real, calls = kv_cache.generate, []

    def paused_once(layer, x, *, use_cache):
        run = real(layer, x, use_cache=use_cache)
        calls.append(use_cache)
        if calls in ([True, False], [True, False, True, False]):  # two no-cache runs paused
            run.step_seconds[5] += 0.08
        return run

    monkeypatch.setattr(kv_cache, "generate", paused_once)
    res = kv_cache.compare(12, d_model=16, heads=2)
    assert calls == [True, False] * kv_cache.REPEATS and res["repeats"] == 3
    assert res["step_seconds_no_cache"][5] < 0.04
    assert res["total_no_cache_s"] == pytest.approx(sum(res["step_seconds_no_cache"]))
    assert res["max_abs_diff_cache_vs_full"] < 1e-5


@pytest.mark.parametrize(
    "name,hp",
    [
        ("linformer", {"k": 48}),  # k = n: E = I
        ("longformer", {"window": 96, "globals": 0}),  # window covers everything
        ("reformer", {"chunk": 96, "rounds": 3}),  # one chunk holds all 2n items
        ("bigbird", {"block": 24, "global_blocks": 0, "random_blocks": 0}),  # 2 blocks, window 3
        ("chunked", {"chunk": 48, "overlap": 0}),
        ("sparse", {"block": 48, "summary": 1}),
    ],
)
def test_approximations_are_exact_at_full_budget(name, hp):
    q, k, v = qkv()
    causal = get(name).causal_support != "never"
    for c in {False, causal}:
        ref, _ = full(q, k, v, c)
        assert torch.allclose(get(name).run(q, k, v, causal=c, hp=hp).out, ref, atol=TOL)


@pytest.mark.parametrize("name", [n for n in names() if n != "mamba"])
def test_map_is_the_map_the_output_used(name):
    """Honest maps: out = weights · V (the pooled or up-projected values where the variant
    says so), and normalised maps have rows summing to 1."""
    q, k, v = qkv(n=37)
    variant = get(name)
    causal = variant.causal_support == "always"
    res = variant.run(q, k, v, causal=causal)
    assert torch.allclose(res.weights @ res.extra.get("values", v), res.out, atol=1e-4)
    if variant.map_normalized:
        assert torch.allclose(res.weights.sum(-1), torch.ones(1), atol=1e-4)
    if res.pattern is not None:
        outside = res.weights.abs() * (~res.pattern.expand_as(res.weights))
        assert float(outside.max()) == 0.0


def test_maps_carry_honest_flags():
    q, k, v = qkv(n=40)
    flags = {n: get(n).trace(q, k, v).maps["attention"] for n in names()}
    for implied in ("performer", "linformer", "mamba"):
        assert flags[implied].implied and not flags[implied].exact
    for exact in ("full", "flash", "longformer", "bigbird", "int8"):
        assert flags[exact].exact and not flags[exact].implied
    assert flags["mamba"].kind == "hidden" and not flags["mamba"].normalized
    pattern = get("longformer").trace(q, k, v).maps["pattern"]
    assert pattern.masked_only and pattern.kind == "pattern"


def _pattern(name, n, hp, causal=False):
    return get(name).run(*qkv(n=n, heads=1), causal=causal, hp=hp).pattern.reshape(-1, n, n)[0]


def test_longformer_pattern_is_band_plus_globals():
    n, w, g = 40, 3, 2  # window w: |i − j| ≤ w, the meaning of engine.patterns
    p = _pattern("longformer", n, {"window": w, "globals": g})
    i, j = np.indices((n, n))
    want = (np.abs(i - j) <= w) | (i < g) | (j < g)
    assert np.array_equal(p.numpy(), want)
    pc = _pattern("longformer", n, {"window": w, "globals": g}, causal=True)
    assert np.array_equal(pc.numpy(), want & (j <= i))


def test_chunked_and_sparse_patterns():
    n, c, o = 40, 8, 3
    i, j = np.indices((n, n))
    want = (j // c == i // c) | ((j < (i // c) * c) & (j >= (i // c) * c - o))
    assert np.array_equal(_pattern("chunked", n, {"chunk": c, "overlap": o}).numpy(), want)
    l, s = 8, 2
    want = (j // l == i // l) | (j % l >= l - s)
    assert np.array_equal(_pattern("sparse", n, {"block": l, "summary": s}).numpy(), want)


def test_bigbird_pattern_has_window_globals_and_random_blocks():
    n, b = 64, 8
    p = _pattern("bigbird", n, {"block": b, "global_blocks": 1, "random_blocks": 1}).numpy()
    blocks = p.reshape(n // b, b, n // b, b).any(axis=(1, 3))
    ib, jb = np.indices(blocks.shape)
    assert blocks[np.abs(ib - jb) <= 1].all()  # window of three blocks
    assert blocks[0].all() and blocks[:, 0].all()  # global block row and column
    extra = blocks & (np.abs(ib - jb) > 1) & (jb > 0)
    assert extra[1:].sum(axis=1).max() <= 1  # at most r = 1 random block per row
    assert extra.sum() > 0


def _mean_error(name, budget_key, budget, n=128, seeds=4, structure_scale=0.5):
    errs = []
    for seed in range(seeds):
        q, k, v = qkv(n=n, d=16, heads=1, seed=seed, scale=structure_scale)
        ref, _ = full(q, k, v)
        out = get(name).run(q, k, v, want_map=False, hp={budget_key: budget, "seed": seed}).out
        errs.append(relative_error(out, ref))
    return float(np.mean(errs))


@pytest.mark.parametrize(
    "name,key,budgets",
    [
        ("performer", "features", [8, 64, 512]),
        ("linformer", "k", [4, 16, 64]),
        ("reformer", "rounds", [1, 4, 16]),
    ],
)
def test_approximations_converge_as_budget_grows(name, key, budgets):
    errors = [_mean_error(name, key, b) for b in budgets]
    assert errors[0] > errors[1] > errors[2], errors


def test_mamba_scan_equals_its_hidden_attention():
    from engine.variants.mamba import (
        hidden_attention,
        selection_weights,
        selective_parameters,
        selective_scan,
    )

    q, k, v = qkv(n=70, d=8)
    x, delta, B, C, A = selective_parameters(q, k, v, selection_weights(8, 4, seed=1))
    y = selective_scan(x, delta, B, C, A)
    alpha = hidden_attention(delta, B, C, A, per_channel=True)  # (B, H, D, n, n)
    assert torch.allclose(
        y.double(), torch.einsum("bhdij,bhjd->bhid", alpha, x.double()), atol=1e-5
    )
    h = torch.zeros(1, 2, 8, 4)  # the recurrence itself, step by step
    for t in range(70):
        h = torch.exp(delta[:, :, t, :, None] * A) * h + (
            delta[:, :, t, :, None] * B[:, :, t, None, :] * x[:, :, t, :, None]
        )
        assert torch.allclose((h * C[:, :, t, None, :]).sum(-1), y[:, :, t], atol=1e-5)
    assert float(alpha.triu(1).abs().max()) == 0.0  # causal: no future key


def test_int8_sage_is_close_and_beats_naive_on_a_k_outlier():
    from engine.variants.int8 import int8_attention, output_agreement

    q, k, v = qkv(n=128, d=32, heads=2)
    ref, _ = full(q, k, v)
    sage, _ = int8_attention(q, k, v, scheme="sage")
    assert output_agreement(sage, ref)["cosine"] > 0.999
    k_bias = k + torch.linspace(0, 40, 32)  # a channel bias shared by every token
    ref_b, _ = full(q, k_bias, v)
    sage_b = output_agreement(int8_attention(q, k_bias, v, scheme="sage")[0], ref_b)
    naive_b = output_agreement(int8_attention(q, k_bias, v, scheme="naive")[0], ref_b)
    assert sage_b["cosine"] > 0.999 and sage_b["rel_l1"] < naive_b["rel_l1"]


@pytest.mark.parametrize(
    "name,hp,match",
    [
        ("longformer", {"window": 5000}, "1024"),
        ("linformer", {"k": 100}, "at most n"),
        ("reformer", {"buckets": 7}, "even"),
        ("performer", {"features": 2}, "8"),
        ("bigbird", {"block": "x"}, "number"),
        ("int8", {"scheme": "fp4"}, "sage"),
        ("full", {"window": 3}, "no parameter"),
    ],
)
def test_parameters_outside_limits_are_refused_with_the_limit(name, hp, match):
    with pytest.raises(InputError, match=match):
        get(name).run(*qkv(), hp=hp)


def test_bidirectional_only_variants_refuse_causal():
    with pytest.raises(InputError, match="bidirectional"):
        get("performer").run(*qkv(), causal=True)


def test_trace_round_trips_through_json():
    q, k, v = qkv(n=12)
    tr = get("bigbird").trace(
        q, k, v, labels=[f"t{i}" for i in range(12)], hp={"block": 4, "random_blocks": 1}
    )
    back = Trace.from_json(tr.to_json())
    assert back.inputs == tr.inputs and back.maps.keys() == tr.maps.keys()
    assert np.array_equal(back.maps["attention"].weights, tr.maps["attention"].weights)


def test_map_distance_properties():
    from engine.variants import map_distance as metrics

    rng = np.random.default_rng(0)
    p = rng.random((4, 10))
    p /= p.sum(1, keepdims=True)
    q = rng.random((4, 10))
    q /= q.sum(1, keepdims=True)
    assert metrics.kl_divergence(p, p) == pytest.approx(0, abs=1e-12)
    assert metrics.kl_divergence(p, q) > 0
    assert 0 < metrics.js_divergence(p, q) <= math.log(2)
    assert metrics.topk_overlap(p, p, 3) == 1.0
    assert metrics.missed_mass(p, np.ones_like(p)) == 0.0


def test_swapping_full_attention_into_the_trained_transformer_changes_nothing():
    from engine import checkpoints
    from engine.models import transformer

    name = "transformer-dates-sinusoidal"
    if name not in checkpoints.available("transformer-dates"):
        pytest.skip(f"checkpoint {name} not trained yet")
    tr = transformer.load(name)
    _, src = transformer.source_ids(tr, "12 March 2021")
    ids = tr.greedy(src, tr.max_new)[0, 1:].tolist()
    words = [tr.tgt_vocab.itos[i] for i in ids if i not in (transformer.EOS, transformer.PAD)]
    own = transformer.detokenize(tr.task, words)
    assert transformer.translate(tr, "12 March 2021", attend="full") == own
    assert transformer.translate(tr, "12 March 2021", attend="flash") == own
    q, k, v, tokens = transformer.layer_qkv(tr, "12 March 2021")
    assert q.shape[2] == len(tokens) == 13


@pytest.mark.parametrize("causal", [False, True])
def test_linear_attention_is_its_kernel_formula(causal):
    """Katharopoulos et al. eq. 6: out_i = Σ_j φ(q_i)·φ(k_j) v_j / Σ_j φ(q_i)·φ(k_j)."""
    from engine.variants.linear import feature_map

    q, k, v = qkv(n=150)  # > one causal block of 64 rows
    a = feature_map(q) @ feature_map(k).transpose(-2, -1)
    if causal:
        a = a.tril()
    res = get("linear").run(q, k, v, causal=causal)
    assert torch.allclose(res.out, (a / a.sum(-1, keepdim=True)) @ v, atol=1e-5)
    assert float(feature_map(q).min()) > 0  # elu + 1 keeps every weight positive
    if causal:
        assert float(res.weights.triu(1).abs().max()) == 0.0


def test_linear_attention_flags_and_state_size():
    variant = get("linear")
    tr = variant.trace(*qkv(n=20))
    assert tr.maps["attention"].implied and not tr.maps["attention"].exact
    assert not variant.approximates_full  # a different kernel, not an approximation
    hp = variant.resolve({})
    # O(n·d²) time: doubling n doubles the FLOPs; the state does not grow with n.
    assert variant.flops(2048, 32, hp) == pytest.approx(2 * variant.flops(1024, 32, hp))


@pytest.mark.parametrize("name", [n for n in names() if n not in ("kv_cache", "int8")])
def test_every_trainable_variant_passes_gradients(name):
    """The quality grid trains every variant with autograd: q, k, v all get finite grads."""
    q, k, v = (t.clone().requires_grad_(True) for t in qkv(n=40))
    out, _ = get(name).attend()(q, k, v, want_weights=False)
    out.square().sum().backward()
    for t in (q, k, v):
        assert t.grad is not None and torch.isfinite(t.grad).all() and t.grad.abs().sum() > 0
    with torch.no_grad():  # the training path computes what the inference path does
        ref, _ = get(name).attend()(q, k, v, want_weights=False)
    assert torch.allclose(out.detach(), ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    "hp", [{"rounds": 1, "chunk": 8}, {"rounds": 4, "chunk": 16, "buckets": 4}, {"rounds": 16}]
)
def test_reformer_is_softmax_over_the_keys_it_met(causal, hp):
    """Rounds combined with the −log N_ij correction = one softmax over the union of keys
    met in any round (the pattern): output and map both, and without the map too."""
    q, k, v = qkv(n=70, heads=2)
    res = get("reformer").run(q, k, v, causal=causal, hp=hp)
    s = (q.double() @ k.double().transpose(-2, -1)) / math.sqrt(q.shape[-1])
    p = torch.softmax(s.masked_fill(~res.pattern, -math.inf), dim=-1).nan_to_num(0.0)
    assert torch.allclose(res.weights.double(), p, atol=1e-6)  # a row that met no key: 0
    assert torch.allclose(res.out.double(), p @ v.double(), atol=1e-5)
    fast = get("reformer").run(q, k, v, causal=causal, hp=hp, want_map=False)
    assert torch.allclose(fast.out, res.out, atol=1e-6)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("hp", [{"window": 3, "globals": 2}, {"window": 20, "globals": 0}])
def test_longformer_output_without_map_equals_the_map_path(causal, hp):
    q, k, v = qkv(n=70)
    with_map = get("longformer").run(q, k, v, causal=causal, hp=hp)
    fast = get("longformer").run(q, k, v, causal=causal, hp=hp, want_map=False)
    assert torch.allclose(fast.out, with_map.out, atol=1e-6)


@pytest.mark.parametrize(
    "name,hp,n",
    [
        ("performer", {"features": 1024}, 300),  # steps of 128 rows, the last one short
        ("performer", {"features": 4096}, 200),  # the fewest rows per step (64)
        ("performer", {"features": 16}, 300),  # one step
        ("linformer", {"k": 10}, 70),  # equal segments: no bias
        ("linformer", {"k": 9}, 70),  # unequal segments: the log|segment| bias
    ],
)
def test_output_without_map_equals_the_map_path(name, hp, n):
    """Performer streams its features and Linformer runs the fused kernel over pooled
    keys when no map is asked for: the same output as the path that forms the map."""
    q, k, v = qkv(n=n)
    with_map = get(name).run(q, k, v, hp=hp)
    fast = get(name).run(q, k, v, hp=hp, want_map=False)
    assert torch.allclose(fast.out, with_map.out, atol=1e-5)


def test_mamba_scan_is_the_same_across_segments(monkeypatch):
    """Segments of one chunk (the fewest steps), the last one short, carry the state."""
    from engine.variants import mamba

    q, k, v = qkv(n=150, d=8)
    x, delta, B, C, A = mamba.selective_parameters(q, k, v, mamba.selection_weights(8, 4, seed=1))
    whole = mamba.selective_scan(x, delta, B, C, A)
    monkeypatch.setattr(mamba, "SEGMENT_BYTES", 1)
    assert mamba.segment_steps(2, 8, 4) == mamba.CHUNK
    assert torch.allclose(mamba.selective_scan(x, delta, B, C, A), whole, atol=1e-5)


def test_reformer_blocks_that_meet_no_key_train_without_error(monkeypatch):
    """Queries and keys hashed to opposite buckets leave whole query blocks with no key.

    Found by the copy task's training grid: a group of such blocks has an empty key run,
    and the shifted softmax's max over zero keys raised. They now meet nothing (output 0).
    """
    from engine.variants import reformer

    monkeypatch.setattr(reformer, "GROUP_BYTES", 1)  # one block per group
    q = torch.zeros(2, 1, 64, 8)
    q[..., 0] = 100.0  # large scores: the shifted path (not shift-free)
    k, v = -q, torch.randn(2, 1, 64, 8)
    q.requires_grad_()
    hp = {"buckets": 8, "rounds": 2, "chunk": 4}
    out, w = get("reformer").attend(hp)(q, k, v, causal=False, want_weights=True)
    out.sum().backward()
    assert torch.isfinite(out).all() and torch.isfinite(q.grad).all()
    met = w.sum(-1) > 0
    assert met.any() and not met.all()  # some queries met keys, the far ones none
    assert torch.allclose(w.sum(-1)[met], torch.ones(()))
    assert torch.equal(out[~met], torch.zeros_like(out[~met]))


def test_the_lab_refuses_to_score_what_needs_training_and_names_trivial_exactness():
    """The Chat page's rule in the lab: a variant that needs training gets a note, not
    numbers from seeded stand-ins; a budget that covers every key says it is trivially
    exact."""
    from engine.variants import compare

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 16, 8, generator=g) for _ in range(3))
    labels = [str(i) for i in range(16)]
    untrained = [n for n in names() if get(n).needs_training]
    assert {"mla", "gqa", "deltanet"} <= set(untrained)
    params = {"longformer": {"window": 64, "globals": 0}}
    traces, rows = compare.run_all(
        ["mla", "longformer", "performer"], q, k, v, labels, params=params
    )
    by = {r["variant"]: r for r in rows}
    assert "mla" not in traces and "rel_error" not in by["mla"]
    assert by["mla"]["note"].key == "compare.needs_training"
    assert by["longformer"]["rel_error"] <= compare.TRIVIAL
    assert by["longformer"]["note"].key == "compare.trivially_exact"
    assert by["performer"]["note"] is None and by["performer"]["rel_error"] > compare.TRIVIAL
