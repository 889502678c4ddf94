"""Head ablation in MiniLM (a BERT encoder, :mod:`engine.models.pretrained`), by the
conventions of :mod:`engine.analysis.ablation`.

MiniLM has no next token to score: what it gives is a sentence embedding e, the mean of
its last hidden states over the real tokens, L2-normalised (as
:class:`engine.analysis.retrieval.Embedder` computes it). Per head, zeroed or set to its
mean output over this input's positions at every position:

    shift = 1 − cos(e_ablated, e)        (0: the embedding did not move)

and, per token, the same for the last hidden state (``token_shift``, ``[L, H, T]``), so a
page can say which tokens a head's removal moves. Each layer is one batch of H copies
through the whole model (6 layers × 12 heads: cheap), edited by the same idle hooks on
W_O (``attention.output.dense``) as the other models'
(:func:`engine.analysis.causal.install_heads`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from engine.analysis import causal
from engine.analysis.ablation import check_mode, head_edit
from engine.models import pretrained, token_text


@dataclass
class EncoderAblation:
    mode: str
    tokens: list[str]
    shift: torch.Tensor  # (L, H)
    token_shift: torch.Tensor  # (L, H, T)
    stopped: bool = False


def _embed(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask[..., None].to(hidden.dtype)  # (B, T, 1)
    return F.normalize((hidden * m).sum(1) / m.sum(1).clamp(min=1e-9), dim=-1)


def ablate(
    m,  # a loaded PretrainedCard (an encoder)
    text: str,
    *,
    mode: str = "zero",
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> EncoderAblation:
    """Ablate every head of the encoder alone on ``text``."""
    mode = check_mode(mode)
    enc = pretrained.encode(m, text)
    cfg = m.model.config
    L, H = cfg.num_hidden_layers, cfg.num_attention_heads
    layers = m.model.encoder.layer
    causal.install_heads(m.model, {li: b.attention.output.dense for li, b in enumerate(layers)}, H)
    with torch.no_grad(), causal.probing(causal.Probe(record=True)) as probe:
        base = m.model(**enc).last_hidden_state  # (1, T, d)
    e = _embed(base, enc["attention_mask"])
    T = base.shape[1]
    shift, token_shift = torch.full((L, H), float("nan")), torch.full((L, H, T), float("nan"))
    batch = {k: v.expand(H, -1) for k, v in enc.items()}
    stopped = False
    for li in range(L):
        if should_stop is not None and should_stop():
            stopped = True
            break
        edit = head_edit(list(range(H)), mode, probe.z[li][0].mean(0))
        with torch.no_grad(), causal.probing(causal.Probe(edits={li: edit})):
            h = m.model(**batch).last_hidden_state  # (H, T, d)
        shift[li] = 1 - (_embed(h, batch["attention_mask"]) * e).sum(-1)
        token_shift[li] = 1 - F.cosine_similarity(h, base, dim=-1)
        if progress is not None:
            progress(li + 1, L)
    tokens = token_text.labels(m.tokenizer, enc["input_ids"][0])
    return EncoderAblation(mode, tokens, shift, token_shift, stopped)
