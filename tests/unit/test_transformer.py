"""Our Transformer: attention equals the reference, masks hold, traces keep the contract."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from engine.attention import MultiHeadAttention
from engine.models.transformer import (
    PAD,
    Transformer,
    TransformerConfig,
    build,
)
from engine.positional import sinusoidal

torch.set_num_threads(1)


def tiny(pe="sinusoidal", **kw) -> Transformer:
    cfg = TransformerConfig(
        src_vocab=20,
        tgt_vocab=17,
        d_model=32,
        n_heads=4,
        n_layers=2,
        d_ff=64,
        dropout=0.0,
        max_len=24,
        pe=pe,
        **kw,
    )
    return build(cfg, seed=0).eval()


@pytest.mark.parametrize("causal", [False, True])
def test_multihead_equals_torch_sdpa(causal):
    torch.manual_seed(1)
    mha = MultiHeadAttention(32, 4).eval()
    x, mem = torch.randn(3, 7, 32), torch.randn(3, 7, 32)
    out, w = mha(x, mem, mem, causal=causal)
    q, k, v = mha.project(x, mem, mem)  # (B, h, T, d_k)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    ref = mha.W_O(ref.transpose(1, 2).reshape(3, 7, 32))
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(w.sum(-1), torch.ones(3, 4, 7), atol=1e-5, rtol=0)


def test_multihead_with_padding_equals_torch_reference():
    torch.manual_seed(2)
    mha = MultiHeadAttention(16, 2).eval()
    x = torch.randn(2, 5, 16)
    allowed = torch.tensor([[True] * 5, [True, True, True, False, False]])[:, None, :]
    out, w = mha(x, mask=allowed)
    q, k, v = mha.project(x, x, x)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed[:, None])
    ref = mha.W_O(ref.transpose(1, 2).reshape(2, 5, 16))
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)
    assert (w[1, :, :, 3:] == 0).all()


def batch():
    src = torch.tensor([[5, 6, 7, 8, 9], [5, 6, 7, PAD, PAD]])
    tgt_in = torch.tensor([[1, 4, 5, 6], [1, 4, PAD, PAD]])
    return src, tgt_in


def test_forward_maps_are_distributions_with_the_promised_masks():
    model = tiny()
    src, tgt_in = batch()
    logits, inter = model(src, tgt_in)
    assert logits.shape == (2, 4, 17)
    assert inter.encoder_self.shape == (2, 2, 4, 5, 5)
    assert inter.decoder_self.shape == (2, 2, 4, 4, 4)
    assert inter.cross.shape == (2, 2, 4, 4, 5)
    for w in (inter.encoder_self, inter.decoder_self, inter.cross):
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]), atol=1e-5, rtol=0)
    # causal: no decoder position looks ahead
    assert torch.triu(inter.decoder_self, diagonal=1).abs().max() == 0
    # padded source keys get exactly zero weight, in the encoder and in cross-attention
    assert (inter.encoder_self[1, ..., 3:] == 0).all() and (inter.cross[1, ..., 3:] == 0).all()


def test_queries_and_keys_reproduce_every_map():
    model = tiny()
    src, tgt_in = batch()
    _, inter = model(src[:1], tgt_in[:1])
    for kind in ("encoder_self", "decoder_self", "cross"):
        q, k = model.queries_keys(inter, kind)  # [L, h, Q|K, d_k]
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1])
        if kind == "decoder_self":
            scores = np.where(np.tril(np.ones(scores.shape[-2:], bool)), scores, -np.inf)
        w = np.exp(scores - scores.max(-1, keepdims=True))
        w /= w.sum(-1, keepdims=True)
        np.testing.assert_allclose(w, getattr(inter, kind)[0].detach().numpy(), atol=1e-5)


def test_sinusoidal_embedding_adds_the_paper_table():
    model = tiny()
    ids = torch.tensor([[5, 6, 7]])
    x = model.src_embed(ids)
    table = torch.tensor(sinusoidal(3, 32), dtype=torch.float32)
    torch.testing.assert_close(
        x - model.src_embed.tokens(ids) * math.sqrt(32), table[None], atol=1e-5, rtol=0
    )


def test_without_positional_encoding_the_encoder_is_blind_to_order():
    """pe=none: permuting the source only permutes the cross-attention columns."""
    model = tiny(pe="none")
    src = torch.tensor([[5, 6, 7, 8, 9]])
    perm = torch.tensor([3, 0, 4, 1, 2])
    tgt_in = torch.tensor([[1, 4, 5]])
    _, a = model(src, tgt_in)
    logits_p, b = model(src[:, perm], tgt_in)
    torch.testing.assert_close(b.cross, a.cross[..., perm], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(logits_p, model(src, tgt_in)[0], atol=1e-5, rtol=1e-5)


def test_learned_table_is_a_parameter_and_none_has_none():
    assert isinstance(tiny(pe="learned").src_embed.pe, torch.nn.Parameter)
    assert tiny(pe="none").src_embed.pe is None


def test_greedy_stops_and_pads_after_end_of_sentence():
    model = tiny()
    out = model.greedy(torch.tensor([[5, 6, 7], [8, 9, 10]]), max_new=6)
    assert out.shape[0] == 2 and out.shape[1] <= 7 and (out[:, 0] == 1).all()
    for row in out.tolist():
        if 2 in row:
            assert all(t == PAD for t in row[row.index(2) + 1 :])


@pytest.mark.parametrize("pe", ["sinusoidal", "learned", "none"])
def test_greedy_with_the_kv_cache_equals_decoding_the_whole_prefix_again(pe):
    """Each step's logits through the cache equal the full decoder's last row."""
    model = tiny(pe)
    src = torch.tensor([[5, 6, 7, 8], [9, 10, PAD, PAD], [11, 12, 13, PAD]])  # padded batch
    with torch.no_grad():
        memory, src_mask, _, _ = model.encode(src)
        prefix = model.greedy(src, max_new=10)
        full_logits = model.decode(prefix[:, :-1], memory, src_mask)[0]  # (B, T, V)
        caches = [{} for _ in model.decoder]
        for t in range(prefix.shape[1] - 1):
            y = model.tgt_embed(prefix[:, t : t + 1], start=t)
            for layer, cache in zip(model.decoder, caches, strict=True):
                y = layer.step(y, memory, src_mask, cache)
            step = y[:, -1] @ model.tgt_embed.tokens.weight.T + model.out_bias
            live = prefix[:, t] != PAD  # rows after </s> are never read
            torch.testing.assert_close(step[live], full_logits[live, t], atol=1e-5, rtol=1e-5)
    assert prefix.shape[1] > 2


@pytest.fixture(scope="module")
def quick_dates(tmp_path_factory):
    """A few seconds of real training (``--quick``) on the dates task, learned PE."""
    from engine.training.transformer import main

    out = tmp_path_factory.mktemp("ckpt")
    assert main(["--task", "dates", "--pe", "learned", "--quick", "--out-dir", str(out)]) == 0
    return out


def test_quick_training_writes_a_small_loadable_checkpoint(quick_dates):
    from engine.models.transformer import load

    weights = quick_dates / "transformer-dates-learned.safetensors"
    assert weights.stat().st_size < 5e6
    tr = load("transformer-dates-learned", quick_dates)
    assert tr.task == "dates" and tr.cfg.pe == "learned"
    pe = tr.positional_table()
    assert pe.shape == (tr.cfg.max_len, tr.cfg.d_model)
    torch.testing.assert_close(torch.tensor(pe, dtype=torch.float32), tr.src_embed.pe.data)


def test_trace_of_our_model_keeps_the_contract(quick_dates):
    from engine.errors import InputError
    from engine.models.transformer import load, trace
    from engine.trace import Trace

    tr = load("transformer-dates-learned", quick_dates)
    t = trace(tr, "3 May 1979")
    assert set(t.maps) == {"encoder_self", "decoder_self", "cross"}
    assert t.maps["encoder_self"].query_labels == tuple("3 May 1979")
    assert t.maps["cross"].shape[2] == t.maps["decoder_self"].shape[2]
    assert t.vectors["queries.cross"].shape[:2] == (2, 4)
    assert Trace.from_npz(t.to_npz()).maps["cross"].shape == t.maps["cross"].shape
    assert trace(tr, "3 May 1979 ☃").outputs["unknown"] == ["☃"]
    with pytest.raises(InputError, match="Type"):
        trace(tr, "")
    with pytest.raises(InputError, match="at most"):
        trace(tr, "9" * (tr.max_src + 1))
    with pytest.raises(InputError, match="characters"):
        trace(tr, "9" * 100_000)


def test_learned_encoding_refuses_other_models():
    from engine.models.transformer import Transformer, TransformerConfig

    model = Transformer(TransformerConfig(5, 5, d_model=8, n_heads=2, n_layers=1, d_ff=8))
    with pytest.raises(ValueError, match="sinusoidal"):
        model.positional_table()


def test_unigram_f1_ignores_order_only():
    from engine.evaluation.transformer import unigram_f1

    assert unigram_f1([["a", "b", "c"]], [["c", "a", "b"]]) == 1.0
    assert unigram_f1([["a", "b"]], [["x", "y"]]) == 0.0


def test_head_aer_is_zero_for_a_head_that_matches_the_gold_links(quick_dates):
    """Gold links taken from head (1, 2)'s own argmax: that head's AER must be exactly 0."""
    from dataclasses import replace

    from engine.data.dates import splits
    from engine.evaluation.transformer import head_aer, scores
    from engine.models.transformer import load
    from engine.training.transformer import batch_tensors
    from engine.translation_quality import argmax_links

    tr = load("transformer-dates-learned", quick_dates)
    pairs = splits(seed=0, n_train=0, n_valid=0, n_test=6)["test"]
    src, tgt_in, _ = batch_tensors(pairs, tr.src_vocab, tr.tgt_vocab)
    with torch.no_grad():
        cross = tr(src, tgt_in)[1].cross.numpy()
    gold = [
        replace(p, sure=frozenset(links), possible=frozenset(links))
        for b, p in enumerate(pairs)
        for links in [argmax_links(cross[b, 1, 2, : len(p.tgt), : len(p.src)])]
    ]
    table = head_aer(tr, gold)
    assert table.shape == (2, 4) and ((table >= 0) & (table <= 1)).all()
    assert table[1, 2] == 0.0
    result = scores(tr, pairs)
    assert 0 <= result["bleu"] <= 100 and 0 <= result["exact_match"] <= 1
