"""Attention scoring functions from the papers, each returning ``(output, weights)``.

Shapes: query ``[B, Q, d_q]``, keys ``[B, K, d_k]``, values ``[B, K, d_v]``;
weights ``[B, Q, K]``; output ``[B, Q, d_v]``. ``mask`` is True where allowed and
broadcasts against ``[B, Q, K]``.

- additive (Bahdanau et al. 2014):  e_ij = v_aᵀ tanh(W_a s_i + U_a h_j)
- dot (Luong et al. 2015):          e_ij = s_iᵀ h_j
- general (Luong):                  e_ij = s_iᵀ W_a h_j
- concat (Luong):                   e_ij = v_aᵀ tanh(W_a [s_i; h_j])
- scaled dot-product (Vaswani et al. 2017): softmax(QKᵀ / √d_k) V
"""

from __future__ import annotations

import math

import torch
from torch import nn

from engine.masks import allowed, masked_softmax


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    causal: bool = False,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(Q Kᵀ / √d_k) V over any leading dims ``[..., Q, d]``."""
    d_k = q.shape[-1]
    scale = 1.0 / math.sqrt(d_k) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale  # (..., Q, K)
    mask = allowed(mask, causal, q.shape[-2], k.shape[-2], q.device)
    weights = masked_softmax(scores, mask)
    return weights @ v, weights


class _Scoring(nn.Module):
    """Shared forward: score → masked softmax → weighted sum of values.

    Each subclass is one scoring function: ``score(query, keys) -> e`` of shape (B, Q, K);
    extra keyword arguments of ``forward`` go to ``score``.
    """

    def forward(self, query, keys, values=None, mask=None, *, causal: bool = False, **score_kw):
        values = keys if values is None else values
        e = self.score(query, keys, **score_kw)
        mask = allowed(mask, causal, e.shape[-2], e.shape[-1], e.device)
        alpha = masked_softmax(e, mask)  # α_ij
        return alpha @ values, alpha  # c_i = Σ_j α_ij h_j


class AdditiveAttention(_Scoring):
    """Bahdanau: e_ij = v_aᵀ tanh(W_a s_{i-1} + U_a h_j)."""

    def __init__(self, d_query: int, d_key: int, d_attn: int):
        super().__init__()
        self.W_a = nn.Linear(d_query, d_attn, bias=False)
        self.U_a = nn.Linear(d_key, d_attn, bias=True)
        self.v_a = nn.Linear(d_attn, 1, bias=False)

    def project_keys(self, keys):
        """U_a h_j: independent of the decoder step, so a decoder computes it once per input."""
        return self.U_a(keys)  # (B, K, d_attn)

    def parts(self, query, keys, Uh=None):
        """The intermediate terms a teacher wants to show: W_a s, U_a h_j, tanh(·), e_ij.

        ``Uh`` is ``project_keys(keys)`` when the caller already has it.
        """
        Ws = self.W_a(query)  # (B, Q, d_attn)
        Uh = self.project_keys(keys) if Uh is None else Uh
        t = torch.tanh(Ws[:, :, None, :] + Uh[:, None, :, :])  # (B, Q, K, d_attn)
        e = self.v_a(t).squeeze(-1)  # (B, Q, K)
        return {"W_a s": Ws, "U_a h": Uh, "tanh": t, "e": e}

    def score(self, query, keys, Uh=None):
        return self.parts(query, keys, Uh)["e"]


class DotAttention(_Scoring):
    """Luong dot: e_ij = s_iᵀ h_j (needs d_query == d_key)."""

    def score(self, query, keys):
        return query @ keys.transpose(-2, -1)


class GeneralAttention(_Scoring):
    """Luong general: e_ij = s_iᵀ W_a h_j."""

    def __init__(self, d_query: int, d_key: int):
        super().__init__()
        self.W_a = nn.Linear(d_key, d_query, bias=False)

    def score(self, query, keys):
        return query @ self.W_a(keys).transpose(-2, -1)


class ConcatAttention(_Scoring):
    """Luong concat: e_ij = v_aᵀ tanh(W_a [s_i; h_j])."""

    def __init__(self, d_query: int, d_key: int, d_attn: int):
        super().__init__()
        self.W_a = nn.Linear(d_query + d_key, d_attn, bias=False)
        self.v_a = nn.Linear(d_attn, 1, bias=False)

    def score(self, query, keys):
        B, Q, _ = query.shape
        K = keys.shape[1]
        pair = torch.cat(
            [query[:, :, None, :].expand(B, Q, K, -1), keys[:, None, :, :].expand(B, Q, K, -1)],
            dim=-1,
        )  # (B, Q, K, d_q + d_k)
        return self.v_a(torch.tanh(self.W_a(pair))).squeeze(-1)
