"""Attention core against independent float64 references and torch's SDPA."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from engine.attention import (
    AdditiveAttention,
    ConcatAttention,
    DotAttention,
    GeneralAttention,
    MultiHeadAttention,
    causal_mask,
    masked_softmax,
    padding_mask,
    scaled_dot_product_attention,
)


def ref_softmax(e, mask):
    """float64 numpy softmax over allowed keys; fully-masked rows are zero."""
    e = np.where(mask, e, -np.inf)
    m = np.max(e, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    x = np.where(mask, np.exp(e - m), 0.0)
    s = x.sum(-1, keepdims=True)
    return np.divide(x, s, out=np.zeros_like(x), where=s > 0)


@pytest.mark.parametrize("seed", range(6))
def test_sdpa_matches_torch(seed):
    g = torch.Generator().manual_seed(seed)
    B, H = 2, 3
    Q, K, d = [(1, 1, 4), (7, 13, 8), (31, 17, 16), (5, 5, 3), (64, 33, 32), (9, 9, 1)][seed]
    q, k, v = (torch.randn(B, H, n, d, generator=g, dtype=torch.float64) for n in (Q, K, K))
    mask = torch.rand(B, 1, Q, K, generator=g) > 0.3
    mask[..., 0] = True  # torch's SDPA gives NaN on empty rows; ours gives 0 (tested below)
    for causal in (False, True):
        if causal and Q > K:
            continue
        ours, w = scaled_dot_product_attention(q, k, v, None if causal else mask, causal=causal)
        ref = F.scaled_dot_product_attention(
            q, k, v, attn_mask=None if causal else mask, is_causal=causal and Q == K
        )
        if causal and Q != K:
            ref = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(Q, K))
        assert torch.allclose(ours, ref, atol=1e-10)
        assert torch.allclose(w.sum(-1), torch.ones(B, H, Q, dtype=torch.float64))


def test_masked_keys_get_exactly_zero_and_empty_rows_are_zero():
    scores = torch.randn(2, 4, 6)
    mask = padding_mask(torch.tensor([3, 6]), 6)
    w = masked_softmax(scores, mask)
    assert (w[0, :, 3:] == 0).all()
    assert torch.allclose(w.sum(-1), torch.ones(2, 4))
    empty = torch.zeros(2, 4, 6, dtype=torch.bool)
    assert (masked_softmax(scores, empty) == 0).all()


def test_causal_mask_shape_and_band():
    m = causal_mask(3, 5)  # last three of five positions
    assert m.tolist() == [[1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]


def _np(t):
    return t.detach().double().numpy()


@pytest.mark.parametrize("kind", ["additive", "dot", "general", "concat"])
def test_scoring_functions_match_float64_reference(kind):
    torch.manual_seed(0)
    B, Q, K, dq, dk, da = 2, 5, 7, 8, 8, 6
    s, h = torch.randn(B, Q, dq), torch.randn(B, K, dk)
    mask = padding_mask(torch.tensor([7, 4]), K)
    layer = {
        "additive": lambda: AdditiveAttention(dq, dk, da),
        "dot": DotAttention,
        "general": lambda: GeneralAttention(dq, dk),
        "concat": lambda: ConcatAttention(dq, dk, da),
    }[kind]()
    out, alpha = layer(s, h, mask=mask)
    S, Hh = _np(s), _np(h)
    if kind == "additive":
        W, U, b, v = (
            _np(p) for p in (layer.W_a.weight, layer.U_a.weight, layer.U_a.bias, layer.v_a.weight)
        )
        e = np.einsum("a,bqka->bqk", v[0], np.tanh((S @ W.T)[:, :, None] + (Hh @ U.T + b)[:, None]))
    elif kind == "dot":
        e = S @ Hh.transpose(0, 2, 1)
    elif kind == "general":
        e = S @ (Hh @ _np(layer.W_a.weight).T).transpose(0, 2, 1)
    else:
        W, v = _np(layer.W_a.weight), _np(layer.v_a.weight)
        e = np.einsum(
            "a,bqka->bqk",
            v[0],
            np.tanh((S @ W[:, :dq].T)[:, :, None] + (Hh @ W[:, dq:].T)[:, None]),
        )
    ref_alpha = ref_softmax(e, _np(mask).astype(bool))
    assert np.allclose(_np(alpha), ref_alpha, atol=1e-5)
    assert np.allclose(_np(out), ref_alpha @ Hh, atol=1e-5)
    assert (alpha[1, :, 4:] == 0).all()


def test_multihead_matches_torch_multihead_attention():
    torch.manual_seed(1)
    d, h, B, T, S = 24, 4, 2, 7, 9
    ours = MultiHeadAttention(d, h)
    ref = torch.nn.MultiheadAttention(d, h, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.W_Q.weight, ours.W_K.weight, ours.W_V.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.W_Q.bias, ours.W_K.bias, ours.W_V.bias]))
        ref.out_proj.weight.copy_(ours.W_O.weight)
        ref.out_proj.bias.copy_(ours.W_O.bias)
    x, mem = torch.randn(B, T, d), torch.randn(B, S, d)
    keep = padding_mask(torch.tensor([9, 5]), S)  # (B, 1, S)
    out, w = ours(x, mem, mem, mask=keep)
    ref_out, ref_w = ref(x, mem, mem, key_padding_mask=~keep[:, 0], average_attn_weights=False)
    assert torch.allclose(out, ref_out, atol=1e-5)
    assert torch.allclose(w, ref_w, atol=1e-6)
    assert w.shape == (B, h, T, S)
    out_c, w_c = ours(x, causal=True)
    assert (w_c.triu(1) == 0).all()


def test_scale_default_is_inverse_sqrt_dk():
    q = torch.randn(1, 3, 16)
    k = torch.randn(1, 4, 16)
    _, w = scaled_dot_product_attention(q, k, k)
    _, w2 = scaled_dot_product_attention(q, k, k, scale=1 / math.sqrt(16))
    assert torch.equal(w, w2)
