"""Activation patching between a clean and a corrupted prompt (Meng et al. 2022; Wang et
al. 2022), with TransformerLens's metric.

The two prompts differ in a few tokens and have the same length, e.g. clean "When Mary and
John went to the store, John gave a drink to" (answer " Mary") and corrupted "…, Mary gave
a drink to" (answer " John"). One activation of the *corrupted* run is replaced by the
*clean* run's and the rest of the corrupted run recomputed. The logit difference

    LD = logit(answer) − logit(wrong)        at the last position

is read for the clean run, the corrupted run and each patched run, and normalised as in
TransformerLens's ``patching`` demos (``ioi_metric``):

    metric = (LD_patched − LD_corrupted) / (LD_clean − LD_corrupted)

0: the patch restored nothing, 1: it restored the clean behaviour entirely.

- :func:`residual`: ``resid_pre[l]`` at one position p, for every layer × position;
- :func:`heads`: head h's output ``z[l][:, h]`` at every position, for every layer × head.

Each layer is one batch of copies rerunning layers l … L − 1 (:func:`causal.run_from`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from engine.analysis import causal
from engine.errors import InputError

# Residual patching reruns T copies of T tokens per layer (T² growth): 32 tokens cost about
# what the 30 × 9 head sweep does on 30.
MAX_RESIDUAL_TOKENS = 32


@dataclass
class Pair:
    """A clean/corrupted pair, run once each, with the two tokens their difference reads."""

    clean: causal.Run
    corrupted: causal.Run
    answer: int
    wrong: int

    def logit_diff(self, logits: torch.Tensor) -> torch.Tensor:
        """``LD`` of logits ``[..., T, V]`` at the last position."""
        last = logits[..., -1, :]
        return last[..., self.answer] - last[..., self.wrong]

    @property
    def clean_diff(self) -> float:
        return float(self.logit_diff(self.clean.logits))

    @property
    def corrupted_diff(self) -> float:
        return float(self.logit_diff(self.corrupted.logits))

    def normalised(self, patched: torch.Tensor) -> torch.Tensor:
        """(LD_patched − LD_corrupted) / (LD_clean − LD_corrupted); NaN when the two runs
        have one logit difference (nothing to restore)."""
        gap = self.clean_diff - self.corrupted_diff
        if gap == 0:
            return torch.full_like(patched, float("nan"))
        return (patched - self.corrupted_diff) / gap


@dataclass
class Patching:
    """Logit differences of patched runs and their normalised metric."""

    what: str  # "residual" ([L, T]: layer × position) or "heads" ([L, H])
    logit_diff: torch.Tensor
    metric: torch.Tensor
    clean_diff: float
    corrupted_diff: float
    seconds: float
    stopped: bool = False


def prepare(
    chat,
    clean: Sequence[int],
    corrupted: Sequence[int],
    answer: int | str,
    wrong: int | str,
    *,
    arith: str = "bfloat16",
    limit: int | None = causal.MAX_TOKENS,
) -> Pair:
    """Run both prompts once; an InputError when either is empty, over ``limit`` tokens,
    the two lengths differ, or ``answer`` and ``wrong`` are not two single tokens."""
    clean, corrupted = (
        causal.check_ids(chat, clean, limit),
        causal.check_ids(chat, corrupted, limit),
    )
    if len(clean) != len(corrupted):
        raise InputError("causal.lengths_differ", clean=len(clean), corrupted=len(corrupted))
    a, w = causal.token_id(chat, answer), causal.token_id(chat, wrong)
    if a == w:
        raise InputError("causal.same_answers", token=chat.tokenizer.decode([a]))
    return Pair(
        clean=causal.run_with_cache(chat, clean, arith=arith),
        corrupted=causal.run_with_cache(chat, corrupted, arith=arith),
        answer=a,
        wrong=w,
    )


def patch_positions(
    chat, pair: Pair, layer: int, groups: Sequence[Sequence[int]], *, last_only: bool = True
) -> torch.Tensor:
    """Logits ``[len(groups), T | 1, V]``: copy g is the corrupted run with
    ``resid_pre[layer]`` taken from the clean run at the positions ``groups[g]``."""
    h = causal.copies(pair.corrupted.resid_pre[layer], len(groups))
    for g, positions in enumerate(groups):
        h[g, list(positions)] = pair.clean.resid_pre[layer][list(positions)]
    return causal.run_from(chat, pair.corrupted, layer, h, last_only=last_only)


def patch_heads(
    chat, pair: Pair, layer: int, heads: Sequence[int], *, last_only: bool = True
) -> torch.Tensor:
    """Logits ``[len(heads), T | 1, V]``: copy b is the corrupted run with head
    ``heads[b]``'s output at layer ``layer`` taken from the clean run (every position)."""
    clean_z = pair.clean.z[layer]  # (T, H, d_head)

    def edit(z: torch.Tensor) -> torch.Tensor:
        z = z.clone()
        for b, h in enumerate(heads):
            z[b, :, h] = clean_z[:, h].to(z.dtype)
        return z

    h = causal.copies(pair.corrupted.resid_pre[layer], len(heads))
    return causal.run_from(chat, pair.corrupted, layer, h, {layer: edit}, last_only=last_only)


def _sweep(chat, pair, what, width, patch, should_stop, progress) -> Patching:
    started = time.perf_counter()
    L = chat.n_layers
    diff = torch.full((L, width), float("nan"))
    stopped = False
    for li in range(L):
        if should_stop is not None and should_stop():
            stopped = True
            break
        diff[li] = pair.logit_diff(patch(li))
        if progress is not None:
            progress(li + 1, L)
    return Patching(
        what=what,
        logit_diff=diff,
        metric=pair.normalised(diff),
        clean_diff=pair.clean_diff,
        corrupted_diff=pair.corrupted_diff,
        seconds=time.perf_counter() - started,
        stopped=stopped,
    )


def residual(
    chat,
    pair: Pair,
    *,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Patching:
    """Patch ``resid_pre[l]`` at one position p, for every layer l and position p: ``[L, T]``."""
    T = len(pair.clean.ids)
    if T > MAX_RESIDUAL_TOKENS:
        raise InputError("causal.too_many_tokens", n=T, limit=MAX_RESIDUAL_TOKENS)
    groups = [[p] for p in range(T)]
    return _sweep(
        chat,
        pair,
        "residual",
        T,
        lambda li: patch_positions(chat, pair, li, groups),
        should_stop,
        progress,
    )


def heads(
    chat,
    pair: Pair,
    *,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Patching:
    """Patch each head's output (every position), for every layer × head: ``[L, H]``."""
    H = chat.n_heads
    return _sweep(
        chat,
        pair,
        "heads",
        H,
        lambda li: patch_heads(chat, pair, li, list(range(H))),
        should_stop,
        progress,
    )
