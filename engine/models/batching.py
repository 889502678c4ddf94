"""Continuous batching: one background thread writes every session's generation at once.

A class pressing Generate together sends thirty requests. Decoded one after another they
cost thirty times one, though a decoding step reads all the weights whether it serves one
sequence or thirty. The :class:`Batcher` keeps one batch of *active* requests and, at
every iteration (Orca's iteration-level scheduling, Yu et al. OSDI 2022; vLLM's
scheduler):

1. admits waiting requests, oldest first, while the batch has room (``max_batch``) and
   the iteration's prefill stays under ``prefill_tokens`` (vLLM's
   ``max_num_batched_tokens``), so a crowd joining cannot stall the others for long;
2. prefills the admitted prompts in one packed pass; a chat-template prompt starts from
   the system turn's K/V, computed once (a prefix cache, as vLLM's automatic prefix
   caching and SGLang's RadixAttention reuse shared prompt heads);
3. runs one decoding step for every active request (:func:`batch_decoder.step`); while
   more than ``FP16_ROWS`` sequences decode, the joiners' prompts ride in that step's
   forward instead of a pass of their own (:func:`batch_decoder.mixed`);
4. retires requests that wrote a stop token, reached their ``max_new_tokens`` or were
   cancelled; their slots go to the next waiting ones.

Each request keeps its own :class:`engine.models.chat.Writing` (sampling settings, seeded
``torch.Generator``, stop tokens, the maps being filled), so its Trace is the one
:func:`engine.models.chat.generate` would give it alone (tests/unit/test_chat_batch.py).
Only the full cache batches: a policy that evicts (window, sinks, H2O) keeps a different
set of positions per request and per step, and StreamingLLM re-rotates its keys at every
step; those run alone (:func:`batchable`).

This module is plain Python and PyTorch: the app's state layer makes one Batcher per
process and starts its thread.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from engine.models import batch_decoder as bd
from engine.models import cache_policy
from engine.models import chat as chat_lib
from engine.models.cache_policy import FULL, CachePolicy
from engine.trace import Trace

log = logging.getLogger(__name__)

# From :func:`measure` on this 2-core machine, one thread, 50 cached positions (CPU time):
# a step costs 39 ms for 1 sequence, 93 ms for 4, 164 ms for 16, 205 ms for 32, so
# tokens/s still grow at 32 (26 → 156); a class of 30 fits in one batch.
MAX_BATCH = 32
CAPACITY = 96  # waiting requests before a refusal: three more batches
# Prefill costs ≈ 3.6 ms a prompt token: 256 tokens (≈ 8 students' prompts after the
# shared system turn) hold the others' decoding for ≈ 1 s at most per iteration.
PREFILL_TOKENS = 256
PREFIXES = 4  # cached prompt heads (one per template in practice)
_PROBES = ("A", "  A", "\n\nA", "1")  # prompts whose templated ids share only the template head


def batchable(policy) -> bool:
    """True for the full cache (``policy``: a CachePolicy or the chat card's options by
    name, :func:`engine.models.cache_policy.of`). An evicting policy keeps its own
    positions per request and per step (StreamingLLM also re-rotates every key at every
    step), so it runs alone."""
    return cache_policy.of(policy).name == FULL.name


def template_prefix(chat) -> list[int]:
    """The ids every chat-template prompt starts with (the system turn and the user turn's
    opening): the longest common prefix of a few probe prompts' ids."""
    runs = [chat_lib.encode(chat, p) for p in _PROBES]
    n = next(
        (i for i, col in enumerate(zip(*runs, strict=False)) if len(set(col)) > 1),
        min(map(len, runs)),
    )
    return runs[0][:n]


@dataclass
class Ticket:
    """One request's place in the batcher: where it waits, how far it got, its Trace."""

    writing: chat_lib.Writing
    number: int
    submitted: float = field(default_factory=time.perf_counter)
    admitted: float | None = None
    prefill_ms: float = 0.0
    trace: Trace | None = None  # None when cancelled before it started
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)
    cancelled: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        """Leave the batch at the next step (or the line, if still waiting)."""
        self.cancelled.set()

    @property
    def steps(self) -> tuple[int, int]:
        """(tokens written, most it may write)."""
        return self.writing.steps, self.writing.max_new_tokens

    def result(self, timeout: float | None = None) -> Trace | None:
        """The Trace once finished (what it wrote if cancelled while running); raises
        what the batch raised, TimeoutError while it is not done."""
        if not self.done.wait(timeout):
            raise TimeoutError
        if self.error is not None:
            raise self.error
        return self.trace


class Full(Exception):
    """More requests wait than the batcher's capacity (``args[0]``: how many wait)."""


@dataclass
class _Prefix:
    ids: list[int]
    keys: list[torch.Tensor]  # per layer (H_kv, T0, d), rotated
    values: list[torch.Tensor]
    weights: torch.Tensor  # (L, H, T0, T0): the prefix's own prompt-map rows


class Batcher:
    """The server's one generation thread (see the module docstring).

    ``load`` returns the chat model; the thread calls it first, so the model is read in
    the background while the server starts (``ready`` is set once it is in).
    """

    def __init__(
        self,
        load: Callable[[], object],
        *,
        max_batch: int = MAX_BATCH,
        capacity: int = CAPACITY,
        prefill_tokens: int = PREFILL_TOKENS,
        prefix_cache: bool = True,
        threads: int | Callable[[], int] = 1,
    ):
        self.load, self.max_batch, self.capacity = load, max_batch, capacity
        # torch threads of this thread alone (OpenMP's count is per thread): a number, or a
        # function asked before every iteration (the app's: every core while no other job runs)
        self.threads = threads
        self._threads_now = 0
        self.prefill_tokens, self.prefix_cache = prefill_tokens, prefix_cache
        self.chat = None
        self.load_error: BaseException | None = None
        self.ready = threading.Event()
        self.started: float | None = None
        self._cv = threading.Condition()
        self._waiting: list[Ticket] = []
        self._active: list[Ticket] = []
        self._numbers = itertools.count(1)
        self._template: tuple[int, ...] = ()
        self._prefixes: OrderedDict[tuple[int, ...], _Prefix] = OrderedDict()
        self._w32: bd.Weights32 | None = None
        self._cache: bd.SlotCache | None = None
        self._thread: threading.Thread | None = None
        # Measured as it runs (exponential averages), for the waiting estimate.
        self.step_s = {1: 0.02}  # batch size → seconds a step
        self.prefill_s_per_token = 0.005
        self.stats = {"steps": 0, "tokens": 0, "largest_batch": 0, "prefix_hits": 0}
        self.stats["joined_in_step"] = 0  # requests whose prompt rode in a step's forward

    # -- the caller's side --------------------------------------------------------------
    def start(self) -> Batcher:
        """Start the thread (once); it loads the model, then serves requests."""
        with self._cv:
            if self._thread is None:
                self.started = time.perf_counter()
                self._thread = threading.Thread(target=self._run, name="batcher", daemon=True)
                self._thread.start()
        return self

    def submit(self, prompt: str, *, policy: CachePolicy = FULL, **options) -> Ticket:
        """Check and encode the request here (an InputError reaches the caller at once),
        then queue it. ``options``: :func:`engine.models.chat.generate`'s sampling ones."""
        if not batchable(policy):
            raise ValueError(f"the {policy.name} cache evicts per request: it runs alone")
        if not self.ready.is_set():
            raise RuntimeError("submit after ready: the model is still loading")
        writing = chat_lib.Writing(self.chat, prompt, policy=policy, **options)
        with self._cv:
            if len(self._waiting) >= self.capacity:
                raise Full(len(self._waiting))
            ticket = Ticket(writing, next(self._numbers))
            self._waiting.append(ticket)
            self._cv.notify()
        return ticket

    def position(self, ticket: Ticket) -> int:
        """1-based place in the line; 0 once admitted (or finished)."""
        with self._cv:
            return next((i + 1 for i, t in enumerate(self._waiting) if t is ticket), 0)

    def estimated_wait(self, ticket: Ticket) -> float | None:
        """Seconds until ``ticket`` finishes, from the step and prefill times measured so
        far: the prompts ahead of it, the steps until a slot frees, then its own steps."""
        with self._cv:
            waiting, active = list(self._waiting), list(self._active)
        step = self._step_s(min(self.max_batch, len(active) + len(waiting)))
        own = ticket.writing.max_new_tokens - ticket.writing.steps
        if ticket not in waiting:
            return own * step if ticket in active else 0.0
        i = waiting.index(ticket)
        ahead = sum(t.writing.p for t in waiting[: i + 1])
        k = i - (self.max_batch - len(active))  # < 0: a slot is free for it now
        slot = 0.0
        if k >= 0:
            left = sorted(t.writing.max_new_tokens - t.writing.steps for t in active)
            rounds, within = divmod(k, self.max_batch)
            per_round = max((t.writing.max_new_tokens for t in waiting), default=0)
            slot = (rounds * per_round + (left[within] if within < len(left) else 0)) * step
        return ahead * self.prefill_s_per_token + slot + own * step

    def load_info(self) -> dict:
        """How the batch stands, for a page or a benchmark."""
        with self._cv:
            return {
                "waiting": len(self._waiting),
                "active": len(self._active),
                "max_batch": self.max_batch,
                "capacity": self.capacity,
                "cache_bytes": self._cache.nbytes() if self._cache else 0,
                **self.stats,
            }

    # -- the thread ---------------------------------------------------------------------
    def _run(self) -> None:
        self._take_cores()
        try:
            self.chat = self.load()
            self._cache = bd.SlotCache(self.chat)
            self._template = tuple(template_prefix(self.chat))
        except Exception as exc:  # noqa: BLE001 - shown by whoever waits for the model
            log.exception("the batcher could not load the chat model")
            self.load_error = exc
            self.ready.set()
            return
        self.ready.set()
        while True:
            with self._cv:
                while not self._waiting and not self._active:
                    self._cv.wait()
                admitted = self._admit()
            try:
                self._iterate(admitted)
            except Exception as exc:  # noqa: BLE001 - every request in the batch hears it
                log.exception("a batched step failed")
                for t in self._active + admitted:
                    t.error = exc
                    t.done.set()
                self._active = []

    def _take_cores(self) -> None:
        """Set this thread's torch threads to what ``threads`` says now (a change only)."""
        n = self.threads() if callable(self.threads) else self.threads
        n = max(1, int(n))
        if n != self._threads_now:
            torch.set_num_threads(n)
            self._threads_now = n

    def _admit(self) -> list[Ticket]:
        """Waiting requests that join now (called holding the lock); cancelled ones go."""
        admitted, tokens = [], 0
        for t in [t for t in self._waiting if t.cancelled.is_set()]:
            self._waiting.remove(t)
            t.done.set()  # cancelled before it started: no Trace
        while self._waiting and len(self._active) + len(admitted) < self.max_batch:
            cost = self._uncached(self._waiting[0])
            if admitted and tokens + cost > self.prefill_tokens:
                break  # the next iteration takes it: the others keep decoding meanwhile
            admitted.append(self._waiting.pop(0))
            tokens += cost
        return admitted

    def _uncached(self, t: Ticket) -> int:
        """The prompt tokens a prefill computes for ``t``: a template prompt's system turn
        is cached (counting it let only 4 of a class's 56-token prompts join at once, where
        their ≈ 25 own tokens each let 10)."""
        cached = self.prefix_cache and self._has_template(t.writing.ids)
        return t.writing.p - (len(self._template) if cached else 0)

    def _has_template(self, ids: list[int]) -> bool:
        """True when ``ids`` start with the chat template's cached system turn."""
        key = self._template
        return bool(key) and len(ids) >= len(key) and tuple(ids[: len(key)]) == key

    def _iterate(self, admitted: list[Ticket]) -> None:
        if self._w32 is None:  # made on the first request: a server that never batches
            self._w32 = bd.Weights32(self.chat.model)  # (ATTENTION_STUDIO_BATCHING=0) spares it
        self._take_cores()
        self._retire(lambda t: t.cancelled.is_set(), stopped=True)
        t0 = time.perf_counter()
        parts, heads = self._prepare(admitted) if admitted else ([], [])
        b = len(self._active) + len(admitted)
        if parts and len(self._active) and b > bd.FP16_ROWS:
            # Joiners' prompts ride in the step's own forward: the weights are read once,
            # and the batch's other sequences do not stall for a prefill pass.
            self._active += admitted
            tokens, positions = self._queries()
            logits, weights, maps = bd.mixed(
                self.chat, self._w32, self._cache, tokens, positions, [p for _, p in parts]
            )
            self._prefilled(admitted, parts, heads, maps, time.perf_counter() - t0)
            self._take(logits, weights, positions, time.perf_counter() - t0)
            self.stats["joined_in_step"] += len(admitted)
            return
        if admitted:
            maps = bd.prefill(self.chat, self._w32, [p for _, p in parts]) if parts else []
            self._prefilled(admitted, parts, heads, maps, time.perf_counter() - t0)
            self._active += admitted
        self._retire(lambda t: t.cancelled.is_set(), stopped=True)
        if not self._active:
            return
        t0 = time.perf_counter()
        tokens, positions = self._queries()
        logits, weights = bd.step(self.chat, self._w32, self._cache, tokens, positions)
        self._take(logits, weights, positions, time.perf_counter() - t0)

    def _queries(self) -> tuple[list[int], list[int]]:
        """Each active sequence's next query token and its text position."""
        return (
            [t.writing.last for t in self._active],
            [len(t.writing.out_ids) - 1 for t in self._active],
        )

    def _take(self, logits, weights, positions, seconds: float) -> None:
        """Each sequence's logits and attention row into its Writing; the step's time."""
        b = len(self._active)
        for t, row, w, p in zip(self._active, logits, weights, positions, strict=True):
            t.writing.take(row, w[:, :, : p + 1], list(range(p + 1)))
        self.step_s[b] = 0.7 * self.step_s.get(b, seconds) + 0.3 * seconds
        self.stats["steps"] += 1
        self.stats["tokens"] += b
        self.stats["largest_batch"] = max(self.stats["largest_batch"], b)
        self._retire(lambda t: t.writing.done, stopped=False)

    def _prepare(self, admitted: list[Ticket]) -> tuple[list, list]:
        """The admitted prompts but their last tokens, each in the slot it will decode in
        (a template prompt after the cached system turn, copied in): the parts to prefill,
        and each request's cached head."""
        now = time.perf_counter()
        first = len(self._active)
        need = max(t.writing.p + t.writing.max_new_tokens for t in admitted + self._active)
        self._cache.ensure(first + len(admitted), need)
        parts, heads = [], []
        for i, t in enumerate(admitted):
            t.admitted = now
            ids = t.writing.ids[:-1]
            keys, values = self._cache.slot(first + i)
            head = self._prefix(ids) if t.writing.template else None
            heads.append(head)
            start = len(head.ids) if head is not None else 0
            if len(ids) > start:
                parts.append((t, bd.Part(ids[start:], start, keys, values)))
        self._copy_heads(first, heads)
        return parts, heads

    def _copy_heads(self, first: int, heads: list) -> None:
        """Each cached head into the slots of the requests that start with it: one copy a
        layer for all of them (a copy a layer per request cost ≈ 12 ms each, a class's 30
        prompts 0.35 s)."""
        for head in {id(h): h for h in heads if h is not None}.values():
            slots = torch.tensor([first + i for i, h in enumerate(heads) if h is head])
            n = len(head.ids)
            for store, held in ((self._cache.keys, head.keys), (self._cache.values, head.values)):
                for li in range(self.chat.n_layers):
                    store[li][slots, :, :n] = held[li]

    def _prefilled(self, admitted, parts, heads, maps, seconds: float) -> None:
        """Each admitted request's prompt map (its cached head's, then its own rows)."""
        got = {id(t): m for (t, _), m in zip(parts, maps, strict=True)}
        for t, head in zip(admitted, heads, strict=True):
            p = t.writing.p
            if p < 2:
                continue  # a one-token prompt has nothing to prefill
            w = torch.zeros(self.chat.n_layers, self.chat.n_heads, p - 1, p - 1)
            start = 0
            if head is not None:
                start = len(head.ids)
                w[:, :, :start, :start] = head.weights
            if id(t) in got:
                w[:, :, start:] = got[id(t)]
            t.writing.prefilled(w)
        for t in admitted:
            t.prefill_ms = seconds * 1e3
        n = sum(len(p.ids) for _, p in parts)
        if n:
            rate = seconds / n
            self.prefill_s_per_token = 0.7 * self.prefill_s_per_token + 0.3 * rate

    def _prefix(self, ids: list[int]) -> _Prefix | None:
        """The cached system turn these ids start with (computed on first use), or None."""
        if not self.prefix_cache:
            return None
        key = self._template
        if not self._has_template(ids):
            return None
        hit = self._prefixes.get(key)
        if hit is not None:
            self._prefixes.move_to_end(key)
            self.stats["prefix_hits"] += 1
            return hit
        hit = compute_prefix(self.chat, self._w32, list(key))
        self._prefixes[key] = hit
        while len(self._prefixes) > PREFIXES:
            self._prefixes.popitem(last=False)
        return hit

    def _retire(self, finished: Callable[[Ticket], bool], *, stopped: bool) -> None:
        """Finish the requests ``finished`` picks; keep the batch compact in its slots."""
        now = time.perf_counter()
        b = 0
        while b < len(self._active):
            t = self._active[b]
            if not finished(t):
                b += 1
                continue
            last = len(self._active) - 1
            if b != last:  # the last slot's sequence fills the hole
                moved = self._active[last]
                self._cache.move(last, b, len(moved.writing.out_ids))
                self._active[b] = moved
            self._active.pop()
            timings = {
                "prefill_ms": t.prefill_ms,
                "decode_ms": (now - (t.admitted or now)) * 1e3 - t.prefill_ms,
                "wait_ms": ((t.admitted or now) - t.submitted) * 1e3,
            }
            t.trace = t.writing.trace(stopped=stopped, timings=timings)
            t.done.set()

    def _step_s(self, b: int) -> float:
        """Seconds a step of b sequences takes: measured, or the nearest measured size."""
        if b in self.step_s:
            return self.step_s[b]
        near = min(self.step_s, key=lambda k: abs(k - b))
        return self.step_s[near] * max(1.0, b / near) ** 0.5


def compute_prefix(chat, w32: bd.Weights32, ids: list[int]) -> _Prefix:
    """The K/V and prompt-map rows of ``ids`` read alone (a prefix of later prompts)."""
    shape = (chat.n_kv_heads, len(ids), chat.head_dim)
    keys = [torch.zeros(shape) for _ in range(chat.n_layers)]
    values = [torch.zeros(shape) for _ in range(chat.n_layers)]
    (weights,) = bd.prefill(chat, w32, [bd.Part(ids, 0, keys, values)])
    return _Prefix(ids, keys, values, weights)


def measure(chat, sizes=(1, 2, 4, 8, 16, 24, 32), *, context: int = 50, steps: int = 5) -> dict:
    """CPU seconds a decoding step takes for each batch size (``context`` positions cached
    per sequence, the median of ``steps`` steps), and the prefill CPU seconds per prompt
    token: what ``MAX_BATCH`` and ``PREFILL_TOKENS`` are chosen from. Run it on one thread.
    CPU time (``time.thread_time``) is what a step costs this thread; on a machine shared
    with other work the wall time is longer by the load."""
    w32, cache = bd.Weights32(chat.model), bd.SlotCache(chat)
    ids = list(range(1000, 1000 + context))
    out = {"context": context, "threads": torch.get_num_threads(), "step_cpu_s": {}}
    for b in sizes:
        cache.ensure(b, context + steps + 1)
        times = []
        for s in range(steps + 1):
            t0 = time.thread_time()
            bd.step(chat, w32, cache, [ids[i % context] for i in range(b)], [context + s] * b)
            times.append(time.thread_time() - t0)
        out["step_cpu_s"][b] = round(sorted(times[1:])[steps // 2], 4)
    keys, values = cache.slot(0)
    t0 = time.thread_time()
    bd.prefill(chat, w32, [bd.Part(ids, 0, keys, values)])
    out["prefill_cpu_s_per_token"] = round((time.thread_time() - t0) / context, 5)
    out["tokens_per_cpu_s"] = {b: round(b / s, 1) for b, s in out["step_cpu_s"].items()}
    return out
