"""KV-cache policies: which past positions a decoder keeps while it writes.

Pure functions over positions, so a test (or a page) can state exactly what each policy
keeps; :class:`engine.models.chat.Decoder` applies them inside its decoding loop.

- ``full``: every position.
- ``window``: the last w positions (a sliding window; the first tokens are evicted
  once the text is longer than w).
- ``sinks``: StreamingLLM (Xiao et al. 2023, arXiv 2309.17453): the first s positions
  (the "attention sinks") plus the last w. As in its code (``enable_streaming_llm``,
  ``pos_shift``), keys are cached before RoPE and rotated at their position *inside the
  cache* (0 … |cache| − 1), not at their position in the text, so the model never sees
  a relative distance larger than it was trained on.
- ``h2o``: Heavy-Hitter Oracle (Zhang et al. 2023, arXiv 2306.14048): the ``budget``
  positions with the highest accumulated attention plus the last w. Here one set of
  positions is kept for every layer and head (the score is the attention a position
  received, averaged over layers and heads and summed over steps), so one ``kept`` list
  says what the cache holds; the paper keeps a set per head.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from engine.errors import InputError
from engine.params import Param

POLICIES = ("full", "window", "sinks", "h2o")
MAX_CACHE = 4096  # tokens: above the longest text any page or bench runs
MAX_SINKS = 16  # StreamingLLM uses 4; more than a handful is no longer a "sink"


@dataclass(frozen=True)
class CachePolicy:
    name: str = "full"
    window: int = 0  # the most recent positions kept (window, sinks, h2o)
    sinks: int = 0  # first positions kept (sinks)
    budget: int = 0  # heavy hitters kept (h2o)

    @property
    def size(self) -> int | None:
        """The most positions the cache holds under this policy (None: unbounded)."""
        if self.name == "full":
            return None
        extra = {"window": 0, "sinks": self.sinks, "h2o": self.budget}[self.name]
        return self.window + extra

    @property
    def cache_positions(self) -> bool:
        """True when keys are rotated at their slot in the cache, not their text position."""
        return self.name == "sinks"

    def check(self, n_prompt: int | None = None) -> CachePolicy:
        """This policy, or an InputError naming the value out of range.

        With ``n_prompt``, a cache larger than the prompt is refused too: it would hold
        the whole prompt and the comparison with the full cache would start empty.
        """
        if self.name not in POLICIES:
            raise InputError("cache.unknown_policy", name=self.name, known=", ".join(POLICIES))
        if self.name == "full":
            return self
        _in_range("cache.window", self.window, 1, MAX_CACHE)
        if self.name == "sinks":
            _in_range("cache.sinks", self.sinks, 1, MAX_SINKS)
        if self.name == "h2o":
            _in_range("cache.budget", self.budget, 1, MAX_CACHE)
        if n_prompt is not None and self.size > n_prompt:
            raise InputError("cache.larger_than_prompt", size=self.size, n=n_prompt)
        return self

    def describe(self) -> dict:
        return {
            "name": self.name,
            "window": self.window,
            "sinks": self.sinks,
            "budget": self.budget,
            "size": self.size,
            "rope_positions": "cache" if self.cache_positions else "text",
        }


FULL = CachePolicy()

# The policy as the chat card's options, declared once: the card checks a page's, a URL's
# or a notebook's values against them, and a page's inputs read their bounds here.
PARAMS = (
    Param("policy", "KV-cache policy", "full", choices=POLICIES),
    Param("window", "Recent positions kept", 0, 0, MAX_CACHE, help="window, sinks, h2o"),
    Param("sinks", "First positions kept", 0, 0, MAX_SINKS, help="sinks"),
    Param("budget", "Heavy hitters kept", 0, 0, MAX_CACHE, help="h2o"),
)


def of(policy) -> CachePolicy:
    """``policy`` as a checked CachePolicy: None (the full cache), a CachePolicy, or the
    chat card's options by name (``{"policy": "sinks", "window": 16, "sinks": 4}``), each
    checked against its :data:`PARAMS` entry before the policy's own rules."""
    if policy is None:
        return FULL
    if isinstance(policy, CachePolicy):
        return policy.check()
    if not isinstance(policy, Mapping) or set(policy) - {p.name for p in PARAMS}:
        raise InputError("cache.bad_options", known=", ".join(p.name for p in PARAMS))
    name, window, sinks, budget = (p.check(policy.get(p.name, p.default)) for p in PARAMS)
    return CachePolicy(name, window=window, sinks=sinks, budget=budget).check()


def _in_range(key: str, value, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(key, low=low, high=high, value=value)


def keep(policy: CachePolicy, n_tokens: int, scores=None) -> list[int]:
    """Positions 0 … n_tokens − 1 kept by ``policy``, ascending.

    The newest position, n_tokens − 1, is always kept: it is the query's own key.
    ``scores`` (h2o only): accumulated attention per position, length n_tokens; a
    position already evicted carries −inf and is never taken back.
    """
    n = n_tokens
    if policy.name == "full":
        return list(range(n))
    recent = list(range(max(0, n - policy.window), n))
    if policy.name == "window":
        return recent
    if policy.name == "sinks":
        return list(range(min(policy.sinks, recent[0] if recent else n))) + recent
    if policy.name == "h2o":
        if scores is None or len(scores) != n:
            raise ValueError(f"h2o needs one score per position ({n}); got {scores!r}")
        older = [i for i in range(n - len(recent)) if float(scores[i]) != -math.inf]
        # Highest score first; on a tie the earlier position (it has been read longer).
        heavy = sorted(older, key=lambda i: (-float(scores[i]), i))[: policy.budget]
        return sorted(heavy) + recent
    raise InputError("cache.unknown_policy", name=policy.name, known=", ".join(POLICIES))
