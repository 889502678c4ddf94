"""Head types (TransformerLens head_detector definitions): masks, "mul" scores, the real model."""

import numpy as np
import pytest
import torch

from engine.analysis import heads
from engine.models import registry

torch.set_num_threads(1)

N = 6
TOKENS = heads.repeated_random_tokens(1000, N, seed=3, bos_id=999, exclude=[999])  # BOS r r
T = len(TOKENS)


def pure_previous_map(T):
    w = np.eye(T, k=-1)
    w[0, 0] = 1.0  # the first query can only read itself
    return w


def pure_induction_map(tokens):
    """Each query of the second copy reads the token after its earlier copy; the first
    copy has nothing to copy and parks on BOS, as induction heads do."""
    T, n = len(tokens), (len(tokens) - 1) // 2
    w = np.zeros((T, T))
    w[: n + 1, 0] = 1.0
    for i in range(n + 1, T):
        w[i, i - n + 1] = 1.0
    return w


def test_repeated_random_tokens_are_bos_then_two_copies_of_distinct_tokens():
    assert T == 2 * N + 1 and TOKENS[0] == 999
    r = TOKENS[1 : N + 1]
    assert TOKENS[N + 1 :] == r and len(set(r)) == N and 999 not in r
    assert heads.repeated_random_tokens(1000, N, seed=3, exclude=[999]) == r * 2
    assert heads.repeated_random_tokens(1000, N, seed=4) != r * 2


def test_masks_follow_the_head_detector_definitions():
    prev, dup, ind = (heads.masks(TOKENS)[k] for k in heads.HEAD_TYPES)
    for m in (prev, dup, ind):
        assert m.shape == (T, T) and not np.triu(m).any()  # strictly causal
    assert set(zip(*np.nonzero(prev), strict=True)) == {(i, i - 1) for i in range(1, T)}
    assert set(zip(*np.nonzero(dup), strict=True)) == {(i, i - N) for i in range(N + 1, T)}
    # induction: the token after the earlier copy (the first of the second copy reads 2)
    assert set(zip(*np.nonzero(ind), strict=True)) == {(i, i - N + 1) for i in range(N + 1, T)}


def test_a_pure_previous_token_head_scores_one_as_previous_token_only():
    w = pure_previous_map(T)
    m = heads.masks(TOKENS)
    assert heads.head_score(w, m["previous"]) == pytest.approx(1.0)
    assert heads.head_score(w, m["induction"]) == pytest.approx(0.0)
    assert heads.head_score(w, m["duplicate"]) == pytest.approx(0.0)


def test_a_pure_induction_head_scores_one_as_induction_and_lower_on_the_others():
    w = pure_induction_map(TOKENS)
    scores = heads.head_scores(np.tile(w, (2, 3, 1, 1)), TOKENS)
    assert all(s.shape == (2, 3) for s in scores.values())
    np.testing.assert_allclose(scores["induction"], 1.0)
    assert (scores["previous"] < 1.0).all() and (scores["duplicate"] < 1.0).all()


def test_bos_is_excluded_from_both_sides_of_the_ratio():
    w = pure_previous_map(T)
    w = 0.5 * w + 0.5 * np.eye(T)[[0] * T]  # half of every row on BOS
    w[0] = np.eye(T)[0]
    m = heads.previous_token_mask(T)
    assert heads.head_score(w, m) == pytest.approx(1.0)
    assert heads.head_score(w, m, exclude_bos=False) < 0.6


def test_a_uniform_head_scores_its_share_of_predicted_cells():
    w = np.tril(np.ones((T, T)))
    w /= w.sum(-1, keepdims=True)
    w[:, 0] = 0
    expected = sum(w[i, i - 1] for i in range(1, T)) / w.sum()
    assert heads.head_score(w, heads.previous_token_mask(T)) == pytest.approx(expected)


@pytest.fixture(scope="module")
def chat():

    return registry.chat().load()


def test_detector_on_the_real_model_finds_scores_in_range_and_an_induction_head(chat):
    r = heads.detect_heads(chat, seed=0, n=20)
    for name in heads.HEAD_TYPES:
        assert r[name].shape == (30, 9)
        assert (r[name] >= 0).all() and (r[name] <= 1).all()
    assert r["tokens"][0] == chat.tokenizer.bos_token_id and len(r["tokens"]) == 41
    # SmolLM2 copies: some head puts most of its non-BOS attention on the induction cells
    assert r["induction"].max() > 0.5 and r["previous"].max() > 0.5


def test_the_prompt_twice_is_bos_then_two_copies_with_bos_hidden(chat):
    """The page's "does it copy your words?" map: the reader's tokens where detect_heads
    puts random ones, the sink hidden so rows share out what reaches the words."""
    amap, n = heads.prompt_twice(chat, "The cat sat on the mat because it was warm", limit=6)
    ids = chat.tokenizer.encode("The cat sat on the mat because it was warm")[:6]
    assert n == len(ids) == 6
    assert amap.shape == (30, 9, 2 * n, 2 * n)  # BOS gone from rows and columns
    assert amap.query_labels[:n] == amap.query_labels[n:]
    np.testing.assert_allclose(amap.weights[:, :, 1:].sum(-1), 1.0, atol=1e-4)
    assert "sink tokens hidden" in amap.note
    # SmolLM2's induction heads copy the reader's words too: some head, on the second copy,
    # gives most of what reaches the words to the token after the earlier copy
    second = np.arange(n, 2 * n - 1)
    assert amap.weights[:, :, second, second - n + 1].mean(-1).max() > 0.5


def test_copying_row_asks_only_where_the_head_copies():
    tokens = ["a", "b", "c", "a", "b", "c"]  # induction keys: row 3 → 1, row 4 → 2, row 5 → 3
    w = np.full((6, 6), 0.0, np.float32)
    w[3, 0] = 0.81  # row 3 mostly elsewhere: its induction key (1) is not its argmax
    w[3, 1] = 0.03
    w[4, 2] = 0.6  # row 4 really copies
    w[4, 0] = 0.4
    w[5, 4] = 0.9  # row 5 looks at the previous token, not at its induction key 3
    w[5, 3] = 0.1
    assert heads.copying_row(w, tokens) == (4, 2, pytest.approx(0.6))
    w[4, 2] = 0.1
    assert heads.copying_row(w, tokens) is None, "no row copies: no question to ask"
