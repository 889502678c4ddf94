"""Head averaging, rollout, word-piece merging, sink hiding and the AttentionViz embedding."""

import numpy as np
import pytest

from engine.models.attentionviz import allowed_keys, joint_embedding, normalise, pearson
from engine.rollout import word_groups
from engine.trace import AttentionMap


def random_map(tokens, L=3, H=4, seed=0, kind="self"):
    rng = np.random.default_rng(seed)
    w = rng.random((L, H, len(tokens), len(tokens))) ** 4
    w /= w.sum(-1, keepdims=True)
    return AttentionMap(w, tokens, tokens, kind)


TOKENS = ["[CLS]", "the", "un", "##bel", "##ievable", "fox", "[SEP]"]


def test_head_average_is_the_mean_and_stays_a_distribution():
    m = random_map(TOKENS)
    avg = m.head_average()
    assert avg.shape == (3, 1, 7, 7)
    np.testing.assert_allclose(avg.weights[:, 0], m.weights.mean(1), atol=1e-6)
    np.testing.assert_allclose(avg.weights.sum(-1), 1, atol=1e-5)


def test_rollout_rows_sum_to_one_and_match_the_recurrence():
    m = random_map(TOKENS)
    r = m.rollout()
    np.testing.assert_allclose(r.weights.sum(-1), 1, atol=1e-5)
    eye = np.eye(7)
    A = [0.5 * eye + 0.5 * m.weights[layer].mean(0) for layer in range(3)]
    np.testing.assert_allclose(r.weights[2, 0], A[2] @ A[1] @ A[0], atol=1e-5)
    assert not r.exact


def test_rollout_of_attention_to_self_is_the_identity():
    w = np.tile(np.eye(5), (2, 3, 1, 1))
    r = AttentionMap(w, list("abcde"), list("abcde"), "self").rollout()
    np.testing.assert_allclose(r.weights[-1, 0], np.eye(5), atol=1e-6)


def test_rollout_refuses_cross_attention():
    w = np.full((1, 1, 2, 3), 1 / 3)
    with pytest.raises(ValueError, match="self-attention"):
        AttentionMap(w, ["a", "b"], ["x", "y", "z"], "cross").rollout()


def test_word_groups_for_wordpiece_and_sentencepiece():
    groups, labels = word_groups(TOKENS, keep=["[CLS]", "[SEP]"])
    assert labels == ["[CLS]", "the", "unbelievable", "fox", "[SEP]"]
    assert groups[2] == [2, 3, 4]
    groups, labels = word_groups(["▁The", "▁un", "believ", "able", "▁fox", "</s>"], keep=["</s>"])
    assert labels == ["The", "unbelievable", "fox", "</s>"]


def test_merge_sums_attention_to_a_word_and_averages_attention_from_it():
    m = random_map(TOKENS)
    merged = m.merge_word_pieces(keep=["[CLS]", "[SEP]"])
    assert merged.shape == (3, 4, 5, 5)
    np.testing.assert_allclose(merged.weights.sum(-1), 1, atol=1e-5)
    w = m.weights.astype(np.float64)
    to_word = w[..., 2:5].sum(-1)  # every token's attention to "unbelievable"
    np.testing.assert_allclose(merged.weights[..., 1, 2], to_word[..., 1], atol=1e-6)
    from_word = w[..., 2:5, :].mean(-2)[..., 5]  # "unbelievable" → "fox"
    np.testing.assert_allclose(merged.weights[..., 2, 3], from_word, atol=1e-6)


def test_hide_sinks_drops_them_and_renormalises():
    m = random_map(TOKENS)
    hidden = m.hide_sinks(["[CLS]", "[SEP]"])
    assert hidden.query_labels == tuple(TOKENS[1:-1]) and hidden.shape[-1] == 5
    np.testing.assert_allclose(hidden.weights.sum(-1), 1, atol=1e-5)
    inner = m.weights[:, :, 1:-1, 1:-1]
    np.testing.assert_allclose(hidden.weights, inner / inner.sum(-1, keepdims=True), atol=1e-5)
    with pytest.raises(ValueError):
        AttentionMap(np.ones((1, 1, 1, 1)), ["[CLS]"], ["[CLS]"], "self").hide_sinks(["[CLS]"])


def test_attentionviz_normalisation_leaves_every_softmax_unchanged():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(9, 8)) + 3, rng.normal(size=(11, 8)) * 0.2 - 1

    def softmax(s):
        e = np.exp(s - s.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    qn, kn = normalise(q, k)
    np.testing.assert_allclose(softmax(qn @ kn.T), softmax(q @ k.T), atol=1e-10)
    assert np.linalg.norm(qn, axis=1).mean() == pytest.approx(np.linalg.norm(kn, axis=1).mean())
    # the translated clouds share a centre (up to the scaling s: mean(q')·mean(k') > 0)
    assert np.dot(qn.mean(0), kn.mean(0)) > 0


def test_only_a_decoders_own_tokens_are_masked_and_causally():
    """The neuron view and the joint embedding read which keys a query may attend from the
    map's kind: a decoder's queries are the last Q of K positions (decoding on a cache)."""
    np.testing.assert_array_equal(
        allowed_keys("decoder_self", 2, 4), [[True, True, True, False], [True, True, True, True]]
    )
    assert allowed_keys("decoder_self", 3, 3).sum() == 6
    for kind in ("encoder_self", "cross", "self"):
        assert allowed_keys(kind, 2, 4) is None


def test_pearson_matches_numpy():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=50), rng.normal(size=50)
    assert pearson(x, y) == pytest.approx(np.corrcoef(x, y)[0, 1])


def test_joint_embedding_shapes_and_a_faithful_toy_head():
    """Queries that each match one key strongly: near in the map means a large dot product."""
    rng = np.random.default_rng(2)
    centres = rng.normal(size=(6, 16)) * 4
    k = np.repeat(centres, 4, axis=0) + rng.normal(size=(24, 16)) * 0.1
    q = k + rng.normal(size=(24, 16)) * 0.1
    emb = joint_embedding(q, k, seed=0)
    assert emb.queries_2d.shape == (24, 2) and emb.keys_2d.shape == (24, 2)
    assert emb.dot.shape == emb.distance.shape == (24, 24)
    assert emb.correlation < -0.3


def test_word_groups_for_readable_byte_level_labels():
    """engine.models.token_text's labels: a word starts with its space; the tokens of one
    split character ("注 1/2", "注 2/2") are that character once."""
    groups, labels = word_groups(["The", " café", " 注 1/2", " 注 2/2", "意", " fox"])
    assert labels == ["The", "café", "注意", "fox"]
    assert groups == [[0], [1], [2, 3, 4], [5]]
