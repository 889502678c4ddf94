"""Multi-head attention (Vaswani et al. 2017, §3.2.2) that returns its weights.

MultiHead(Q, K, V) = Concat(head_1, …, head_h) W^O,  head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

The weights come back from ``forward`` instead of being stored on the module:
cached models are shared by concurrent sessions. The attention core between the
projections is a parameter (``attend``, see engine.attention.attend): the exact kernel
by default, any registry variant on request, with the trained W_Q, W_K, W_V, W_O kept.
"""

from __future__ import annotations

import torch
from torch import nn

from engine.attention.attend import Attend, exact


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, *, bias: bool = True):
        super().__init__()
        assert d_model % n_heads == 0, f"d_model={d_model} must be divisible by n_heads={n_heads}"
        self.d_model, self.h = d_model, n_heads
        self.d_k = d_model // n_heads
        self.W_Q = nn.Linear(d_model, d_model, bias=bias)
        self.W_K = nn.Linear(d_model, d_model, bias=bias)
        self.W_V = nn.Linear(d_model, d_model, bias=bias)
        self.W_O = nn.Linear(d_model, d_model, bias=bias)

    def split(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.h, self.d_k).transpose(1, 2)  # (B, h, T, d_k)

    def project(self, query, key, value):
        """Per-head Q, K, V ``(B, h, T, d_k)``; exposed for views (neuron view, QK maps)."""
        return self.split(self.W_Q(query)), self.split(self.W_K(key)), self.split(self.W_V(value))

    def forward(
        self,
        query,
        key=None,
        value=None,
        mask=None,
        *,
        causal: bool = False,
        attend: Attend | None = None,
        want_weights: bool = True,
    ):
        """mask broadcasts against ``(B, h, Q, K)``; a ``(B, 1, K)`` padding mask is lifted.

        ``attend`` (default :func:`engine.attention.attend.exact`) computes the heads from
        the projected q, k, v and their weights; ``want_weights=False`` (a decoding loop
        that only reads the output) lets the exact kernel skip rebuilding them.
        """
        key = query if key is None else key
        value = key if value is None else value
        q, k, v = self.project(query, key, value)
        return self._heads(q, k, v, mask, causal, attend or exact, want_weights)

    def attend_projected(self, query, k, v, mask=None):
        """Exact attention of new queries over keys/values already split into heads
        ``(B, h, K, d_k)``: a decoding step reads its KV cache through this."""
        q = self.split(self.W_Q(query))
        return self._heads(q, k, v, mask, False, exact, False)[0]

    def _heads(self, q, k, v, mask, causal: bool, attend: Attend, want_weights: bool):
        """The heads' attention, concatenated and projected by W^O; and their weights."""
        if mask is not None and mask.dim() == 3:
            mask = mask[:, None]  # (B, 1, Q|1, K)
        out, weights = attend(q, k, v, mask=mask, causal=causal, want_weights=want_weights)
        B, _, T, _ = out.shape
        out = out.transpose(1, 2).reshape(B, T, self.d_model)  # (B, T, h·d_k)
        return self.W_O(out), weights  # weights (B, h, Q, K)
