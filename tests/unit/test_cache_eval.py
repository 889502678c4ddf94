"""Cache-policy evaluation: the full cache agrees with itself, each policy keeps exactly the
positions it claims, and the block-wise loop equals the Decoder's own step (the page's path)."""

from pathlib import Path

import numpy as np
import pytest
import torch

from engine.analysis import cache_eval
from engine.errors import InputError
from engine.models import chat as chat_model
from engine.models import precision, registry
from engine.models.cache_policy import CachePolicy

torch.set_num_threads(1)
TEXT = Path(__file__).resolve().parents[2] / "assets" / "text" / "pride-and-prejudice.txt"
N = 64
W = 16
POLICIES = {
    "full": CachePolicy("full"),
    "window": CachePolicy("window", window=W),
    "sinks": CachePolicy("sinks", window=W - 4, sinks=4),
    "h2o": CachePolicy("h2o", window=W // 2, budget=W // 2),
}


@pytest.fixture(scope="module", autouse=True)
def one_arithmetic():
    """Float32 products throughout: the block-wise evaluation and the decoder's steps are
    then the same computation but for the order of sums, which is what is tested here.
    (The app's evaluations multiply in bfloat16: test_bfloat16_moves_perplexity_little.)"""
    with precision.only(torch.float32):
        yield


@pytest.fixture(scope="module")
def chat():
    return registry.chat().load()


@pytest.fixture(scope="module")
def ids(chat):
    ids = chat.tokenizer.encode(TEXT.read_text(encoding="utf-8")[:2000])[:N]
    assert len(ids) == N
    return ids


@pytest.fixture(scope="module")
def results(chat, ids):
    # blocks of 24 positions: the first eviction (at W) falls inside a block
    out = cache_eval.evaluate_policies(chat, ids, list(POLICIES.values()), chunk=24)
    return dict(zip(POLICIES, out, strict=True))


def test_the_full_cache_agrees_with_itself(results):
    r = results["full"]
    assert r["n_predicted"] == N - 1
    assert r["agreement"] == 1.0 and r["kl"] == 0.0
    assert r["ppl"] == pytest.approx(r["ppl_full"])
    assert r["evicted_from"] is None and r["kept_tokens"] == list(range(1, N))


def test_the_window_keeps_exactly_its_last_w_positions(results):
    r = results["window"]
    assert r["kept_tokens"] == [min(t + 1, W) for t in range(N - 1)]
    assert r["last_kept"] == list(range(N - 1 - W, N - 1))
    assert r["evicted_from"] == W
    # before the first eviction the window is the full cache
    assert r["per_position"]["agree"][:W].all() and r["per_position"]["kl"][:W].max() < 1e-6
    assert r["agreement"] < 1 and r["kl"] > 0


def test_sinks_keep_the_first_four_and_h2o_keeps_its_budget(results):
    s, h = results["sinks"], results["h2o"]
    assert s["last_kept"] == [0, 1, 2, 3, *range(N - 1 - (W - 4), N - 1)]
    assert max(s["kept_tokens"]) == W and max(h["kept_tokens"]) == W
    assert h["last_kept"][-W // 2 :] == list(range(N - 1 - W // 2, N - 1))


def test_the_full_cache_is_the_models_own_forward_pass(chat, ids, results):
    with torch.no_grad():
        logits = chat.model(torch.tensor([ids]), use_cache=False).logits[0, :-1]
    nll = -torch.log_softmax(logits, -1).gather(1, torch.tensor(ids[1:])[:, None])[:, 0]
    np.testing.assert_allclose(results["full"]["per_position"]["nll"], nll.numpy(), atol=2e-4)


@pytest.mark.parametrize("name", ["window", "sinks", "h2o"])
def test_blocks_equal_the_decoders_step_by_step_cache(chat, ids, results, name):
    dec = chat_model.Decoder(chat, POLICIES[name])
    logits, _ = dec.prefill(ids[:W])  # nothing evicted yet: the prefill is the full cache
    rows = [torch.log_softmax(logits, -1)]
    for t in range(W, N - 1):
        step, _, kept = dec.step(ids[t])
        rows.append(torch.log_softmax(step, -1)[None])
    nll = -torch.cat(rows).gather(1, torch.tensor(ids[1:])[:, None])[:, 0]
    np.testing.assert_allclose(results[name]["per_position"]["nll"], nll.numpy(), atol=1e-3)
    assert kept == results[name]["last_kept"]


def test_progress_is_reported_and_a_stop_keeps_what_was_read(chat, ids):
    seen = []
    r = cache_eval.evaluate_policy(
        chat,
        ids,
        CachePolicy("window", window=8),
        chunk=16,
        progress=lambda done, total: seen.append((done, total)),
        should_stop=lambda: len(seen) >= 2,
    )
    assert seen == [(16, N - 1), (32, N - 1)]
    assert r["stopped"] and r["n_predicted"] == 32 and len(r["kept_tokens"]) == 32


def test_bad_lengths_are_refused(chat, ids):
    with pytest.raises(InputError):
        cache_eval.evaluate_policy(chat, ids[:1], CachePolicy())
    with pytest.raises(InputError):
        cache_eval.evaluate_policy(chat, ids, CachePolicy(), n_eval=N + 1)


def test_bfloat16_moves_perplexity_little(chat, ids, results):
    """What the app runs: bfloat16 products (twice float32's speed over blocks here)."""
    with precision.only(torch.bfloat16):
        rough = cache_eval.evaluate_policies(chat, ids, [POLICIES["sinks"]], chunk=24)[0]
    exact = results["sinks"]
    assert rough["ppl"] == pytest.approx(exact["ppl"], rel=0.02)
    assert rough["ppl_full"] == pytest.approx(exact["ppl_full"], rel=0.02)
    assert rough["agreement"] >= exact["agreement"] - 0.05
