import pytest
import torch

from engine.attention import AdditiveAttention
from engine.data.vocab import BOS_ID, EOS_ID
from engine.models.bahdanau import SCORINGS, NMTConfig, RNNSearch

SMALL = dict(emb=8, enc_hidden=6, dec_hidden=12, attn=5, maxout=4)


def model(scoring="additive", seed=0):
    torch.manual_seed(seed)
    return RNNSearch(NMTConfig(20, 15, scoring=scoring, **SMALL)).eval()


def batch():
    src = torch.tensor([[4, 5, 6, 7, 0], [8, 9, 10, 11, 12]])
    lengths = torch.tensor([4, 5])
    tgt_in = torch.tensor([[BOS_ID, 4, 5], [BOS_ID, 6, 7]])
    return src, lengths, tgt_in


@pytest.mark.parametrize("scoring", SCORINGS)
def test_forward_shapes_and_alignment_rows(scoring):
    src, lengths, tgt_in = batch()
    logits, alpha = model(scoring)(src, lengths, tgt_in)
    assert logits.shape == (2, 3, 15)
    if scoring == "none":
        assert alpha is None
        return
    assert alpha.shape == (2, 3, 5)
    torch.testing.assert_close(alpha.sum(-1), torch.ones(2, 3))
    assert torch.all(alpha[0, :, 4] == 0)  # the padded source position gets no weight


def test_precomputed_additive_path_equals_the_attention_module():
    m = model("additive")
    src, lengths, _ = batch()
    enc = m.encode(src, lengths)
    s = torch.randn(2, m.cfg.dec_hidden)
    c, alpha = m.context(s, enc)
    assert isinstance(m.attention, AdditiveAttention)
    c_ref, a_ref = m.attention(s[:, None], enc.h, mask=enc.mask)
    torch.testing.assert_close(alpha, a_ref[:, 0])
    torch.testing.assert_close(c, c_ref[:, 0])


def test_no_attention_context_is_the_same_at_every_step():
    m = model("none")
    enc = m.encode(*batch()[:2])
    c1, _ = m.context(torch.zeros(2, 12), enc)
    c2, _ = m.context(torch.randn(2, 12), enc)
    torch.testing.assert_close(c1, c2)


def test_beam_one_is_greedy_and_beam_keeps_the_returned_hypothesis_alignment():
    m = model("additive", seed=3)
    src_ids = [4, 5, 6, 7]
    greedy = m.greedy_batch(torch.tensor([src_ids]), torch.tensor([4]), max_len=12)[0]
    b1 = m.beam_search(src_ids, beam=1, max_len=12)
    assert [i for i in b1.ids if i != EOS_ID] == greedy[: len([i for i in b1.ids if i != EOS_ID])]
    b5 = m.beam_search(src_ids, beam=5, max_len=12)
    # the captured α equals α recomputed by teacher forcing on the returned hypothesis
    tgt_in = torch.tensor([[BOS_ID] + b5.ids[:-1]])
    _, alpha = m(torch.tensor([src_ids]), torch.tensor([4]), tgt_in)
    torch.testing.assert_close(b5.alphas, alpha[0], atol=1e-5, rtol=1e-4)
    assert b5.contexts.shape == (len(b5.ids), 12) and b5.states.shape == (len(b5.ids), 12)
    with pytest.raises(ValueError):
        m.beam_search(src_ids, beam=11)


def test_dot_needs_matching_sizes():
    with pytest.raises(ValueError, match="dot"):
        RNNSearch(NMTConfig(5, 5, scoring="dot", emb=4, enc_hidden=4, dec_hidden=6))
    with pytest.raises(ValueError, match="scoring"):
        RNNSearch(NMTConfig(5, 5, scoring="cosine"))
