"""Head ablation in the project's Transformer (:mod:`engine.models.transformer`), by the
conventions of :mod:`engine.analysis.ablation`, for its three kinds of attention: encoder
self-attention, decoder self-attention and cross-attention.

The *answer* is the model's own greedy translation y = y_1 … y_n (with ``</s>``). For each
head, zeroed or set to its mean output (over the positions of this input) at every
position:

    Δ log p = log p_ablated(y | x) − log p(y | x)     (teacher-forced, summed over y)
    Δ loss  = Δ of the mean per-token cross-entropy of y
    changed = the ablated model's own greedy translation is not y

Each (kind, layer) is one batch of H copies, copy h with head h ablated; the model is small
(2 layers × 4 heads), so each copy reruns the whole model. The edits go through the same
idle hooks on each W_O as the chat model's (:func:`engine.analysis.causal.install_heads`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from engine.analysis import causal
from engine.analysis.ablation import check_mode, head_edit
from engine.models import transformer

KINDS = ("encoder_self", "decoder_self", "cross")


@dataclass
class TranslationAblation:
    """Per kind, ``[L, H]`` effects of ablating each head alone."""

    mode: str
    translation: str
    log_prob: float
    loss: float
    delta_log_prob: dict[str, torch.Tensor]
    delta_loss: dict[str, torch.Tensor]
    changed: dict[str, torch.Tensor]  # bool
    ablated_translations: dict[str, list[list[str]]]
    stopped: bool = False


def _projections(model: transformer.Transformer) -> dict:
    found = {}
    for li, layer in enumerate(model.encoder):
        found["encoder_self", li] = layer.self_attn.W_O
    for li, layer in enumerate(model.decoder):
        found["decoder_self", li] = layer.self_attn.W_O
        found["cross", li] = layer.cross_attn.W_O
    return found


def _scores(logits: torch.Tensor, target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Summed log p(target) and mean cross-entropy per copy: logits ``[B, n, V]``."""
    lp = torch.log_softmax(logits, -1).gather(-1, target.expand(len(logits), -1)[..., None])
    return lp[..., 0].sum(-1), -lp[..., 0].mean(-1)


def _trimmed(ids: torch.Tensor) -> list[int]:
    """Greedy output after ``<s>``, up to and with the first ``</s>``."""
    out = []
    for i in ids[1:].tolist():
        out.append(i)
        if i == transformer.EOS:
            break
    return out


def ablate(
    tr: transformer.Transformer,
    text: str,
    *,
    mode: str = "zero",
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> TranslationAblation:
    """Ablate every head of every kind alone on the input ``text``."""
    mode = check_mode(mode)
    tokens, src = transformer.source_ids(tr, text)
    model, H, L = tr, tr.cfg.n_heads, tr.cfg.n_layers
    causal.install_heads(model, _projections(model), H)
    n_new = transformer.max_new(tr, len(tokens))
    with torch.no_grad():
        answer = _trimmed(model.greedy(src, n_new)[0, : n_new + 1])
        tgt_in, target = torch.tensor([[transformer.BOS, *answer[:-1]]]), torch.tensor(answer)
        with causal.probing(causal.Probe(record=True)) as probe:
            logits, _ = model(src, tgt_in)
        base_lp, base_loss = (float(v[0]) for v in _scores(logits, target))
        means = {key: z[0].mean(0) for key, z in probe.z.items()}  # (H, d_head)
        shape = (L, H)
        d_lp = {k: torch.zeros(shape) for k in KINDS}
        d_loss = {k: torch.zeros(shape) for k in KINDS}
        changed = {k: torch.zeros(shape, dtype=torch.bool) for k in KINDS}
        texts: dict[str, list[list[str]]] = {k: [[""] * H for _ in range(L)] for k in KINDS}
        keys = [(kind, li) for kind in KINDS for li in range(L)]
        stopped = False
        for done, key in enumerate(keys):
            if should_stop is not None and should_stop():
                stopped = True
                break
            edit = head_edit(list(range(H)), mode, means[key])
            with causal.probing(causal.Probe(edits={key: edit})):
                lg, _ = model(src.expand(H, -1), tgt_in.expand(H, -1))
                gen = model.greedy(src.expand(H, -1), n_new)[:, : n_new + 1]
            lp, loss = _scores(lg, target)
            kind, li = key
            d_lp[kind][li] = lp - base_lp
            d_loss[kind][li] = loss - base_loss
            for h in range(H):
                own = _trimmed(gen[h])
                changed[kind][li, h] = own != answer
                texts[kind][li][h] = transformer.detokenize(tr.task, tr.tgt_vocab.decode(own))
            if progress is not None:
                progress(done + 1, len(keys))
    return TranslationAblation(
        mode=mode,
        translation=transformer.detokenize(tr.task, tr.tgt_vocab.decode(answer)),
        log_prob=base_lp,
        loss=base_loss,
        delta_log_prob=d_lp,
        delta_loss=d_loss,
        changed=changed,
        ablated_translations=texts,
        stopped=stopped,
    )
