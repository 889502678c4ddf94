"""KV-cache policies keep exactly the positions they claim (pure), and the decoding loop
holds exactly those: zeros in the map elsewhere, keys rotated where the policy says."""

import math

import numpy as np
import pytest
import torch

from engine.errors import InputError
from engine.models import chat as chat_model
from engine.models import precision
from engine.models.cache_policy import MAX_CACHE, MAX_SINKS, POLICIES, CachePolicy, keep

WINDOW = CachePolicy("window", window=4)
SINKS = CachePolicy("sinks", window=4, sinks=2)
H2O = CachePolicy("h2o", window=3, budget=2)


def test_full_keeps_everything():
    assert keep(CachePolicy(), 7) == list(range(7))
    assert CachePolicy().size is None


@pytest.mark.parametrize("n", [1, 3, 4, 5, 12])
def test_window_keeps_the_last_w(n):
    assert keep(WINDOW, n) == list(range(max(0, n - 4), n))


@pytest.mark.parametrize(
    "n,expected",
    [
        (1, [0]),
        (3, [0, 1, 2]),
        (6, [0, 1, 2, 3, 4, 5]),
        (7, [0, 1, 3, 4, 5, 6]),
        (20, [0, 1, 16, 17, 18, 19]),
    ],
)
def test_sinks_keep_the_first_s_and_the_last_w_once(n, expected):
    assert keep(SINKS, n) == expected
    assert SINKS.size == 6 and SINKS.cache_positions and not WINDOW.cache_positions


def test_h2o_keeps_the_heaviest_older_positions_and_the_recent_window():
    scores = [0.5, 3.0, 0.1, 2.0, 2.0, 9.0, 9.0, 0.0]
    # recent = 5, 6, 7 whatever their score; heavy among 0..4: 1 (3.0), then 3 and 4 tie
    # at 2.0 and the earlier one wins
    assert keep(H2O, 8, scores) == [1, 3, 5, 6, 7]


def test_h2o_never_takes_back_an_evicted_position():
    scores = [-math.inf, 5.0, -math.inf, 1.0, 0.0, 0.0]
    # budget 2 but only position 1 is still held among the older ones
    assert keep(H2O, 6, scores) == [1, 3, 4, 5]


def test_h2o_needs_one_score_per_position():
    with pytest.raises(ValueError):
        keep(H2O, 5)
    with pytest.raises(ValueError):
        keep(H2O, 5, [1.0, 2.0])


@pytest.mark.parametrize("policy", [CachePolicy(), WINDOW, SINKS, H2O])
def test_the_newest_position_is_kept_and_evicted_ones_stay_out(policy):
    """Simulate a decoding loop: the kept set at n + 1 only drops old positions."""
    rng = np.random.default_rng(0)
    scores, held = [], []
    for n in range(1, 30):
        scores.append(0.0)
        kept = keep(policy, n, scores)
        assert kept[-1] == n - 1 and kept == sorted(set(kept))
        assert set(kept) <= set(held) | {n - 1}
        if policy.size is not None:
            assert len(kept) == min(n, policy.size)
        for p in set(held) - set(kept):
            scores[p] = -math.inf
        for p in kept:
            scores[p] += float(rng.random())
        held = kept


@pytest.mark.parametrize(
    "policy,key",
    [
        (CachePolicy("lru"), "cache.unknown_policy"),
        (CachePolicy("window", window=0), "cache.window"),
        (CachePolicy("window", window=MAX_CACHE + 1), "cache.window"),
        (CachePolicy("window", window=2.5), "cache.window"),
        (CachePolicy("window", window=True), "cache.window"),
        (CachePolicy("sinks", window=4, sinks=0), "cache.sinks"),
        (CachePolicy("sinks", window=4, sinks=MAX_SINKS + 1), "cache.sinks"),
        (CachePolicy("h2o", window=4, budget=0), "cache.budget"),
        (CachePolicy("h2o", window=0, budget=4), "cache.window"),
    ],
)
def test_out_of_range_values_are_refused_with_their_message(policy, key):
    with pytest.raises(InputError) as caught:
        policy.check()
    assert caught.value.message.key == key


def test_a_cache_larger_than_the_prompt_is_refused():
    assert SINKS.check(6) is SINKS  # exactly the prompt: evicts from the next step
    with pytest.raises(InputError) as caught:
        SINKS.check(5)
    assert caught.value.message.key == "cache.larger_than_prompt"
    assert CachePolicy().check(1).name == "full"
    assert set(POLICIES) == {"full", "window", "sinks", "h2o"}


# -- inside the decoding loop ----------------------------------------------------------------
@pytest.fixture(scope="module", autouse=True)
def one_arithmetic():
    """Float32 products throughout: the block-wise evaluation and the decoder's steps are
    then the same computation but for the order of sums, which is what is tested here.
    (The app's evaluations multiply in bfloat16: test_bfloat16_moves_perplexity_little.)"""
    with precision.only(torch.float32):
        yield


PROMPT = "The cat sat on the mat. The dog sat on the rug."


@pytest.mark.parametrize(
    "policy",
    [
        CachePolicy("window", window=5),
        CachePolicy("sinks", window=4, sinks=2),
        CachePolicy("h2o", window=3, budget=3),
    ],
)
def test_the_map_is_zero_outside_the_kept_positions(chat, policy):
    tr = chat_model.generate(chat, PROMPT, template=False, max_new_tokens=6, policy=policy)
    g = tr.maps["generation"].weights  # (L, H, S, K)
    p = tr.outputs["n_prompt"]
    assert g.shape[2] == len(tr.outputs["kept"]) == 6
    for s, kept in enumerate(tr.outputs["kept"]):
        assert kept[-1] == p - 1 + s and len(kept) == policy.size
        if policy.name != "h2o":
            assert kept == keep(policy, p + s)
        outside = np.ones(g.shape[-1], bool)
        outside[kept] = False
        assert np.abs(g[:, :, s, outside]).max() == 0
        assert np.allclose(g[:, :, s, kept].sum(-1), 1, atol=1e-5)
    assert tr.outputs["kv_tokens"] == [policy.size] * 6
    assert tr.outputs["kv_bytes"] == [chat.kv_bytes(policy.size)] * 6


@pytest.mark.parametrize(
    "policy", [CachePolicy("h2o", window=3, budget=3), CachePolicy("sinks", window=4, sinks=2)]
)
def test_layer_0_keys_sit_at_the_positions_the_policy_says(chat, policy):
    """Layer 0's K/V depend on the token alone, so its row at the last step is the last
    row of a fresh pass over the kept tokens, with RoPE at their text positions (h2o) or
    at 0 … |cache| − 1 (StreamingLLM's positions inside the cache). Both keep a gap, so
    the two placements give different rows (RoPE only sees relative distances)."""
    tr = chat_model.generate(chat, PROMPT, template=False, max_new_tokens=5, policy=policy)
    kept = tr.outputs["kept"][-1]
    assert kept != list(range(kept[0], kept[-1] + 1))  # a gap: evicted positions between
    ids = torch.tensor([[tr.outputs["token_ids"][i] for i in kept]])
    with torch.no_grad():
        at_text = chat.model(
            input_ids=ids, position_ids=torch.tensor([kept]), output_attentions=True
        )
        at_slot = chat.model(input_ids=ids, output_attentions=True)
    row = tr.maps["generation"].weights[0, :, -1][:, kept]  # (H, |cache|)
    want, other = (at_slot, at_text) if policy.cache_positions else (at_text, at_slot)
    assert np.abs(row - want.attentions[0][0, :, -1].numpy()).max() < 1e-5
    assert np.abs(row - other.attentions[0][0, :, -1].numpy()).max() > 1e-3
