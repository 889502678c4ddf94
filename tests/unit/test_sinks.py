"""Attention sinks: the measures on constructed maps, and the control on the real model."""

import numpy as np
import pytest
import torch

from engine.analysis import sinks
from engine.models import registry

torch.set_num_threads(1)
T = 8


def causal(w):
    w = np.tril(w)
    return w / w.sum(-1, keepdims=True)


def test_a_pure_sink_head_puts_all_mass_first_at_distance_p_with_zero_entropy():
    w = np.zeros((1, 1, T, T))
    w[..., 0] = 1.0
    p = sinks.sink_profile(w, first=4)
    rows = np.arange(4, T)  # queries at positions ≥ first
    assert p["n_queries"] == len(rows)
    assert p["mass_first"][0, 0] == pytest.approx(1.0)
    assert p["mass_first1"][0, 0] == pytest.approx(1.0)
    assert p["local_width"][0, 0] == pytest.approx(rows.mean())
    assert p["entropy"][0, 0] == pytest.approx(0.0)


def test_a_previous_token_head_is_local_and_a_uniform_head_has_the_largest_entropy():
    prev = np.eye(T, k=-1)
    prev[0, 0] = 1
    uniform = causal(np.ones((T, T)))
    p = sinks.sink_profile(np.stack([prev, uniform])[None], first=1)  # [1, 2, T, T]
    rows = np.arange(1, T)
    assert p["local_width"][0, 0] == pytest.approx(1.0)
    assert p["mass_first1"][0, 0] == pytest.approx(1 / len(rows))  # only query 1 reads 0
    assert p["entropy"][0, 1] == pytest.approx(np.log(rows + 1).mean())
    assert p["local_width"][0, 1] == pytest.approx((rows / 2).mean())
    assert p["entropy"][0, 0] == pytest.approx(0.0)


def test_mass_on_first_tokens_grows_with_first_and_stays_a_share():
    w = causal(np.random.default_rng(0).random((3, 2, T, T)))
    m = [sinks.sink_profile(w, first=f) for f in (1, 2, 4)]
    assert (m[0]["mass_first"] == m[0]["mass_first1"]).all()
    assert (m[1]["mass_first"] >= m[0]["mass_first"]).all()
    assert (m[2]["mass_first"] <= 1 + 1e-6).all()


def test_exclude_self_renormalises_over_the_other_keys():
    w = 0.5 * np.eye(T) + 0.5 * np.eye(T)[[0] * T]  # half on itself, half on the first token
    p = sinks.sink_profile(w[None, None], first=1, exclude_self=True)
    assert p["mass_first1"][0, 0] == pytest.approx(1.0)
    assert sinks.sink_profile(w[None, None], first=1)["mass_first1"][0, 0] == pytest.approx(0.5)


def test_generation_rows_use_their_own_query_positions():
    # two steps of a 6-key generation map: queries at positions 3 and 4 reading key 0
    w = np.zeros((1, 1, 2, 6))
    w[..., 0] = 1.0
    p = sinks.sink_profile(w, first=1, query_positions=[3, 4])
    assert p["local_width"][0, 0] == pytest.approx(3.5)
    with pytest.raises(ValueError):
        sinks.sink_profile(w, query_positions=[3])


def test_first_token_by_layer_is_the_mean_over_heads_and_later_queries():
    w = np.zeros((2, 2, T, T))
    w[0] = causal(np.ones((T, T)))
    w[1, :, :, 0] = 1.0
    f = sinks.first_token_by_layer(w)
    assert f.shape == (2,)
    assert f[0] == pytest.approx(np.mean([1 / (q + 1) for q in range(1, T)]))
    assert f[1] == pytest.approx(1.0)
    assert (sinks.sink_key_by_layer(w) == [0, 0]).all()


@pytest.fixture(scope="module")
def chat():

    return registry.chat().load()


def test_the_real_sink_is_the_first_position_not_the_first_token(chat):
    prompt = "The quick brown fox jumps over the lazy dog. It was a sunny day."
    r = sinks.first_token_control(chat, prompt, "\n", template=False)
    assert r["tokens"] == ["The", "\n"]
    for key in ("original", "replaced"):
        assert r[key].shape == (30,) and ((r[key] >= 0) & (r[key] <= 1)).all()
    # StreamingLLM's finding on this model: the middle and late layers park most attention
    # on position 0, and still do when its token is a meaningless line break.
    assert r["original"][12:].mean() > 0.4
    assert r["replaced"][12:].mean() > 0.4
    assert (r["sink_key_replaced"][12:] == 0).all()
    assert r["moved"].shape == (30,)
