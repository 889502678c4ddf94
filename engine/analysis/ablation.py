"""Head ablation by TransformerLens's conventions: remove one head's output and measure.

Head h of layer l writes ``z[l][:, h] W_O[h]`` into the residual stream (see
:mod:`engine.analysis.causal`). Ablating it replaces its output ``z[l][t, h]`` at every
position t by

- **zero** ablation: 0 (the head writes nothing);
- **mean** ablation: ``z̄[l, h]``, its mean output over every position of a reference set
  of prompts (:func:`head_means`; by default the studied prompt itself), which keeps the
  head's average contribution and removes only what depends on this input.

Per head, the effect on the *answer* (the token scored at the last position: by default the
model's own greedy next token) and on the prompt's *loss* (mean next-token cross-entropy):

    Δ log p = log p_ablated(answer) − log p(answer)     (negative: the head helped)
    Δ loss  = loss_ablated − loss                        (positive: the head helped)

A sweep reruns, for each layer l, only layers l … L − 1: one batch of H copies of the cached
``resid_pre[l]``, copy h with head h ablated (Σ_l (L − l)·H copies of a layer instead of
L·H full passes).

Δ loss needs every position unembedded, a third of a sweep's work; ``loss_for=k`` reads
only the last position in the sweep and measures Δ loss afterwards for the k heads that
lower log p most (what a page's table shows), NaN for the others.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import torch

from engine.analysis import causal
from engine.errors import InputError

MODES = ("zero", "mean")
TABLE_HEADS = 5  # the heads a page lists with their Δ loss (the Chat page's table)


@dataclass
class Ablation:
    """Effects of ablating heads, ``[L, H]`` (NaN where a head was not ablated)."""

    mode: str
    answer: int
    answer_text: str
    log_prob: float  # log p(answer) at the last position, nothing ablated
    loss: float  # the prompt's mean next-token loss, nothing ablated
    delta_log_prob: torch.Tensor  # (L, H)
    delta_loss: torch.Tensor  # (L, H)
    n_tokens: int
    reference: str  # what the mean was taken over: an id ("prompt": its own positions; "")
    seconds: float
    stopped: bool = False
    layers_done: list[int] = field(default_factory=list)

    def top(self, k: int = 10) -> list[dict]:
        """The ``k`` heads whose ablation lowers log p(answer) most."""
        return [
            {
                "layer": layer,
                "head": head,
                "delta_log_prob": float(self.delta_log_prob[layer, head]),
                "delta_loss": float(self.delta_loss[layer, head]),
            }
            for layer, head in _top(self.delta_log_prob, k)
        ]


def head_means(chat, prompts: Iterable[Sequence[int]], *, arith: str = "bfloat16") -> torch.Tensor:
    """``z̄[l, h]``: each head's output averaged over every position of ``prompts``,
    ``[L, H, d_head]`` (the reference set of mean ablation)."""
    total, count = None, 0
    for ids in prompts:
        z = causal.run_with_cache(chat, ids, arith=arith).z  # (L, T, H, d_head)
        s = z.sum(1)
        total = s if total is None else total + s
        count += z.shape[1]
    if total is None:
        raise InputError("causal.empty")
    return total / count


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise InputError("causal.mode", mode=mode, known=", ".join(MODES))
    return mode


def _heads_by_layer(chat, heads: Iterable[tuple[int, int]] | None) -> dict[int, list[int]]:
    if heads is None:
        return {li: list(range(chat.n_heads)) for li in range(chat.n_layers)}
    by_layer: dict[int, list[int]] = {}
    for layer, head in heads:
        causal.check_head(chat, layer, head)
        if head not in by_layer.setdefault(layer, []):
            by_layer[layer].append(head)
    if not by_layer:
        raise InputError("causal.no_heads")
    return dict(sorted(by_layer.items()))


def head_edit(heads: list[int], mode: str, mean: torch.Tensor | None):
    """Copy b of the batch gets head ``heads[b]`` zeroed or set to its mean."""

    def edit(z: torch.Tensor) -> torch.Tensor:  # (B, T, H, d_head)
        z = z.clone()
        for b, h in enumerate(heads):
            z[b, :, h] = 0.0 if mode == "zero" else mean[h].to(z.dtype)
        return z

    return edit


def ablate(
    chat,
    ids: Sequence[int],
    *,
    heads: Iterable[tuple[int, int]] | None = None,
    mode: str = "zero",
    answer: int | str | None = None,
    means: torch.Tensor | None = None,
    reference: str = "",
    arith: str = "bfloat16",
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
    loss_for: int | None = None,
) -> Ablation:
    """Ablate each of ``heads`` (``(layer, head)`` pairs; None: all L × H) alone on the
    prompt ``ids`` and measure Δ log p(answer) and Δ loss.

    ``means``: ``[L, H, d_head]`` from :func:`head_means` for mean ablation, named by the
    id ``reference`` (default: the mean over this prompt's own positions, ``"prompt"``).
    ``progress(done, total)`` after each layer; when ``should_stop()`` is True the layers
    done so far are returned (``stopped``). ``loss_for``: Δ loss only for the k heads that
    lower log p most (see the module's note); None: for every head.
    """
    ids = causal.check_ids(chat, ids)
    mode = check_mode(mode)
    by_layer = _heads_by_layer(chat, heads)
    started = time.perf_counter()
    run = causal.run_with_cache(chat, ids, arith=arith)
    if mode == "mean" and means is None:
        means, reference = run.z.mean(1), "prompt"
    target = int(run.logits[-1].argmax()) if answer is None else causal.token_id(chat, answer)
    base_lp = float(causal.log_probs(run.logits[-1])[target])
    base_loss = float(causal.prompt_loss(run.logits[None], ids)[0])
    shape = (chat.n_layers, chat.n_heads)
    d_lp, d_loss = torch.full(shape, float("nan")), torch.full(shape, float("nan"))
    done: list[int] = []
    stopped = False
    for li, hs in by_layer.items():
        if should_stop is not None and should_stop():
            stopped = True
            break
        lp, loss = _layer(chat, run, ids, li, hs, mode, means, target, loss_for is None)
        d_lp[li, hs] = lp - base_lp
        if loss is not None:
            d_loss[li, hs] = loss - base_loss
        done.append(li)
        if progress is not None:
            progress(len(done), len(by_layer))
    if loss_for is not None and not stopped:
        for head in _top(d_lp, loss_for):  # one copy per head, from its own layer
            _, loss = _layer(chat, run, ids, head[0], [head[1]], mode, means, target, True)
            d_loss[head] = loss[0] - base_loss
    return Ablation(
        mode=mode,
        answer=target,
        answer_text=chat.tokenizer.decode([target]),
        log_prob=base_lp,
        loss=base_loss,
        delta_log_prob=d_lp,
        delta_loss=d_loss,
        n_tokens=len(ids),
        reference=reference if mode == "mean" else "",
        seconds=time.perf_counter() - started,
        stopped=stopped,
        layers_done=done,
    )


def _layer(chat, run, ids, li: int, hs: list[int], mode, means, target: int, loss: bool):
    """log p(answer) for each head of ``hs`` ablated at layer ``li`` (one batch), and the
    prompt's loss when ``loss`` (every position unembedded; else None, the last alone)."""
    edit = head_edit(hs, mode, None if means is None else means[li])
    h = causal.copies(run.resid_pre[li], len(hs))
    logits = causal.run_from(chat, run, li, h, {li: edit}, last_only=not loss, exact=False)
    lp = causal.log_probs(logits[:, -1])[:, target]
    return lp, causal.prompt_loss(logits, ids) if loss else None


def _top(delta_log_prob: torch.Tensor, k: int) -> list[tuple[int, int]]:
    flat = torch.nan_to_num(delta_log_prob, nan=float("inf")).flatten()
    H = delta_log_prob.shape[1]
    return [divmod(int(i), H) for i in flat.argsort()[:k] if flat[i] != float("inf")]
