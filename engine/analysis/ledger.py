"""The eviction ledger: what a KV-cache policy loses, step by step, as the model writes.

The policy's decoder writes greedily (:class:`engine.models.chat.Decoder` under the policy);
beside it a full-cache decoder reads the same tokens (teacher-forced), so at step s both
have the same text and differ only in what their caches hold. At each step:

- ``evicted``: the text positions the policy's cache no longer holds (0 … n − 1 minus
  ``kept``), and the tokens written there;
- ``mass``: the attention the *full* cache puts on those positions at this step, the mean
  over layers and heads of Σ_{j evicted} α_full[l, h, j]: what the policy took away from
  the query (0 when nothing is evicted);
- ``kl``: KL(p_full ‖ p_policy) of the two next-token distributions, in nats (0 while the
  caches agree: the two decoders then compute the same numbers);
- ``full_token``: the token the full cache would write here, given the same text; the first
  step where it differs from the policy's (``first_divergence``) is where the policy starts
  writing another text.

Cost: two decoding steps per token (≈ 2 × 30 ms here) and two prefills of the prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.models import cache_policy
from engine.models import chat as chat_model


@dataclass
class Ledger:
    policy: dict
    n_prompt: int
    tokens: list[str]  # labels of prompt + written tokens
    written: list[str]  # the policy's tokens, one per step
    full_tokens: list[str]  # what the full cache would write at each step
    kept: list[list[int]]
    evicted: list[list[int]]
    mass: list[float]
    kl: list[float]
    first_divergence: int | None  # 0-based step, None when the two never differ
    seconds: float = 0.0
    stopped: bool = False
    extra: dict = field(default_factory=dict)


def _kl(full_logits, policy_logits) -> float:
    import torch  # heavy: kept out of start-up

    p = torch.log_softmax(full_logits.double(), -1)
    q = torch.log_softmax(policy_logits.double(), -1)
    return float((p.exp() * (p - q)).sum().clamp(min=0.0))


def ledger(
    chat,
    prompt: str,
    policy,
    *,
    template: bool = True,
    max_new_tokens: int = 20,
    should_stop=None,
) -> Ledger:
    """The policy's greedy generation of ``prompt`` with, at every step, what its cache had
    evicted, the full cache's attention on it and the KL between the two next-token
    distributions (module docstring). ``policy``: a CachePolicy or the chat card's options
    by name (:func:`engine.models.cache_policy.of`)."""
    import time

    import torch  # heavy: kept out of start-up

    started = time.perf_counter()
    max_new_tokens = chat_model.NEW_TOKENS.check(max_new_tokens)
    ids = chat_model.encode(chat, prompt, template=template)
    policy = cache_policy.of(policy).check(len(ids))
    stops = chat_model.stop_ids(chat)
    cut, full = chat_model.Decoder(chat, policy), chat_model.Decoder(chat, cache_policy.FULL)
    if len(ids) > 1:
        cut.prefill(ids[:-1])
        full.prefill(ids[:-1])
    text = list(ids)
    kept_rows, evicted_rows, mass, kl, full_next, stopped = [], [], [], [], [], False
    with torch.no_grad():
        while len(text) - len(ids) < max_new_tokens:
            if should_stop is not None and should_stop():
                stopped = True
                break
            logits_cut, _, kept = cut.step(text[-1])
            logits_full, w_full, _ = full.step(text[-1])  # w_full: (L, H, n) over every position
            n = len(text)
            gone = sorted(set(range(n)) - set(kept))
            on_gone = w_full[:, :, gone].sum(-1).mean() if gone else torch.tensor(0.0)
            kept_rows.append(list(kept))
            evicted_rows.append(gone)
            mass.append(float(on_gone))
            kl.append(_kl(logits_full, logits_cut))
            full_next.append(int(logits_full.argmax()))
            nxt = int(logits_cut.argmax())
            text.append(nxt)
            if nxt in stops:
                break
    labels = chat_model.token_labels(chat, text)
    written = labels[len(ids) :]
    full_tokens = [chat_model.token_label(chat, i) for i in full_next]  # each an alternative
    pairs = zip(text[len(ids) :], full_next, strict=True)
    differs = [s for s, (a, b) in enumerate(pairs) if a != b]
    return Ledger(
        policy=policy.describe(),
        n_prompt=len(ids),
        tokens=labels,
        written=written,
        full_tokens=full_tokens,
        kept=kept_rows,
        evicted=evicted_rows,
        mass=mass,
        kl=kl,
        first_divergence=differs[0] if differs else None,
        seconds=time.perf_counter() - started,
        stopped=stopped,
    )


def summary(led: Ledger) -> dict:
    """Means over the steps after the first eviction (before it the caches are one)."""
    after = [s for s, e in enumerate(led.evicted) if e]
    return {
        "steps": len(led.mass),
        "evicting_steps": len(after),
        "mass_mean": float(np.mean([led.mass[s] for s in after])) if after else 0.0,
        "kl_mean": float(np.mean([led.kl[s] for s in after])) if after else 0.0,
        "first_divergence": led.first_divergence,
    }
