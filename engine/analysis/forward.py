"""One teacher-forced forward pass of the chat model that returns its attention weights."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch


def self_attention(chat, ids: Sequence[int] | torch.Tensor) -> np.ndarray:
    """Softmax weights ``α`` of every layer and head, float32 ``[L, H, T, T]`` (or
    ``[B, L, H, T, T]`` for a batch ``[B, T]``), from the model's eager attention.

    ``chat`` is the loaded chat card (anything with ``.model``, a causal LM
    loaded with ``attn_implementation="eager"``): SDPA would return no weights.
    """
    batch = torch.as_tensor(ids, dtype=torch.long)
    single = batch.dim() == 1
    if single:
        batch = batch[None]
    with torch.inference_mode():
        out = chat.model(input_ids=batch, output_attentions=True, use_cache=False)
    w = torch.stack(out.attentions, dim=1).float().numpy()  # (B, L, H, T, T)
    return w[0] if single else w
