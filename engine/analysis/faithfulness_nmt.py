"""Bahdanau NMT: α beside occlusion, gradient × input and integrated gradients.

For a sentence pair with the target fed in (forced decoding, as ``RNNSearch.align``
reads α), the output of step i is log p(y_i | y_<i, x) and the inputs are the source
word embeddings x_j (``src_embed``). Removing word j sets x_j = 0 (erasure: the word's
place in the sentence stays, its content goes; Li et al. 2016). Each attribution is a
``[T, K]`` matrix like α, so each gives a hard alignment by the argmax of its rows, which
Ding et al. (2019) score by AER against gold links as they score attention.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch

from engine.analysis import faithfulness as F
from engine.data.vocab import EOS_ID


@dataclass(frozen=True)
class Saliency:
    """``[T, K]`` matrices over target steps i (the gold words, then </s>) and source
    words j; ``ig_error``: IG's completeness error per step."""

    alpha: np.ndarray
    occlusion: np.ndarray
    grad_x_input: np.ndarray
    integrated: np.ndarray
    ig_error: np.ndarray

    def methods(self) -> dict[str, np.ndarray]:
        return {
            "occlusion": self.occlusion,
            "grad_x_input": self.grad_x_input,
            "integrated_gradients": self.integrated,
        }

    def agreement(self) -> dict[str, list[F.Agreement]]:
        """α's row i against each attribution's row i, for every target step."""
        return {
            name: [F.agreement(a, s) for a, s in zip(self.alpha, m, strict=True)]
            for name, m in self.methods().items()
        }

    def mean(self) -> dict[str, dict]:
        """Each attribution's agreement with α over this sentence's steps, summarised
        (:func:`engine.analysis.faithfulness.summarise`: mean ρ, top-1 rate, n)."""
        return {name: F.summarise(rows) for name, rows in self.agreement().items()}


@contextmanager
def _embeddings(model, x: torch.Tensor):
    """The source embedding layer returns ``x`` instead of looking up the ids."""
    handle = model.src_embed.register_forward_hook(lambda module, args, out: x)
    try:
        yield
    finally:
        handle.remove()


def _log_p(model, src, tgt_in, y, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """log p(y_i) ``[B, T]`` and α ``[B, T, K]`` for B copies of one pair with source
    embeddings ``x`` ``[B, K, emb]``."""
    B = x.shape[0]
    with _embeddings(model, x):
        logits, alpha = model(
            src.expand(B, -1), torch.tensor([src.shape[1]] * B), tgt_in.expand(B, -1)
        )
    lp = torch.log_softmax(logits, -1)  # (B, T, V)
    return lp.gather(-1, y.expand(B, -1)[..., None])[..., 0], alpha


def saliency(model, src: list[str], tgt: list[str], steps: int = F.IG_STEPS) -> Saliency:
    """α and the three attributions of the pair (``model``: a loaded RNNSearch with attention)."""
    ids = torch.tensor([model.src_vocab.encode(src)])  # (1, K)
    full = model.tgt_vocab.encode(tgt, add_bos=True, add_eos=True)
    tgt_in, y = torch.tensor([full[:-1]]), torch.tensor([full[1:]])  # (1, T): <s> y, y </s>
    K, T = ids.shape[1], y.shape[1]
    assert y[0, -1] == EOS_ID
    with torch.no_grad():
        x = model.src_embed(ids)  # (1, K, emb)
        _, alpha = _log_p(model, ids, tgt_in, y, x)

    def erased(keep: torch.Tensor) -> torch.Tensor:  # keep (K + 1, K) → (K + 1, T)
        return _log_p(model, ids, tgt_in, y, x * keep[..., None])[0]

    steps_idx = torch.arange(T)

    def own_step(xb: torch.Tensor) -> torch.Tensor:  # copy b answers for step b mod T
        lp = _log_p(model, ids, tgt_in, y, xb)[0]
        return lp[torch.arange(xb.shape[0]), steps_idx.repeat_interleave(xb.shape[0] // T)]

    with torch.enable_grad():
        xs = x.expand(T, -1, -1)  # copy i: the gradient of step i
        gxi = F.gradient_x_input(own_step, xs)  # (T, K)
        ig = F.integrated_gradients(own_step, xs, steps=steps)
    return Saliency(
        alpha=alpha[0].detach().numpy(),
        occlusion=F.occlusion(erased, K).T,  # (T, K)
        grad_x_input=gxi,
        integrated=ig.attributions,
        ig_error=ig.completeness_error,
    )
