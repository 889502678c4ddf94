"""One Llama decoder layer, written once, for every loop that runs the chat model by hand.

The chat model's own decoding loop (:class:`engine.models.chat.Decoder`), the batched
loop (:mod:`engine.models.batch_decoder`), the cache-policy evaluation
(:mod:`engine.analysis.cache_eval`) and the press sweep (:mod:`engine.evaluation.cache`)
differ only in what a layer's attention reads: which keys are cached, rotated where,
masked how. So a layer is :func:`block` with the attention passed in (the x-transformers
``attn_fn`` idea), and what every caller shares is here:

1. h = RMSNorm(x);  q = h W_q,  k = h W_k,  v = h W_v  (the model's own modules);
2. o = attend(q, k, v): the caller's cache, RoPE (:func:`rope`) and scores
   (:func:`attention`: grouped-query, an optional additive mask, softmax in float32);
3. x ← x + o W_o;  x ← x + W_down(SiLU(h' W_gate) ⊙ h' W_up), h' = RMSNorm(x).

``linear(module, x)`` is how each product is taken: the module itself (its
:class:`~engine.models.precision.HalfLinear` path) unless a caller multiplies otherwise
(the batch's float32 copies, ``batch_decoder.Weights32``). Every operation is the one
transformers' ``LlamaDecoderLayer`` runs, in its order (tests/unit/test_chat.py compares
the full cache with the model's own forward).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F

Linear = Callable[[torch.nn.Module, torch.Tensor], torch.Tensor]
# attend(layer index, q (T, H, d), k (T, H_kv, d), v (T, H_kv, d)) -> o, reshapable to (T, H·d)
Attend = Callable[[int, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def call(module: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The module's own product (the default ``linear``)."""
    return module(x)


def rotary(model, positions: torch.Tensor | Sequence[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin ``(T, d)`` of RoPE at ``positions`` (the model's own rotary embedding)."""
    pos = torch.as_tensor(positions, dtype=torch.long)
    cos, sin = model.model.rotary_emb(torch.empty(0), pos[None])
    return cos[0], sin[0]


def rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x·cos + rotate_half(x)·sin (Su et al., RoFormer), rotate_half(x) = (−x₂, x₁)."""
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


def attention(
    q: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    *,
    scale: float,
    mask: torch.Tensor | None = None,
    weights: bool = True,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Grouped-query attention: e_ij = q_i · k_j · scale (+ M_ij), α = softmax_j(e), o = α v.

    ``q`` ``(…, H, T, d)``; ``keys`` ``(…, H_kv, N, d)``, ``values`` ``(…, H_kv, N, d_v)``:
    query head h reads K/V head h // g, g = H / H_kv. ``mask`` is additive (0 or −inf),
    broadcastable to ``(…, H, T, N)``: one for every head ``(T, N)``, one per query head
    ``(H, T, N)`` or one per K/V head ``(H_kv, T, N)``. Returns o ``(…, H, T, d_v)`` and
    α ``(…, H, T, N)`` in float32; with ``weights=False`` the same o from torch's fused
    kernel (summed in another order) and no α.
    """
    *lead, h, t, d = q.shape
    hkv = keys.shape[-3]
    g = h // hkv
    per_head = mask is not None and mask.dim() >= 3 and mask.shape[-3] > 1
    if not weights:  # no leading dimensions here: torch's kernel takes (B, H, T, d)
        if per_head and mask.shape[-3] == hkv < h:
            mask = mask.repeat_interleave(g, dim=-3)
        o = F.scaled_dot_product_attention(
            q[None], keys[None], values[None], attn_mask=mask, scale=scale, enable_gqa=True
        )[0]
        return o, None
    if mask is not None and mask.dim() >= 3:
        # in the (H_kv, g) layout of the scores: per query head, else per K/V head or shared
        by_query = per_head and g > 1 and mask.shape[-3] == h
        mask = mask.unflatten(-3, (hkv, g)) if by_query else mask.unsqueeze(-3)
    # A K/V head's g query heads are g·T rows against the same keys: one product per K/V
    # head, where broadcasting over g would copy every key and value g times first.
    e = (q.reshape(*lead, hkv, g * t, d) @ keys.transpose(-1, -2)).unflatten(-2, (g, t)) * scale
    if mask is not None:
        e = e + mask
    alpha = torch.softmax(e, dim=-1, dtype=torch.float32)  # (…, H_kv, g, T, N)
    o = alpha.flatten(-3, -2) @ values  # (…, H_kv, g·T, d_v)
    return o.unflatten(-2, (g, t)).flatten(-4, -3), alpha.flatten(-4, -3)


def block(layer, x: torch.Tensor, attend: Callable, linear: Linear = call) -> torch.Tensor:
    """One decoder layer over the rows of ``x`` ``(T, d_model)``; ``attend(q, k, v)`` gets
    the projections before RoPE, ``(T, H, d)`` and ``(T, H_kv, d)``, and returns o."""
    a = layer.self_attn
    t, d = x.shape[0], a.head_dim
    h = layer.input_layernorm(x)
    q = linear(a.q_proj, h).view(t, -1, d)  # (T, H, d)
    k = linear(a.k_proj, h).view(t, -1, d)  # (T, H_kv, d)
    v = linear(a.v_proj, h).view(t, -1, d)
    o = attend(q, k, v)
    x = x + linear(a.o_proj, o.reshape(t, -1))
    mlp = layer.mlp
    h = layer.post_attention_layernorm(x)
    return x + linear(mlp.down_proj, mlp.act_fn(linear(mlp.gate_proj, h)) * linear(mlp.up_proj, h))


def forward(
    model, ids: Sequence[int] | torch.Tensor, attend: Attend, *, linear: Linear = call, head=True
) -> torch.Tensor:
    """Tokens ``ids`` through every layer, ``attend(layer index, q, k, v)`` inside each;
    the logits ``(T, V)``, or with ``head=False`` the last residual stream ``(T, d_model)``."""
    m = model.model
    x = m.embed_tokens(torch.as_tensor(ids))  # (T, d_model)
    for li, layer in enumerate(m.layers):
        x = block(layer, x, lambda q, k, v, li=li: attend(li, q, k, v), linear)
    return linear(model.lm_head, m.norm(x)) if head else x
