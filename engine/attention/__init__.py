"""Core attention scoring functions; each returns ``(output, weights)``."""

from engine.attention.attend import Attend, exact
from engine.attention.multihead import MultiHeadAttention
from engine.attention.scoring import (
    AdditiveAttention,
    ConcatAttention,
    DotAttention,
    GeneralAttention,
    scaled_dot_product_attention,
)
from engine.masks import causal_mask, masked_softmax, padding_mask

__all__ = [
    "AdditiveAttention",
    "Attend",
    "ConcatAttention",
    "DotAttention",
    "GeneralAttention",
    "MultiHeadAttention",
    "causal_mask",
    "exact",
    "masked_softmax",
    "padding_mask",
    "scaled_dot_product_attention",
]
