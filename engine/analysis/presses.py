"""KV-cache presses as NVIDIA's kvpress defines them: pure selections over scores.

A press runs once, after the prefill of a context of n tokens, and keeps in every layer
and K/V head the ``n_kept = int(n · (1 − r))`` positions with the highest score at
compression ratio r (kvpress ``ScorerPress.compress``: ``scores.topk(n_kept)``; here ties
go to the earlier position, so a test can state the kept set exactly). What follows the
context (the question, the answer) is read over the compressed cache and never pressed,
kvpress's pipeline default. Scores are ``(L, H_kv, n)``; attention inputs are the
prefill's α per query head ``(L, H, …, n)``, H = g · H_kv. Each score follows the file of
kvpress (github.com/NVIDIA/kvpress, ``kvpress/presses/``, commit 8bb29b9) named beside it:

- ``full``: every position (ratio 0 of any press).
- ``random`` (``random_press.py``): uniform scores from a seeded generator.
- ``streaming_llm`` (``streaming_llm_press.py``, Xiao et al. 2023): score 1 but for
  positions n_sink … n_sink + n_pruned − 1, so the first ``n_sink`` (4) sinks and the
  most recent run are kept; keys keep their text positions (no re-rotation, as kvpress
  without ``KeyRerotationPress``).
- ``observed_attention`` (``observed_attention_press.py``, H2O-like, Zhang et al. 2023):
  s_j = Σ_i α_ij / (n − j), the attention key j received from the context's queries
  divided by how many of them could see it, averaged over the g query heads of a K/V head.
- ``tova`` (``tova_press.py``, Oren et al. 2024): the last context query's α over the
  other keys, averaged over all heads of the layer (the same set for every K/V head);
  the last position itself scores max + 1.
- ``snapkv`` (``snapkv_press.py``, Li et al. 2024): the last w = 64 context queries (the
  observation window) averaged, smoothed by a mean pool of width 5 (zero padding
  counted, ``avg_pool1d``), averaged over the g query heads; the window scores max + 1.
- ``snapkv_question``: SnapKV's score with the question as its observation window (the
  question's queries over the context keys, read in the uncompressed prefill of context
  and question), as the SnapKV paper places the window; kvpress reaches it by
  compressing with the question in the context, which its README notes favours SnapKV.
  Every context position is scored; the question itself is not pressed.
- ``knorm`` (``knorm_press.py``, Devoto et al. 2024): s_j = −‖k_j‖ (low key norm kept).
- ``duo_attention`` (``duo_attention_press.py``, Xiao et al. 2024): head-wise. The K/V
  heads with the highest retrieval score keep every position; the others keep sinks plus
  a recent window. kvpress takes the share of streaming heads as its parameter; here the
  ratio r sets it: half the budget M·n_kept (M = L·H_kv heads) goes to R = ⌊M(1 − r)/2⌋
  retrieval heads, the rest is shared equally by the streaming heads (4 sinks + window).
  Head scores: kvpress's ``duo_attention_on_the_fly`` (:func:`duo_head_scores`).
- ``retrieval_heads``: the same head-wise rule, with the heads chosen by their measured
  retrieval score (Wu et al. 2024; ``python -m engine.evaluate retrieval_heads``: the
  share of copied needle tokens whose most-attended key is the token copied), a K/V head
  scoring the highest of its g query heads: DuoAttention's idea with the retrieval-head
  measure the issue asks for in place of kvpress's proxy. Not a kvpress press.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from engine.errors import InputError

RATIOS = (0.0, 0.25, 0.5, 0.75, 0.875)
N_SINK = 4  # StreamingLLMPress.n_sink, and the streaming heads' sinks
SNAPKV_WINDOW = 64  # SnapKVPress.window_size
SNAPKV_KERNEL = 5  # SnapKVPress.kernel_size


@dataclass
class Observed:
    """What one prefill of context + question saw, per layer, for every press to score.

    ``received`` ``(L, H, n)``: Σ over the context's queries of α_ij on context key j;
    ``window`` ``(L, H, w, n)``: the last w context queries' α over the context keys;
    ``question`` ``(L, H, T_q, n)``: the question's queries' α over the context keys;
    ``key_norms`` ``(L, H_kv, n)``; ``head_scores`` ``(L, H_kv)``: kvpress's on-the-fly
    retrieval score per K/V head (higher: more a retrieval head); ``retrieval_scores``
    ``(L, H_kv)``: the measured retrieval-head score (:func:`kv_head_scores`), or None.
    """

    received: torch.Tensor
    window: torch.Tensor
    question: torch.Tensor
    key_norms: torch.Tensor
    head_scores: torch.Tensor
    retrieval_scores: torch.Tensor | None = None

    @property
    def n(self) -> int:
        return self.key_norms.shape[-1]

    @property
    def groups(self) -> int:
        return self.received.shape[1] // self.key_norms.shape[1]


def check_ratio(ratio) -> float:
    """``ratio`` as a float in [0, 1), or an InputError."""
    ok = isinstance(ratio, int | float) and not isinstance(ratio, bool)
    if not ok or not math.isfinite(ratio) or not 0.0 <= ratio < 1.0:
        raise InputError("press.ratio", value=ratio)
    return float(ratio)


def n_kept(n: int, ratio: float) -> int:
    """Positions a press keeps of n: int(n · (1 − r)), as kvpress rounds."""
    return int(n * (1 - check_ratio(ratio)))


def ratio_for_budget(budget: int, n: int) -> float:
    """The compression ratio that keeps ``budget`` of ``n`` context tokens."""
    if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= n:
        raise InputError("press.budget", budget=budget, n=n)
    return 1.0 - budget / n


def keep_top(scores: torch.Tensor, ratio: float) -> torch.Tensor:
    """Bool ``(…, n)``: the ``n_kept`` highest scores of each row (ties: earlier first)."""
    n = scores.shape[-1]
    k = n_kept(n, ratio)
    order = torch.sort(scores, dim=-1, descending=True, stable=True).indices[..., :k]
    return torch.zeros(scores.shape, dtype=torch.bool).scatter_(-1, order, True)


def _per_kv_head(s: torch.Tensor, groups: int) -> torch.Tensor:
    """``(L, H, n)`` → ``(L, H_kv, n)``: the mean over each K/V head's g query heads."""
    return s.unflatten(1, (-1, groups)).mean(2)


def _keep_last(s: torch.Tensor, last: int) -> torch.Tensor:
    """kvpress's ``F.pad(scores, (0, last), value=scores.max() + 1)``, per layer."""
    top = s.amax(dim=(1, 2), keepdim=True).expand(*s.shape[:2], last) + 1
    return torch.cat([s, top], dim=-1)


def random_scores(obs: Observed, ratio: float, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(int(seed))
    return torch.rand(obs.key_norms.shape, generator=g)


def streaming_llm_scores(obs: Observed, ratio: float, n_sink: int = N_SINK) -> torch.Tensor:
    n = obs.n
    if n <= n_sink:
        raise InputError("press.too_short", n=n, need=n_sink + 1)
    pruned = n - n_kept(n, ratio)
    s = torch.ones(obs.key_norms.shape)
    s[..., n_sink : n_sink + pruned] = 0
    return s


def observed_attention_scores(obs: Observed, ratio: float) -> torch.Tensor:
    n = obs.n
    seen_by = torch.arange(n, 0, -1, dtype=obs.received.dtype)  # queries i ≥ j
    return _per_kv_head(obs.received / seen_by, obs.groups)


def tova_scores(obs: Observed, ratio: float) -> torch.Tensor:
    last = obs.window[:, :, -1, :-1].mean(1, keepdim=True)  # (L, 1, n − 1)
    return _keep_last(last.expand(-1, obs.key_norms.shape[1], -1), 1)


def _snapkv(rows: torch.Tensor, groups: int, kernel: int) -> torch.Tensor:
    s = rows.mean(dim=-2)  # (L, H, n')
    s = F.avg_pool1d(s, kernel_size=kernel, padding=kernel // 2, stride=1)
    return _per_kv_head(s, groups)


def snapkv_scores(obs: Observed, ratio: float, window: int = SNAPKV_WINDOW) -> torch.Tensor:
    if obs.n <= window or obs.window.shape[2] < window:
        raise InputError("press.too_short", n=obs.n, need=window + 1)
    rows = obs.window[:, :, -window:, :-window]
    return _keep_last(_snapkv(rows, obs.groups, SNAPKV_KERNEL), window)


def snapkv_question_scores(obs: Observed, ratio: float) -> torch.Tensor:
    if obs.question.shape[2] == 0:
        raise InputError("press.empty_question")
    return _snapkv(obs.question, obs.groups, SNAPKV_KERNEL)


def knorm_scores(obs: Observed, ratio: float) -> torch.Tensor:
    return -obs.key_norms


def duo_attention_keep(
    obs: Observed, ratio: float, n_sink: int = N_SINK, scores: torch.Tensor | None = None
) -> torch.Tensor:
    """Bool ``(L, H_kv, n)``: retrieval heads keep all, streaming heads sinks + window;
    the heads ranked by ``scores`` ``(L, H_kv)`` (default: ``obs.head_scores``)."""
    heads = (obs.head_scores if scores is None else scores).flatten()
    m, n = heads.numel(), obs.n
    budget = m * n_kept(n, ratio)
    r = math.floor(m * (1 - ratio) / 2) if ratio > 0 else m
    each = (budget - r * n) // (m - r) if r < m else n
    sinks = min(n_sink, each)
    kept = torch.zeros(m, n, dtype=torch.bool)
    kept[:, :sinks] = True
    if each > sinks:
        kept[:, n - (each - sinks) :] = True
    retrieval = torch.sort(heads, descending=True, stable=True).indices[:r]
    kept[retrieval] = True
    return kept.view(obs.key_norms.shape)


SCORES: dict[str, Callable[[Observed, float], torch.Tensor]] = {
    "random": random_scores,
    "streaming_llm": streaming_llm_scores,
    "observed_attention": observed_attention_scores,
    "tova": tova_scores,
    "snapkv": snapkv_scores,
    "snapkv_question": snapkv_question_scores,
    "knorm": knorm_scores,
}
PRESSES = ("full", *SCORES, "duo_attention", "retrieval_heads")


def kv_head_scores(per_head, groups: int) -> torch.Tensor:
    """Measured per-query-head scores ``(L, H)`` → ``(L, H_kv)``: each K/V head scores the
    highest of its g query heads (a K/V head whose keys one retrieval head reads must keep
    them all)."""
    s = torch.as_tensor(per_head, dtype=torch.float32)
    return s.unflatten(1, (-1, groups)).amax(2)


def keep(name: str, obs: Observed, ratio: float, *, seed: int = 0) -> torch.Tensor:
    """Bool ``(L, H_kv, n)``: the context positions press ``name`` keeps at ``ratio``
    (``seed``: the random press's draw)."""
    if name not in PRESSES:
        raise InputError("press.unknown", name=name, known=", ".join(PRESSES))
    ratio = check_ratio(ratio)
    if name == "full" or ratio == 0.0:
        return torch.ones(obs.key_norms.shape, dtype=torch.bool)
    if name == "duo_attention":
        return duo_attention_keep(obs, ratio)
    if name == "retrieval_heads":
        if obs.retrieval_scores is None:
            raise InputError("press.no_retrieval_scores")
        return duo_attention_keep(obs, ratio, scores=obs.retrieval_scores)
    if name == "random":
        return keep_top(random_scores(obs, ratio, seed), ratio)
    return keep_top(SCORES[name](obs, ratio), ratio)


def duo_head_scores(q_mean: torch.Tensor, k_mean: torch.Tensor, rotate, q_len: int = 500):
    """kvpress's ``duo_attention_on_the_fly``: per layer the mean query ``(L, H, d)`` and
    mean key ``(L, H_kv, d)`` of a text (pre-RoPE) are repeated at positions 0 … q_len − 1
    and rotated (``rotate(x, positions)``); the last query's attention over those keys is
    cumulated and its mean over keys is the head's score, averaged over its g query
    heads. ``(L, H_kv)``: attention spread back over the text scores high (retrieval),
    attention on the most recent keys low (streaming)."""
    n_layers, h, d = q_mean.shape
    g = h // k_mean.shape[1]
    pos = torch.arange(q_len)
    q = rotate(q_mean[:, :, None].expand(-1, -1, q_len, -1), pos)[:, :, -1:]  # (L, H, 1, d)
    k = rotate(k_mean[:, :, None].expand(-1, -1, q_len, -1), pos)  # (L, H_kv, q_len, d)
    k = k.repeat_interleave(g, dim=1)
    alpha = torch.softmax((q @ k.transpose(-1, -2)) / math.sqrt(d), dim=-1)[:, :, 0]
    s = torch.cumsum(alpha, dim=-1).mean(-1)  # (L, H)
    return s.view(n_layers, -1, g).mean(-1)
