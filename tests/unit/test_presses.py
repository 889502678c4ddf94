"""Each press keeps exactly the positions its kvpress definition says, on hand-built scores;
bad input is refused with a message id."""

import dataclasses
import math

import pytest
import torch

from engine.analysis import presses as P
from engine.errors import InputError

L, HKV, G = 1, 2, 2


def observed(n, *, received=None, window=None, question=None, norms=None, heads=None, w=4):
    h = HKV * G
    return P.Observed(
        received=torch.zeros(L, h, n) if received is None else received,
        window=torch.zeros(L, h, w, n) if window is None else window,
        question=torch.zeros(L, h, 3, n) if question is None else question,
        key_norms=torch.ones(L, HKV, n) if norms is None else norms,
        head_scores=torch.zeros(L, HKV) if heads is None else heads,
    )


def kept(mask, layer=0, head=0):
    return torch.nonzero(mask[layer, head]).flatten().tolist()


@pytest.mark.parametrize("ratio,n", [(0.0, 10), (0.25, 7), (0.5, 5), (0.75, 2), (0.875, 1)])
def test_a_press_keeps_int_n_times_one_minus_r(ratio, n):
    assert P.n_kept(10, ratio) == n
    obs = observed(10, norms=torch.rand(L, HKV, 10))
    for name in P.PRESSES:
        if name not in ("full", "snapkv", "duo_attention", "retrieval_heads"):  # head-wise
            assert P.keep(name, obs, ratio).sum(-1).eq(n).all(), name


def test_ratio_zero_and_full_keep_everything():
    obs = observed(10)
    for name in P.PRESSES:
        assert P.keep(name, obs, 0.0).all()
    assert P.keep("full", obs, 0.875).all()


def test_ties_go_to_the_earlier_position():
    assert kept(P.keep_top(torch.zeros(1, 1, 6), 0.5)[None, 0]) == [0, 1, 2]


def test_streaming_llm_keeps_four_sinks_and_the_most_recent():
    obs = observed(10)
    assert kept(P.keep("streaming_llm", obs, 0.5)) == [0, 1, 2, 3, 9]
    assert kept(P.keep("streaming_llm", obs, 0.25), head=1) == [0, 1, 2, 3, 7, 8, 9]


def test_knorm_keeps_the_lowest_key_norms_per_head():
    norms = torch.tensor([[[5.0, 1, 4, 2, 3, 9], [1.0, 2, 3, 4, 5, 6]]])
    mask = P.keep("knorm", observed(6, norms=norms), 0.5)
    assert kept(mask, head=0) == [1, 3, 4] and kept(mask, head=1) == [0, 1, 2]


def test_observed_attention_divides_by_the_queries_that_saw_each_key():
    # every key received the same total: divided by n − j, the late keys score highest
    obs = observed(10, received=torch.ones(L, HKV * G, 10))
    assert kept(P.keep("observed_attention", obs, 0.5)) == [5, 6, 7, 8, 9]
    # the mean over the g query heads of a K/V head: head 1's two query heads disagree
    received = torch.zeros(L, HKV * G, 10)
    received[0, 2, 0], received[0, 3, 1] = 10.0, 4.0  # (10/10)/2 = 0.5 > (4/9)/2
    obs = observed(10, received=received)
    assert kept(P.keep("observed_attention", obs, 0.875), head=1) == [0]


def test_tova_reads_the_last_query_averaged_over_all_heads_and_keeps_it():
    window = torch.zeros(L, HKV * G, 4, 8)
    window[0, 0, -1, 2] = 1.0  # one head of K/V head 0 looks at 2
    window[0, 3, -1, 5] = 0.5  # one head of K/V head 1 looks at 5
    mask = P.keep("tova", observed(8, window=window), 0.75)  # keeps 2
    assert kept(mask, head=0) == kept(mask, head=1) == [2, 7]


def test_snapkv_pools_the_observation_window_and_keeps_the_window():
    n, w = 100, P.SNAPKV_WINDOW
    window = torch.zeros(L, HKV * G, w, n)
    window[0, :, :, 10] = 1.0  # every head of the window looks at 10 and, less, at 25
    window[0, :, :, 25] = 0.5
    mask = P.keep("snapkv", observed(n, window=window, w=w), 0.25)  # 75 kept
    # the window (36 … 99), 10 and its pooled neighbours 8 … 12, 23 … 27, then the
    # earliest of the tied zeros
    assert kept(mask) == [0, *range(8, 13), *range(23, 28), *range(36, 100)]


def test_snapkv_with_the_question_scores_every_context_position():
    question = torch.zeros(L, HKV * G, 3, 20)
    question[0, :2, :, 17] = 1.0  # K/V head 0's query heads read 17
    question[0, 2:, :, 0] = 1.0  # K/V head 1's read 0: pooling pads with zeros
    mask = P.keep("snapkv_question", observed(20, question=question), 0.75)  # 5 kept
    assert kept(mask, head=0) == [15, 16, 17, 18, 19]
    assert kept(mask, head=1) == [0, 1, 2, 3, 4]


def test_duo_attention_gives_retrieval_heads_everything_and_others_sinks_and_window():
    heads = torch.tensor([[0.1, 0.9], [0.5, 0.2]])  # 2 layers × 2 K/V heads
    obs = P.Observed(
        received=torch.zeros(2, 4, 20),
        window=torch.zeros(2, 4, 4, 20),
        question=torch.zeros(2, 4, 3, 20),
        key_norms=torch.ones(2, 2, 20),
        head_scores=heads,
    )
    mask = P.keep("duo_attention", obs, 0.5)
    # M = 4 heads, budget 4 · 10: R = ⌊4 · 0.5 / 2⌋ = 1 retrieval head (layer 0, head 1)
    # keeps 20; the other three share 20: 6 each, 4 sinks + the last 2
    assert kept(mask, 0, 1) == list(range(20))
    for layer, head in ((0, 0), (1, 0), (1, 1)):
        assert kept(mask, layer, head) == [0, 1, 2, 3, 18, 19]
    assert mask.sum() <= 4 * P.n_kept(20, 0.5)


def test_the_retrieval_heads_press_ranks_heads_by_the_measured_score():
    """The same head-wise rule as duo_attention, the heads ranked by the measured
    retrieval score (the highest of each K/V head's query heads), not by kvpress's proxy."""
    per_query_head = [[0.0, 0.1, 0.2, 0.0], [0.0, 0.0, 0.9, 0.3]]  # 2 layers × 4 query heads
    retrieval = P.kv_head_scores(per_query_head, groups=2)
    assert torch.allclose(retrieval, torch.tensor([[0.1, 0.2], [0.0, 0.9]]))
    obs = P.Observed(
        received=torch.zeros(2, 4, 20),
        window=torch.zeros(2, 4, 4, 20),
        question=torch.zeros(2, 4, 3, 20),
        key_norms=torch.ones(2, 2, 20),
        head_scores=torch.tensor([[0.1, 0.9], [0.5, 0.2]]),  # the proxy picks (0, 1)
        retrieval_scores=retrieval,
    )
    mask = P.keep("retrieval_heads", obs, 0.5)
    assert kept(mask, 1, 1) == list(range(20))  # the measured retrieval head keeps all
    for layer, head in ((0, 0), (0, 1), (1, 0)):
        assert kept(mask, layer, head) == [0, 1, 2, 3, 18, 19]
    assert torch.equal(P.keep("duo_attention", obs, 0.5)[0, 1], torch.ones(20, dtype=torch.bool))
    with pytest.raises(InputError) as err:
        P.keep("retrieval_heads", dataclasses.replace(obs, retrieval_scores=None), 0.5)
    assert err.value.message.key == "press.no_retrieval_scores"


def test_duo_head_score_of_a_uniform_head():
    # a zero query attends uniformly: the mean of the cumulated attention is (q + 1) / 2q
    q, k = torch.zeros(1, 2, 8), torch.randn(1, 1, 8)
    s = P.duo_head_scores(q, k, lambda x, pos: x, q_len=50)
    assert s.shape == (1, 1) and float(s) == pytest.approx(51 / 100)


def test_random_is_reproducible_from_its_seed():
    obs = observed(50)
    a, b = P.random_scores(obs, 0.5, seed=3), P.random_scores(obs, 0.5, seed=3)
    assert torch.equal(a, b) and not torch.equal(a, P.random_scores(obs, 0.5, seed=4))


@pytest.mark.parametrize("ratio", [1.0, -0.1, 1.5, math.nan, math.inf, True, "0.5", None])
def test_a_ratio_outside_zero_one_is_refused(ratio):
    with pytest.raises(InputError) as caught:
        P.keep("knorm", observed(10), ratio)
    assert caught.value.message.key == "press.ratio"


def test_other_bad_input_is_refused_with_its_id():
    cases = [
        (lambda: P.ratio_for_budget(11, 10), "press.budget"),
        (lambda: P.ratio_for_budget(0, 10), "press.budget"),
        (
            lambda: P.keep("snapkv_question", observed(10, question=torch.zeros(1, 4, 0, 10)), 0.5),
            "press.empty_question",
        ),
        (lambda: P.keep("lru", observed(10), 0.5), "press.unknown"),
        (lambda: P.keep("streaming_llm", observed(4), 0.5), "press.too_short"),
        (lambda: P.keep("snapkv", observed(10), 0.5), "press.too_short"),
    ]
    for call, key in cases:
        with pytest.raises(InputError) as caught:
            call()
        assert caught.value.message.key == key
    assert P.ratio_for_budget(5, 20) == 0.75
