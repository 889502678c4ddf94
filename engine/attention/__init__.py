"""Core attention scoring functions; each returns ``(output, weights)``."""

from engine.attention.attend import Attend, exact
from engine.attention.masks import causal_mask, masked_softmax, padding_mask
from engine.attention.multihead import MultiHeadAttention
from engine.attention.scoring import (
    AdditiveAttention,
    ConcatAttention,
    DotAttention,
    GeneralAttention,
    scaled_dot_product_attention,
)

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
