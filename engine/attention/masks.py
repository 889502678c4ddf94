"""Masks and a softmax that gives masked keys exactly zero weight.

Convention everywhere in the engine: a boolean mask is True where attention is
*allowed*. Masks broadcast against scores ``[..., Q, K]``.
"""

from __future__ import annotations

import torch


def causal_mask(n_q: int, n_k: int | None = None, *, device=None) -> torch.Tensor:
    """``[Q, K]`` lower-triangular mask: query i may see keys j <= i (+ offset).

    When K > Q (decoding against a cache) the queries are the *last* Q positions.
    """
    n_k = n_q if n_k is None else n_k
    offset = n_k - n_q
    i = torch.arange(n_q, device=device)[:, None]
    j = torch.arange(n_k, device=device)[None, :]
    return j <= i + offset


def padding_mask(lengths: torch.Tensor, n_k: int) -> torch.Tensor:
    """``[B, 1, K]`` mask from true lengths: key j is real when j < length."""
    j = torch.arange(n_k, device=lengths.device)
    return (j[None, :] < lengths[:, None])[:, None, :]


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """softmax over the last axis with masked keys at exactly 0.

    A row whose keys are all masked returns all zeros rather than NaN, so padded
    query rows stay harmless downstream.
    """
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.to(torch.bool)
    filled = scores.masked_fill(~mask, float("-inf"))
    # Rows with no allowed key would be softmax(-inf...) = NaN; give them a finite row.
    empty = ~mask.any(dim=-1, keepdim=True)
    filled = filled.masked_fill(empty, 0.0)
    weights = torch.softmax(filled, dim=-1)
    return weights.masked_fill(~mask | empty, 0.0)
