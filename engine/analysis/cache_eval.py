"""What a KV-cache policy costs: teacher-forced next-token prediction on a real text under
a :class:`~engine.models.cache_policy.CachePolicy`, compared with the full cache.

The text x_0 … x_{N−1} is read as a decoder reads it while it writes: position t is the
query, the policy chooses the positions kept, ``keep(policy, t + 1, scores)`` (always
including t itself), the query attends over those alone, and the model predicts x_{t+1}.
This is :class:`engine.models.chat.Decoder`'s step, teacher-forced, with these measures
over the predicted positions t = 0 … N − 2 (p = full cache, q = the policy):

- agreement = mean_t [argmax p_t = argmax q_t]  (next-token agreement with the full cache);
- KL        = mean_t Σ_v p_t(v) (ln p_t(v) − ln q_t(v))  (nats, KL(full ‖ policy));
- perplexity = exp(−mean_t ln q_t(x_{t+1}))  (``ppl``; ``ppl_full`` with p).

Each measure is also given over the positions after the first eviction alone
(``*_evicted``): before it, the policy's cache *is* the full cache.

**The evaluation loop.** Reading the text one token at a time would reread all the
weights at every token (≈ 30 ms a token on one CPU thread). Here C positions are read at
once, layer by layer, with an explicit per-layer K/V history of every position and a
mask M[t, j] = 1 iff j ∈ keep(policy, t + 1): a position the policy evicts is never used
again (no policy takes one back), so this is exactly what a cache holding only the kept
positions computes, for any C. Keys are rotated (RoPE) at their text position; under
StreamingLLM (``policy.cache_positions``) the kept set is the first s positions plus a
run ending at t, and the cache slots are re-assigned as its code does: key j sits in
slot rank(j), the query in slot |kept| − 1. Inside the run the slot distance equals the
text distance, and a sink has rank(j) = j, so its score is the query rotated at slot
|kept| − 1 against the key rotated at j: two query rotations give every score exactly.

H2O's kept set depends on the attention the earlier positions received in every layer,
so its positions are read ``h2o_interval`` at a time (1: one by one, exactly the
Decoder's step; larger: faster, but the heavy hitters are then chosen from scores up to
that many positions stale).

All policies of one run advance together with the full cache, block by block, so the KL
needs no stored distributions; a policy that has evicted nothing yet shares the full
cache's numbers. Each policy holds the K/V of every position, 2 · L · H_kv · d · 4 bytes
a token (46 KB for SmolLM2: 94 MB for 2k tokens). Cost: two model passes over the text, in
bfloat16 products, for one policy (≈ 13 s of one CPU thread for 2k tokens, bench/RESULTS.md).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from engine import gate
from engine.errors import InputError
from engine.models import chat as chat_model
from engine.models import llama, precision
from engine.models.cache_policy import MAX_CACHE, CachePolicy, keep

MAX_EVAL_TOKENS = 4096
CHUNK = 128  # positions read at once: large enough to amortise the weights, small for memory


@dataclass
class _Stream:
    """One policy's reading of the text: its per-layer K/V history and H2O scores."""

    policy: CachePolicy
    keys: list  # per layer (H_kv, N, d), rotated at text positions
    values: list  # per layer (H_kv, N, d)
    scores: np.ndarray  # H2O: attention received, mean over layers and heads, Σ over queries
    alive: np.ndarray  # positions read and not evicted
    shared: bool = True  # has evicted nothing yet: identical to the full cache
    kept_tokens: list = field(default_factory=list)
    last_kept: list = field(default_factory=list)
    evicted_from: int | None = None
    nll: list = field(default_factory=list)
    kl: list = field(default_factory=list)
    agree: list = field(default_factory=list)


def _new_stream(chat, policy: CachePolicy, n: int) -> _Stream:
    shape = (chat.n_kv_heads, n, chat.head_dim)
    return _Stream(
        policy=policy,
        keys=[torch.zeros(shape) for _ in range(chat.n_layers)],
        values=[torch.zeros(shape) for _ in range(chat.n_layers)],
        scores=np.zeros(n),
        alive=np.zeros(n, dtype=bool),
    )


def _keeps(stream: _Stream, t0: int, t1: int) -> list[np.ndarray]:
    """keep(policy, t + 1, scores) for t in [t0, t1), updating who is still in the cache.

    The scores are those accumulated before t0 (a position read inside the block counts
    0, an evicted one −inf, as the Decoder's are)."""
    out = []
    for t in range(t0, t1):
        stream.alive[t] = True
        scores = None
        if stream.policy.name == "h2o":
            scores = np.where(stream.alive[: t + 1], stream.scores[: t + 1], -math.inf)
        kept = np.asarray(keep(stream.policy, t + 1, scores), dtype=np.int64)
        stream.alive[: t + 1] = False
        stream.alive[kept] = True
        out.append(kept)
    return out


def _forward(chat, stream: _Stream, ids: Sequence[int], t0: int, keeps, *, scores: bool):
    """Positions t0 … t0 + C − 1 through every layer, each query over its kept positions.

    Writes their K/V into ``stream``. With ``scores`` (H2O needs them) also adds their
    attention to its H2O scores and returns what each query gave each key, the mean over
    layers and heads of α ``(C, n)``, with the n key positions it is over; the first item
    returned is the log-probabilities ``(C, V)``."""
    C = len(ids)
    rows = torch.arange(t0, t0 + C)
    cols_np = np.unique(np.concatenate(keeps))  # every key some query of the block reads
    n = len(cols_np)
    # a run of positions is read as a view; anything else (sinks + window, H2O) gathered
    cols = slice(cols_np[0], cols_np[-1] + 1) if cols_np[-1] - cols_np[0] + 1 == n else None
    cols = torch.from_numpy(cols_np) if cols is None else cols
    mask = torch.full((C, n), -math.inf)
    for r, kept in enumerate(keeps):
        mask[r, np.searchsorted(cols_np, kept)] = 0.0
    cos, sin = llama.rotary(chat.model, rows)  # (C, d)
    sinks = None
    if stream.policy.cache_positions:
        sinks, cos_s, sin_s = _sink_slots(chat.model, keeps, t0, cols_np)
    received = torch.zeros(C, n) if scores else None
    scale = chat.head_dim**-0.5

    def attend(li, q, k, v):
        stream.keys[li][:, t0 : t0 + C] = llama.rope(k.transpose(0, 1), cos, sin)
        stream.values[li][:, t0 : t0 + C] = v.transpose(0, 1)
        K, V = stream.keys[li][:, cols], stream.values[li][:, cols]  # (H_kv, n, d)
        q = q.transpose(0, 1)  # (H, C, d)
        qr = llama.rope(q, cos, sin)
        if sinks is not None:
            # [q at t, q at its slot] · [k_j off the sinks, k_j on them]: one product
            # gives each key the score of its own rotation
            qr = torch.cat([qr, llama.rope(q, cos_s, sin_s)], dim=-1)  # (H, C, 2d)
            K = torch.cat([K * ~sinks, K * sinks], dim=-1)  # (H_kv, n, 2d)
        # without scores, torch's fused kernel: the same softmax(e) v, α never formed
        o, alpha = llama.attention(qr, K, V, scale=scale, mask=mask, weights=scores)
        if scores:
            received.add_(alpha.sum(0))  # (C, n)
        return o.transpose(0, 1)  # (C, H, d)

    logp = torch.log_softmax(llama.forward(chat.model, ids, attend), dim=-1)
    if not scores:
        return logp, None
    received = (received / (chat.n_layers * chat.n_heads)).double().numpy()
    stream.scores[cols_np] += received.sum(0)
    return logp, (received, cols_np)


def _sink_slots(model, keeps, t0: int, cols_np: np.ndarray):
    """StreamingLLM's slots: key j sits in slot rank(j) among the kept, the query in slot
    |kept| − 1. Inside the recent run slot distance = text distance; where they differ,
    j must be a leading sink (rank j = j), scored with the query rotated at its slot.

    Returns the sink columns ``(n, 1)`` (bool) and cos/sin of each query's slot ``(C, d)``.
    A row that has evicted nothing has its slot at t, so both rotations agree there."""
    slot_q = torch.zeros(len(keeps), dtype=torch.long)
    shifted = []
    for r, kept in enumerate(keeps):
        rank = np.arange(len(kept))
        moved = kept[(t0 + r - kept) != (len(kept) - 1 - rank)]
        if not np.array_equal(moved, rank[: len(moved)]):
            raise ValueError("cache positions need the kept set to be sinks + a recent run")
        slot_q[r] = len(kept) - 1
        shifted.append(moved)
    sink_pos = np.unique(np.concatenate(shifted))
    for r, (kept, moved) in enumerate(zip(keeps, shifted, strict=True)):
        # a row with its slot off t must read every sink column at its slot
        if slot_q[r] != t0 + r and not np.isin(np.intersect1d(kept, sink_pos), moved).all():
            raise ValueError("a sink column is also read inside a recent run")
    cos_s, sin_s = llama.rotary(model, slot_q)
    return torch.from_numpy(np.isin(cols_np, sink_pos))[:, None], cos_s, sin_s


def _share(stream: _Stream, full: _Stream, t0: int, t1: int, received, r0: int) -> None:
    """A policy that has evicted nothing so far holds exactly the full cache's K/V, and
    its positions have received exactly the full cache's attention (``received``: the
    full cache's block, whose row r0 is position t0)."""
    for li in range(len(full.keys)):
        stream.keys[li][:, t0:t1] = full.keys[li][:, t0:t1]
        stream.values[li][:, t0:t1] = full.values[li][:, t0:t1]
    if received is not None:
        rows, cols = received
        stream.scores[cols] += rows[r0 : r0 + t1 - t0].sum(0)


def _check_ids(chat, ids: Sequence[int], n_eval: int | None) -> list[int]:
    ids = chat_model.check_token_ids(chat, ids)
    n = len(ids) if n_eval is None else int(n_eval)
    if not 2 <= n <= min(len(ids), MAX_EVAL_TOKENS):
        raise InputError("text.too_many_tokens", n=n, limit=min(len(ids), MAX_EVAL_TOKENS))
    return ids[:n]


def evaluate_policies(
    chat,
    ids: Sequence[int],
    policies: Sequence[CachePolicy],
    *,
    n_eval: int | None = None,
    chunk: int = CHUNK,
    h2o_interval: int = 1,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict]:
    """Every policy in ``policies`` over the first ``n_eval`` tokens of ``ids``, in one
    run beside the full cache; one result dict each (see :func:`evaluate_policy`).

    ``progress(done, total)`` is called after each block of positions; when
    ``should_stop()`` returns True the run ends after the current block and the results
    cover the positions read so far (``stopped`` True).
    """
    said = dict(high=MAX_CACHE, chunk=chunk, interval=h2o_interval)
    chunk, h2o_interval = (
        gate.within(x, 1, MAX_CACHE, "cache.step", **said) for x in (chunk, h2o_interval)
    )
    policies = [p.check() for p in policies]
    ids = _check_ids(chat, ids, n_eval)
    n = len(ids) - 1  # positions that predict a next token
    h2o = any(p.name == "h2o" for p in policies)
    full = _new_stream(chat, CachePolicy("full"), n)
    streams = [_new_stream(chat, p, n) for p in policies]
    started, stopped, done = time.perf_counter(), False, 0
    target = torch.as_tensor(ids[1:])
    # bfloat16 products: ≈ 2× float32 on this CPU over blocks of positions, and the
    # full cache and every policy are read with the same arithmetic (precision.py: why).
    with torch.inference_mode(), precision.only(torch.bfloat16, unless_set=True):
        for t0 in range(0, n, chunk):
            if should_stop is not None and should_stop():
                stopped = True
                break
            t1 = min(t0 + chunk, n)
            logp_full, received = _forward(
                chat, full, ids[t0:t1], t0, _keeps(full, t0, t1), scores=h2o
            )
            nll_full = -logp_full.gather(1, target[t0:t1, None])[:, 0]
            full.nll += nll_full.tolist()
            best_full = logp_full.argmax(-1)
            for s in streams:
                step = h2o_interval if s.policy.name == "h2o" else chunk
                parts = []
                for b0 in range(t0, t1, step):
                    b1 = min(b0 + step, t1)
                    keeps = _keeps(s, b0, b1)
                    s.kept_tokens += [len(k) for k in keeps]
                    evicts = [len(k) < t + 1 for t, k in zip(range(b0, b1), keeps, strict=True)]
                    if s.shared and not any(evicts):
                        _share(s, full, b0, b1, received, b0 - t0)
                        parts.append(logp_full[b0 - t0 : b1 - t0])
                        continue
                    if s.shared:
                        s.evicted_from = b0 + evicts.index(True)
                        s.shared = False
                    logp, _ = _forward(
                        chat, s, ids[b0:b1], b0, keeps, scores=s.policy.name == "h2o"
                    )
                    parts.append(logp)
                    s.last_kept = keeps[-1].tolist()
                logp = torch.cat(parts)
                s.nll += (-logp.gather(1, target[t0:t1, None])[:, 0]).tolist()
                p_full = logp_full.exp()
                s.kl += (p_full * (logp_full - logp)).sum(-1).clamp_min(0).tolist()
                s.agree += (logp.argmax(-1) == best_full).tolist()
            done = t1
            if progress is not None:
                progress(done, n)
    seconds = time.perf_counter() - started
    return [_summary(s, full, done, stopped, seconds) for s in streams]


def _summary(s: _Stream, full: _Stream, done: int, stopped: bool, seconds: float) -> dict:
    nll, nll_full = np.array(s.nll), np.array(full.nll[:done])
    kl, agree = np.array(s.kl), np.array(s.agree, dtype=np.float64)
    after = slice(s.evicted_from if s.evicted_from is not None else done, done)

    def mean(a):
        return float(a.mean()) if a.size else float("nan")

    return {
        "policy": s.policy.describe(),
        "n_predicted": done,
        "agreement": mean(agree),
        "kl": mean(kl),
        "ppl": math.exp(mean(nll)) if done else float("nan"),
        "ppl_full": math.exp(mean(nll_full)) if done else float("nan"),
        "evicted_from": s.evicted_from,
        "agreement_evicted": mean(agree[after]),
        "kl_evicted": mean(kl[after]),
        "ppl_evicted": math.exp(mean(nll[after])) if nll[after].size else float("nan"),
        "ppl_full_evicted": math.exp(mean(nll_full[after])) if nll[after].size else float("nan"),
        "kept_tokens": s.kept_tokens[:done],
        "last_kept": s.last_kept if s.evicted_from is not None else list(range(done)),
        "per_position": {
            "nll": nll.astype(np.float32),
            "nll_full": nll_full.astype(np.float32),
            "kl": kl.astype(np.float32),
            "agree": agree.astype(bool),
        },
        "stopped": stopped,
        "seconds": seconds,
    }


def evaluate_policy(
    chat,
    ids: Sequence[int],
    policy: CachePolicy,
    *,
    n_eval: int | None = None,
    chunk: int = CHUNK,
    h2o_interval: int = 1,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """One policy against the full cache over the first ``n_eval`` tokens of ``ids``.

    Returns ``agreement``, ``kl`` (nats), ``ppl``, ``ppl_full``; the same after the first
    eviction (``*_evicted``, ``evicted_from``); ``kept_tokens`` (cache size at each
    position, after the position's own K/V is in), ``last_kept`` (positions kept at
    the last one), ``per_position`` arrays, ``policy``, ``n_predicted``, ``stopped``,
    ``seconds``.
    """
    return evaluate_policies(
        chat,
        ids,
        [policy],
        n_eval=n_eval,
        chunk=chunk,
        h2o_interval=h2o_interval,
        should_stop=should_stop,
        progress=progress,
    )[0]


def sweep_policies(budget: int, *, sinks: int = 4) -> list[CachePolicy]:
    """The policies compared at one cache size: window w = budget; StreamingLLM s sinks +
    a window of budget − s; H2O with half the cache heavy hitters, half recent (the
    split of the H2O paper)."""
    return [
        CachePolicy("window", window=budget),
        CachePolicy("sinks", window=budget - sinks, sinks=sinks),
        CachePolicy("h2o", window=budget - budget // 2, budget=budget // 2),
    ]


def budget_sweep(
    chat,
    ids: Sequence[int],
    budgets: Sequence[int],
    *,
    names: Sequence[str] = ("window", "sinks", "h2o"),
    sinks: int = 4,
    n_eval: int | None = None,
    chunk: int = CHUNK,
    h2o_interval: int = 1,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict]:
    """Each policy of ``names`` at each cache size in ``budgets`` (tokens held), in one
    run; one result per (budget, policy) with ``budget`` added, budgets ascending."""
    budgets = [
        gate.within(b, 1, MAX_CACHE, "cache.size", low=1, high=MAX_CACHE, value=b) for b in budgets
    ]
    plan = [
        (b, p) for b in sorted(budgets) for p in sweep_policies(b, sinks=sinks) if p.name in names
    ]
    results = evaluate_policies(
        chat,
        ids,
        [p for _, p in plan],
        n_eval=n_eval,
        chunk=chunk,
        h2o_interval=h2o_interval,
        should_stop=should_stop,
        progress=progress,
    )
    return [{"budget": b, **r} for (b, _), r in zip(plan, results, strict=True)]
