"""Ablation, activation patching and the logit lens on the chat model: edits that change
nothing reproduce the model bit for bit, patching everything restores the clean run bit for
bit, a zeroed head equals a model without that head's W_O columns, and bad input gets a
message id.

"Bit for bit" where this CPU's products round a row alike whatever the number of rows
(``precision.rows_invariant``); where its BLAS picks a kernel by the row count (an Intel
Xeon with AVX-512 and AMX), a batch of copies and its baseline agree to float32's last bits
and :func:`same` says so, not more."""

import threading

import numpy as np
import pytest
import torch

from engine.analysis import ablation, causal, logit_lens, patching
from engine.errors import InputError
from engine.evaluation import causal as causal_eval
from engine.models import precision

CLEAN = "When Mary and John went to the store, John gave a drink to"
CORRUPTED = "When Mary and John went to the store, Mary gave a drink to"
LAYERS = (0, 13, 29)  # first, middle, last: each reruns a different stack of layers


@pytest.fixture(scope="module")
def ids(chat):
    return causal.encode(chat, CLEAN), causal.encode(chat, CORRUPTED)


@pytest.fixture(scope="module", params=["float32", "bfloat16"])
def pair(chat, ids, request):
    return patching.prepare(chat, *ids, " Mary", " John", arith=request.param)


def long_pair(chat, ids):
    """A pair within the sweep's limit and over residual patching's (T² copies of tokens)."""
    clean, corrupted = (x * 3 for x in ids)
    assert patching.MAX_RESIDUAL_TOKENS < len(clean) <= causal.MAX_TOKENS
    return patching.prepare(chat, clean, corrupted, " Mary", " John")


EXACT = precision.rows_invariant(torch.float32)


def same(a, b) -> bool:
    """Equal bit for bit where the products are row-stable, else to float32's last bits."""
    return torch.equal(a, b) if EXACT else torch.allclose(a, b, rtol=1e-5, atol=5e-4)


def model_logits(chat, ids, arith):
    with torch.inference_mode(), precision.only(causal.arithmetic(arith)):
        return chat.model(input_ids=torch.tensor([ids]), use_cache=False).logits[0].float()


def test_the_cached_run_is_the_models_forward(chat, pair):
    for run in (pair.clean, pair.corrupted):
        assert same(run.logits, model_logits(chat, run.ids, run.arithmetic))
        assert run.resid_pre.shape == (chat.n_layers + 1, len(run.ids), 576)
        assert run.z.shape == (chat.n_layers, len(run.ids), chat.n_heads, chat.head_dim)


def test_patching_every_position_restores_the_clean_logits_exactly(chat, pair):
    everything = [list(range(len(pair.clean.ids)))]
    for layer in LAYERS:
        logits = patching.patch_positions(chat, pair, layer, everything, last_only=False)
        assert same(logits[0], pair.clean.logits), layer
        last = patching.patch_positions(chat, pair, layer, everything)  # what sweeps read
        assert same(last[0, -1], pair.clean.logits[-1]), layer
        assert float(pair.normalised(pair.logit_diff(last))[0]) == 1.0


def test_patching_a_prompt_into_itself_changes_nothing_exactly(chat, ids):
    itself = patching.prepare(chat, ids[0], ids[0], " Mary", " John")
    T = len(ids[0])
    for layer in LAYERS:
        each = [[p] for p in range(T)]
        by_position = patching.patch_positions(chat, itself, layer, each, last_only=False)
        by_head = patching.patch_heads(chat, itself, layer, range(chat.n_heads), last_only=False)
        for logits in (*by_position, *by_head):
            assert same(logits, itself.corrupted.logits), layer
    # with nothing to restore, the normalised metric is undefined, not 0 or 1
    assert torch.isnan(itself.normalised(torch.tensor([itself.clean_diff]))).all()


def test_the_sweeps_put_one_number_per_layer_and_position_or_head(chat, pair):
    seen = []
    stop_after = 2
    res = patching.heads(
        chat,
        pair,
        progress=lambda d, n: seen.append((d, n)),
        should_stop=lambda: len(seen) >= stop_after,
    )
    assert res.stopped and seen == [(1, chat.n_layers), (2, chat.n_layers)]
    assert res.logit_diff.shape == (chat.n_layers, chat.n_heads)
    assert (
        not res.logit_diff[:stop_after].isnan().any() and res.logit_diff[stop_after:].isnan().all()
    )
    # the clean run reads Mary over John; the corrupted one the other way round
    assert pair.clean_diff > 0 > pair.corrupted_diff


def test_an_edit_in_one_thread_leaves_another_threads_forward_alone(chat, ids):
    """The model is shared (the app's cache, the batcher's thread): hooks act only for the
    thread that set the probe."""
    causal.install(chat)
    plain = model_logits(chat, ids[0], "float32")
    inside, outside = threading.Event(), threading.Event()
    seen = {}

    def silence_every_head():
        edits = {li: torch.zeros_like for li in range(chat.n_layers)}
        with causal.probing(causal.Probe(edits=edits)):
            seen["edited"] = model_logits(chat, ids[0], "float32")
            inside.set()
            outside.wait(60)

    worker = threading.Thread(target=silence_every_head)
    worker.start()
    inside.wait(60)
    seen["other"] = model_logits(chat, ids[0], "float32")  # while the probe is still set
    outside.set()
    worker.join()
    assert torch.equal(seen["other"], plain)
    assert not torch.equal(seen["edited"], plain)


def test_zero_ablation_is_the_model_without_that_heads_output_columns(chat, ids):
    layer, head, d = 14, 7, chat.head_dim
    res = ablation.ablate(chat, ids[0], heads=[(layer, head), (layer, 2)], arith="float32")
    o_proj = chat.model.model.layers[layer].self_attn.o_proj
    kept = o_proj.w16.clone()
    try:
        o_proj.w16[:, head * d : (head + 1) * d] = 0  # W_O[h] = 0: the head writes nothing
        logits = model_logits(chat, ids[0], "float32")
    finally:
        o_proj.w16.copy_(kept)
    want = torch.log_softmax(logits[-1], -1)[res.answer] - res.log_prob
    assert abs(float(res.delta_log_prob[layer, head]) - float(want)) < 1e-5
    assert res.delta_log_prob.isnan().sum() == chat.n_layers * chat.n_heads - 2


def test_an_ablation_is_the_same_alone_or_in_a_sweep_of_its_layer(chat, ids):
    one = ablation.ablate(chat, ids[0], heads=[(20, 4)], mode="mean")
    all_of_layer = ablation.ablate(chat, ids[0], heads=[(20, h) for h in range(9)], mode="mean")
    assert same(one.delta_log_prob[20, 4], all_of_layer.delta_log_prob[20, 4])
    assert same(one.delta_loss[20, 4], all_of_layer.delta_loss[20, 4])
    assert one.reference == "prompt"


def test_a_sweep_reading_the_last_position_measures_the_loss_of_its_top_heads(chat, ids):
    """``loss_for=k``: the same Δ log p as the every-position sweep (to float32's last
    bits), and Δ loss measured for the k heads that lower log p most, NaN elsewhere."""
    heads = [(li, h) for li in (20, 27) for h in range(chat.n_heads)]
    full = ablation.ablate(chat, ids[0], heads=heads)
    fast = ablation.ablate(chat, ids[0], heads=heads, loss_for=3)
    done = ~full.delta_log_prob.isnan()
    assert torch.allclose(fast.delta_log_prob[done], full.delta_log_prob[done], atol=1e-5)
    top = [(r["layer"], r["head"]) for r in full.top(3)]
    measured = [(li, h) for li, h in heads if not fast.delta_loss[li, h].isnan()]
    assert sorted(measured) == sorted(top)
    for li, h in top:
        assert abs(float(fast.delta_loss[li, h] - full.delta_loss[li, h])) < 1e-5


def test_the_logit_lens_last_layer_is_the_models_own_output(chat, ids):
    lens = logit_lens.logit_lens(chat, ids[0])
    logits = model_logits(chat, ids[0], "float32")
    y = torch.tensor(lens.targets)
    assert same(lens.prob[-1], torch.softmax(logits, -1).gather(-1, y[:, None])[:, 0])
    assert torch.equal(lens.rank[-1], (logits > logits.gather(-1, y[:, None])).sum(-1))
    assert torch.equal(lens.top[-1], logits.argmax(-1))
    assert lens.prob.shape == (chat.n_layers + 1, len(ids[0]))
    assert lens.rank[-1, -1] == 0  # the last position reads the model's own choice
    reply = logit_lens.for_generation(chat, ids[0], n_prompt=10)
    assert reply.positions == list(range(9, len(ids[0]) - 1))
    assert reply.targets == ids[0][10:]


def test_ioi_pairs_differ_in_one_token_and_flip_the_answer(chat):
    pairs = causal_eval.ioi_pairs(chat, 24, seed=3)
    assert pairs == causal_eval.ioi_pairs(chat, 24, seed=3)  # the seed fixes the set
    assert {p["template"] for p in pairs} == set(range(len(causal_eval.TEMPLATES)))
    for p in pairs:
        clean, corrupted = (causal.encode(chat, p[k]) for k in ("clean", "corrupted"))
        io, s = causal.token_id(chat, " " + p["io"]), causal.token_id(chat, " " + p["s"])
        assert len(clean) == len(corrupted)
        changed = [t for t, (a, b) in enumerate(zip(clean, corrupted, strict=True)) if a != b]
        assert len(changed) == 1 and (clean[changed[0]], corrupted[changed[0]]) == (s, io)
        assert clean.count(io) == 1 and corrupted.count(io) == 2  # the IO named once, then twice


@pytest.mark.parametrize(
    ("call", "key"),
    [
        (lambda c, i: causal.encode(c, "   "), "causal.empty"),
        (lambda c, i: ablation.ablate(c, []), "causal.empty"),
        (
            lambda c, i: patching.prepare(c, i[0], i[0][:-1], " Mary", " John"),
            "causal.lengths_differ",
        ),
        (lambda c, i: ablation.ablate(c, i[0], heads=[(3, 9)]), "causal.head_range"),
        (lambda c, i: ablation.ablate(c, i[0], heads=[(30, 0)]), "causal.head_range"),
        (lambda c, i: ablation.ablate(c, i[0], heads=[(-1, 0)]), "causal.head_range"),
        (lambda c, i: ablation.ablate(c, i[0], heads=[]), "causal.no_heads"),
        (lambda c, i: ablation.ablate(c, i[0] * 5), "causal.too_many_tokens"),
        (lambda c, i: patching.residual(c, long_pair(c, i)), "causal.too_many_tokens"),
        (lambda c, i: ablation.ablate(c, i[0], mode="resample"), "causal.mode"),
        (lambda c, i: patching.prepare(c, *i, " Mary Ann", " John"), "causal.not_one_token"),
        (lambda c, i: patching.prepare(c, *i, " Mary", " Mary"), "causal.same_answers"),
        (lambda c, i: logit_lens.logit_lens(c, i[0], [99]), "causal.position_range"),
    ],
)
def test_bad_input_gets_a_message(chat, ids, call, key):
    with pytest.raises(InputError) as err:
        call(chat, ids)
    assert err.value.message.key == key


def test_the_ioi_summary_pools_over_pairs_and_brackets_it():
    rng = np.random.default_rng(0)
    moved = rng.normal(size=(40, 3, 2))  # (pairs, layers, heads)
    moved[:, 2, 1] += 3.0  # one head restores most of every pair's gap
    gaps = rng.uniform(2, 6, size=40)
    templates = np.arange(40) % 4
    pooled = moved.sum(0) / gaps.sum()
    boot = causal_eval._bootstrap(moved, gaps, seed=0)
    top = causal_eval._top(pooled, moved / gaps[:, None, None], boot, moved, gaps, templates)
    first = top[0]
    assert (first["layer"], first["head"]) == (2, 1)
    assert first["pooled"] == round(float(pooled[2, 1]), 4)
    assert first["ci95"][0] <= first["pooled"] <= first["ci95"][1]
    assert len(first["per_template"]) == 4
