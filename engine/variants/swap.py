"""The trained Transformer with a variant swapped into every encoder self-attention.

Each encoder layer keeps its trained W_Q, W_K, W_V, W_O, feed-forward and norms; only
softmax(QKᵀ/√d)V between the projections is replaced by the variant. The decoder runs
unchanged (greedy), so the translation shows what the swap does to the model's answer.
The first encoder layer's per-head Q, K, V are what the side-by-side maps compare.
"""

from __future__ import annotations

import functools

import torch

from engine.variants.registry import get

CHECKPOINT = "transformer-dates-sinusoidal"


@functools.cache
def _translator(name: str):
    from engine.models import transformer

    return transformer.load(name)


def available(name: str = CHECKPOINT) -> bool:
    from engine import checkpoints

    return all(p.exists() for p in checkpoints.paths(name))


def max_length(name: str = CHECKPOINT) -> int:
    return _translator(name).max_src


def layer_qkv(text: str, name: str = CHECKPOINT):
    """Per-head q, k, v ``[1, h, n, d_k]`` of the first encoder layer, and the tokens."""
    from engine.models import transformer

    tr = _translator(name)
    tokens, src = transformer.source_ids(tr, text)
    with torch.no_grad():
        x = tr.model.src_embed(src)
        q, k, v = tr.model.encoder[0].self_attn.project(x, x, x)
    return q, k, v, tokens


@torch.no_grad()
def translate(text: str, variant: str, hp: dict | None = None, *, name: str = CHECKPOINT) -> str:
    """Greedy output of the model whose encoder self-attention is ``variant``."""
    from engine.models.transformer import BOS, EOS, detokenize, source_ids

    tr = _translator(name)
    model, impl = tr.model, get(variant)
    _, src = source_ids(tr, text)
    src_mask = torch.ones(1, 1, src.shape[1], dtype=torch.bool)  # one sentence: no padding
    x = model.src_embed(src)
    for layer in model.encoder:  # EncoderLayer.forward with the attention core swapped
        q, k, v = layer.self_attn.project(x, x, x)  # (1, h, n, d_k)
        heads = impl.run(q, k, v, want_map=False, hp=hp).out
        a = layer.self_attn.W_O(heads.transpose(1, 2).reshape(x.shape))
        x = layer.norm1(x + a)
        x = layer.norm2(x + layer.ff(x))
    out = [BOS]
    for _ in range(tr.max_new):
        logits = model.decode(torch.tensor([out]), x, src_mask)[0][0, -1]
        out.append(int(logits.argmax()))
        if out[-1] == EOS:
            break
    words = [tr.tgt_vocab.itos[i] for i in out[1:] if i != EOS]
    return detokenize(tr.task, words)
