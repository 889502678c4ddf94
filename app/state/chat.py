"""The chat model, loaded once per process, and the runs of the Chat model page.

One SmolLM2 is shared by every session (eval mode; attention comes back from each call,
nothing is stored on the module). The process's one :class:`engine.models.batching.Batcher`
loads it in its own thread as soon as this module is first used, and writes every
session's generation in one batch (one forward per decoding step): a class pressing
Generate together waits about as long as one student would, and the page shows each
request's place in line, an estimated wait, its progress and Stop. A generation under an
evicting cache policy, a head detection, a cache-policy sweep or a variant comparison goes
through the bounded queue (``kit.queue``) instead. ``ATTENTION_STUDIO_BATCHING=0`` sends
every generation through that queue, one at a time (bench/load.py compares the two).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import streamlit as st
from kit import queue
from kit.i18n import Lazy, t
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException

from engine import run as engine_run
from engine.analysis import cache_eval, heads
from engine.analysis import sinks as sink_measures
from engine.models import batch_process, batching, in_pretrained, registry
from engine.models import chat as chat_lib
from engine.variants import REGISTRY
from state import models

DEFAULT_PROMPT = "What is the capital of France?"
SAMPLINGS = ("greedy", "sample")


@dataclass(frozen=True)
class Request:
    """What the page asks the model to write (the queue's key is its repr)."""

    prompt: str = DEFAULT_PROMPT
    template: bool = True
    max_new_tokens: int = 20
    sampling: str = "greedy"
    temperature: float = 0.7
    top_k: int = 50
    top_p: float = 0.9
    seed: int = 0

    def sampling_kwargs(self) -> dict:
        """The engine's sampling arguments: greedy is temperature 0 (top-k, top-p unused)."""
        if self.sampling == "greedy":
            return dict(temperature=0.0, top_k=0, top_p=1.0, seed=self.seed)
        return dict(
            temperature=self.temperature, top_k=self.top_k, top_p=self.top_p, seed=self.seed
        )


def available() -> bool:
    return chat_lib.available()


def chat_dir() -> str:
    return str(chat_lib.CHAT_DIR)


def card_facts() -> dict:
    """The chat model's name, layers and heads as its card states them (no model loaded)."""
    card = models.card(registry.CHAT)
    return {"name": card.meta["display"], **card.config}


BATCHING = os.environ.get("ATTENTION_STUDIO_BATCHING", "1") != "0"
# The batch's torch threads (the sessions keep one each): a number, or "auto" (default):
# every core while the work queue runs no job, one as soon as it does. Measured for 30
# students on an AVX2 2-core machine: two threads 32.1 tokens/s against 24.3 with one; an
# earlier session measured two slower (76 against 94) while queue jobs held the cores.
BATCH_THREADS = os.environ.get("ATTENTION_STUDIO_BATCH_THREADS", "auto")
POLL_S = 0.25
RESULTS, RESULT_TTL_S = 32, 30 * 60  # finished generations kept, as kit.queue keeps its


# A real server batches in a process of its own (engine.models.batch_process: the page
# threads' Python no longer delays each step by waiting for the GIL; measured for 10
# students on a 2-core Xeon, p95 ≈ 16–22 s in a thread). AppTest and scripts keep the
# thread, and so does ATTENTION_STUDIO_BATCH_PROCESS=0.
BATCH_PROCESS = os.environ.get("ATTENTION_STUDIO_BATCH_PROCESS", "1") != "0"


@st.cache_resource(max_entries=1, show_spinner=False)
def server() -> batching.Batcher | batch_process.BatchProcess:
    """The process's one batcher; it starts loading the model at once, through the app's
    model cache, so the Transformer page listing SmolLM2 shares the same copy."""
    threads = batch_threads(BATCH_THREADS)
    if BATCH_PROCESS and st.runtime.exists():
        return batch_process.BatchProcess(_load_shared, threads=threads).start()
    return batching.Batcher(_load_shared, threads=threads).start()


def batch_threads(setting: str) -> int | Callable[[], int]:
    """The batch's threads from the setting: a fixed count, or (for "auto" or anything
    else) a function the batcher asks each iteration: every core while the work queue
    runs no job, else one."""
    if setting.strip().isdigit():
        return max(1, int(setting))
    jobs = queue.work_queue()
    return lambda: queue.WORKERS if jobs.running() == 0 else 1


def _load_shared():
    """The model from the batcher's thread (no session's page to draw the cache's spinner)."""
    with queue.pageless():
        return models.loaded(registry.CHAT)


def model():
    """The one SmolLM2 of this server process (waits while the batcher loads it)."""
    b = server()
    b.ready.wait()
    if b.load_error is not None:
        raise b.load_error
    return b.chat


def generating() -> Callable[[], int]:
    """How many generations the batch is writing or holds, asked from any thread (the
    batcher is captured here, in the page's thread)."""
    b = server()

    def count() -> int:
        info = b.load_info()
        return info["active"] + info["waiting"]

    return count


def wait_for_model():
    """:func:`model`, with a note on the page while the background load runs."""
    b = server()
    if not b.ready.is_set():
        note = st.empty()
        while not b.ready.wait(POLL_S):
            note.info(t("chat.loading_model", seconds=f"{time.perf_counter() - b.started:.0f}"))
        note.empty()
    return model()


def evaluation(key: str) -> dict | None:
    """One of the chat model's shipped evaluations (its card's ``EVALUATIONS``), or None;
    read whether or not the model is converted here (``registry.chat``)."""
    return registry.chat().evaluation(key)


def limits() -> dict:
    """The bounds the chat card states for the page's inputs (the card checks them again):
    each option's range or choices, the prompt's characters and its tokens (template
    included)."""
    card = models.card(registry.CHAT)
    bounds = {p.name: p.choices or (p.low, p.high) for p in card.options}
    # Sampling at temperature 0 would be greedy again: the sampler's lowest is above it.
    bounds["temperature"] = (chat_lib.MIN_TEMPERATURE, bounds["temperature"][1])
    return bounds | {"chars": card.limits.max_chars, "tokens": card.limits.max_tokens}


def policy(name: str = "full", window: int = 0, sinks: int = 0, budget: int = 0) -> dict:
    """A cache policy as the chat card's options (the card checks them: InputError)."""
    return {"policy": name, "window": window, "sinks": sinks, "budget": budget}


def generate(request: Request, cache=None):
    """The Trace of one generation (every step's attention row): in the class's batch, or
    alone through the queue when its cache policy evicts (the page says so)."""
    chat = model()
    cache = cache or policy()
    if BATCHING and batching.batchable(cache):  # checks the policy (InputError) at once
        return _batched(request, cache)
    if BATCHING:
        st.caption(t("chat.batch_alone", policy=cache["policy"]))
    # Two generations may show their progress on one page: each needs its own label.
    label = t("chat.queue_generate" if cache["policy"] == "full" else "chat.queue_cut")
    return queue.run(
        label,
        _generate,
        chat,
        request,
        cache,
        t("chat.progress_tokens"),
        key=repr((request, cache)),
        cancel_label=t("chat.stop"),
    )


def _generate(chat, request: Request, cache, unit: str, cancel, progress):

    should_stop = queue.stepper(cancel, progress, request.max_new_tokens, unit)
    return models.card(registry.CHAT).trace(
        request.prompt,
        model=chat,
        run=engine_run.Run(should_stop),
        template="chat" if request.template else "raw",
        max_new_tokens=request.max_new_tokens,
        read_map="no",  # the page draws the generation's own maps
        **cache,
        **request.sampling_kwargs(),
    )


@dataclass
class _Line:
    """The batch as this server's sessions see it: requests in flight by key (two sessions
    asking the same share one), who waits for which, and finished Traces (bounded)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    tickets: dict = field(default_factory=dict)  # key → Ticket in flight
    sessions: dict = field(default_factory=dict)  # session → key it waits for
    results: OrderedDict = field(default_factory=OrderedDict)  # key → (time, Trace)

    def cached(self, key: str):
        with self.lock:
            hit = self.results.get(key)
            if hit is None or time.monotonic() - hit[0] > RESULT_TTL_S:
                self.results.pop(key, None)
                return None
            self.results.move_to_end(key)
            return hit[1]

    def keep(self, key: str, trace) -> None:
        with self.lock:
            self.results[key] = (time.monotonic(), trace)
            while len(self.results) > RESULTS:
                self.results.popitem(last=False)

    def join(self, session: str, key: str, submit):
        """The ticket for ``key`` (submitted now unless in flight); a request this session
        left behind is cancelled when no other session waits for it."""
        with self.lock:
            old = self.sessions.get(session)
            self.sessions[session] = key
            if old is not None and old != key and old not in self.sessions.values():
                left = self.tickets.pop(old, None)
                if left is not None:
                    left.cancel()
            for s, k in [(s, k) for s, k in self.sessions.items() if s != session]:
                done = self.tickets.get(k)
                if done is not None and done.done.is_set():  # its waiter holds the ticket;
                    del self.sessions[s]  # one that went to another page mid-way never leaves
                    self.tickets.pop(k, None)
            ticket = self.tickets.get(key)
            # A ticket done while this session's run was interrupted (Stop, an edit) is its
            # answer; one that was stopped, or failed and was left, is asked again.
            if ticket is None or (ticket.done.is_set() and ticket.cancelled.is_set()):
                ticket = self.tickets[key] = submit()
            return ticket

    def alone(self, session: str, key: str) -> bool:
        """True when no other session waits for ``key`` (Stop may then cancel it)."""
        with self.lock:
            return all(k != key for s, k in self.sessions.items() if s != session)

    def leave(self, session: str, key: str) -> None:
        with self.lock:
            if self.sessions.get(session) == key:
                del self.sessions[session]
            if key not in self.sessions.values():
                self.tickets.pop(key, None)


@st.cache_resource(max_entries=1, show_spinner=False)
def _line() -> _Line:
    return _Line()


def _session() -> str:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "bare"


def _batched(request: Request, cache):
    """The request through the class's batch: its place in line and an estimated wait
    while it waits, its tokens while it is written, Stop; a rerun asking the same request
    gets the finished Trace at once."""
    key = repr((request, cache))
    line, b = _line(), server()
    slot = st.empty()  # one element, written or cached: the page below keeps its places
    hit = line.cached(key)
    if hit is not None:
        return hit
    session = _session()
    try:
        ticket = line.join(session, key, lambda: _submit(b, request))
    except batching.Full as full:
        slot.warning(t("chat.batch_full", waiting=full.args[0]))
        st.stop()
    stop_key = "chat-batch-stop-" + hashlib.sha1(key.encode()).hexdigest()[:10]
    if st.session_state.get(stop_key) and line.alone(session, key):
        ticket.cancel()
    box = slot.container()
    status, stop = box.empty(), box.empty()
    shown = None
    rerun = False
    try:  # a session closed while it waits leaves the line too (its run is stopped)
        while not ticket.done.wait(POLL_S):
            if shown is None:  # a request done within one poll shows no status or button
                stop.button(t("chat.stop"), key=stop_key)
            elif queue.pressed_meanwhile(stop_key) and line.alone(session, key):
                ticket.cancel()  # pressed in a fragment: its rerun waits behind this one
            shown = _show_place(status, b, ticket, shown)
        slot.empty()
        trace = ticket.result()
        if trace is not None and not trace.outputs["stopped"]:
            line.keep(key, trace)  # before leaving: a session asking the same finds it
    except RerunException:
        # Stop (or any edit) reruns the page: it waits again for this ticket, which Stop then
        # cancels with what it wrote. Left here, the rerun asked afresh and stopped that
        # ("Stopped before it started") while the first ran on to its end in the batch.
        rerun = True
        raise
    finally:
        if not rerun:
            line.leave(session, key)
    if trace is None:  # stopped before it joined the batch
        slot.info(t("chat.batch_cancelled"))
        st.stop()
    return trace


def _submit(b: batching.Batcher, request: Request):
    """The request into the batch, which writes with the full cache only (``batchable``)."""
    return b.submit(
        request.prompt,
        template=request.template,
        max_new_tokens=request.max_new_tokens,
        **request.sampling_kwargs(),
    )


def warm() -> None:
    """Write the page's default request once the model is in (the server's preload), so
    the first visitor's first view is answered from the finished batch at once; then the
    Cache policies section's default view."""
    b = server()
    b.ready.wait()
    if b.load_error is not None or not BATCHING:
        return
    request, cache = Request(), policy()
    ticket = _submit(b, request)
    ticket.done.wait()
    trace = ticket.result()
    if trace is not None and not trace.outputs["stopped"]:
        _line().keep(repr((request, cache)), trace)
    # The Cache policies section's default view (≈ 8 s of work: a cut generation and the
    # budget sweep), into the queue's result cache, so its first open is answered at once.
    cut = policy(**CACHE_DEFAULT)
    queue.prefetch(_generate, b.chat, request, cut, "", key=repr((request, cut)))
    n, budgets = SWEEP_DEFAULT
    own = own_ids(request)
    own = tuple(own[: n + 1]) if len(own) > n else None
    ids = list(own) if own is not None else text_ids()
    queue.prefetch(_sweep, b.chat, ids, n, budgets, "", key=repr((n, budgets, own)))


def _show_place(status, b: batching.Batcher, ticket, shown=None) -> tuple:
    """Where a request stands: its place in line, or its tokens, with the estimated wait.
    Drawn only when it differs from ``shown`` (a class of sessions polls at once); returns
    what is on the page now."""
    seconds = f"{b.estimated_wait(ticket) or 0:.0f}"
    position = b.position(ticket)
    if position:
        now = ("info", t("chat.batch_waiting", position=position, seconds=seconds), 0.0)
    else:
        done, total = ticket.steps
        others = max(0, b.load_info()["active"] - 1)
        text = t("chat.batch_writing", done=done, total=total, others=others, seconds=seconds)
        now = ("progress", text, min(1.0, done / total))
    kind, text, fraction = now
    if now != shown and kind == "info":
        status.info(text)
    elif now != shown:
        status.progress(fraction, text)
    return now


def step_rows(trace) -> list[dict]:
    """One row per generation step: the query, the token written, its probability, the cache."""
    out = trace.outputs
    n_prompt, tokens = out["n_prompt"], out["tokens"]
    return [
        {
            "step": s + 1,
            "query": tokens[n_prompt - 1 + s],
            "written": tokens[n_prompt + s],
            "log_prob": float(lp),
            "kv_tokens": int(out["kv_tokens"][s]),
            "kv_bytes": int(out["kv_bytes"][s]),
        }
        for s, lp in enumerate(out["log_probs"])
    ]


# ---- sinks ------------------------------------------------------------------------------


def sink_profile(weights, first: int) -> dict:
    """Mass on the first tokens, local width and entropy per layer × head (a few ms)."""
    return sink_measures.sink_profile(weights, first=min(first, weights.shape[-1]))


@st.cache_data(max_entries=16, show_spinner=Lazy("chat.spinner_control"))
def first_token_control(prompt: str, template: bool) -> dict:
    """The prompt run again with its first token replaced (two forward passes, < 1 s)."""
    return sink_measures.first_token_control(model(), prompt, template=template)


# ---- head types -------------------------------------------------------------------------

HEAD_TYPES = ("previous", "duplicate", "induction", "retrieval")
DETECT_SEED, DETECT_N = 0, heads.RANDOM_TOKENS  # TransformerLens's default: one [BOS, r, r]


def detect_heads() -> dict:
    """Previous-token, duplicate and induction scores of every head (queued, ~1 s), and the
    retrieval score measured by ``python -m engine.evaluate retrieval_heads`` (Wu et al.
    2024: the share of copied needle tokens a head puts its top attention on), when saved."""
    found = queue.run(t("chat.queue_heads"), _detect, model(), key=repr((DETECT_SEED, DETECT_N)))
    saved = retrieval_heads()
    if saved is None:
        return found
    return found | {"retrieval": np.asarray(saved["score"]), "retrieval_n": saved["n"]}


@st.cache_data(ttl=60, show_spinner=False)
def retrieval_heads() -> dict | None:
    """The saved retrieval-head scores and their needle count (None: not measured here)."""
    saved = evaluation("retrieval_heads")
    if not saved or "score" not in saved:
        return None
    return {"score": saved["score"], "n": saved["masking"]["n"]}


def head_types() -> tuple[str, ...]:
    """The head types this server can show (retrieval only once it is measured)."""
    return HEAD_TYPES if retrieval_heads() is not None else HEAD_TYPES[:-1]


def _detect(chat) -> dict:

    return heads.detect_heads(chat, seed=DETECT_SEED, n=DETECT_N)


def ranked_heads(scores) -> list[str]:
    """Every head as ``"layer.head"``, highest score first."""
    order = np.argsort(-np.asarray(scores), axis=None, kind="stable")
    n_heads = scores.shape[1]
    return [f"{i // n_heads}.{i % n_heads}" for i in order.tolist()]


@st.cache_data(max_entries=16, show_spinner=Lazy("chat.spinner_repeat"))
def repeated(prompt: str, limit: int = heads.PROMPT_TOKENS):
    """The prompt written twice after BOS, as detect_heads reads random tokens: (every
    head's map on it without BOS, rows renormalised; n tokens a copy)."""

    return heads.prompt_twice(model(), prompt, limit)


def without_first(amap):
    """The map with its first token (the sink) hidden and each row renormalised; as it
    is when that would hide everything (every token is the first one's)."""

    first = amap.key_labels[0]
    if all(label == first for label in amap.key_labels):
        return amap
    return amap.hide_sinks([first])


# ---- cache policies ---------------------------------------------------------------------

# The Cache policies section's first view: sinks + window, as the page opens it.
CACHE_DEFAULT = {"name": "sinks", "window": 16, "sinks": 4, "budget": 8}


def same_prefix(a, b) -> int:
    """How many generated tokens two runs of one prompt share before they first differ."""
    n = a.outputs["n_prompt"]
    ids_a, ids_b = a.outputs["token_ids"][n:], b.outputs["token_ids"][n:]
    pairs = zip(ids_a, ids_b, strict=False)  # one run may have stopped earlier
    return next((i for i, (x, y) in enumerate(pairs) if x != y), min(len(ids_a), len(ids_b)))


# ---- a lesson step ----------------------------------------------------------------------


def lesson(params: dict) -> dict:
    """What a lesson step's chat view draws (``sections.chat.draw_lesson``), from its link's
    parameters (validated by kit.decks): the generation and its section's measures."""
    if not available():
        return {"missing": chat_dir()}
    chat = model()
    request = Request(
        prompt=params.get("text", DEFAULT_PROMPT),
        template=params.get("template", "1") == "1",
        max_new_tokens=int(params.get("tokens", Request.max_new_tokens)),
    )
    trace = generate(request)
    section = params.get("section", "timeline")
    if "generation" not in trace.maps:  # it wrote nothing: its output (none) is the view
        section = "output"
    shown = {"chat": chat, "trace": trace, "section": section}
    if section == "timeline":
        n_steps = trace.maps["generation"].shape[2]
        shown["step"] = min(int(params.get("token", 1)), n_steps) - 1
        shown["layer"] = int(params.get("layer", chat.n_layers // 2))
    elif section == "sinks":
        shown["measure"] = params.get("measure", "mass_first")
        shown["profile"] = sink_profile(trace.maps["prompt"].weights, int(params.get("first", 1)))
        shown["control"] = first_token_control(request.prompt, request.template)
    elif section == "cache":
        numbers = {
            k: int(params.get(k, v)) for k, v in (("window", 16), ("sinks", 4), ("budget", 8))
        }
        shown["cut"] = cut = generate(request, policy(params.get("policy", "sinks"), **numbers))
        shown["same"] = same_prefix(trace, cut)
        shown["n"] = SWEEP_DEFAULT[0]
        shown["sweep"] = sweep(*SWEEP_DEFAULT)
    elif section == "heads":
        shown["heads"], shown["kind"] = detect_heads(), params.get("kind", "induction")
    return shown


# ---- the cost of a cache policy on a real text -----------------------------------------

TEXT = Path(__file__).resolve().parents[2] / "assets" / "text" / "pride-and-prejudice.txt"
SWEEP_BUDGETS = (8, 16, 32, 64, 128, 256)
SWEEP_N = (64, 2048)  # tokens of the text read
SWEEP_DEFAULT = (128, (16, 32))  # n, budgets: seconds on one thread
# H2O re-chooses its heavy hitters every 16 positions here (exactly: every position, ~30×
# slower on a CPU); the page says so beside the numbers.
H2O_INTERVAL = 16


@st.cache_resource(max_entries=1, show_spinner=False)
def text_ids() -> list[int]:
    """The shipped English text's first tokens (more than any sweep reads)."""
    chat = model()
    # ~4.4 characters a token in this prose: 30,000 characters hold > SWEEP_N[1] + 1 tokens.
    return chat.tokenizer.encode(TEXT.read_text(encoding="utf-8")[:30_000])


def own_ids(request: Request) -> list[int]:
    """The user's prompt as raw text (no template): what the sweep reads when it is long
    enough."""
    return model().tokenizer.encode(request.prompt)


def sweep(n: int, budgets: tuple[int, ...], own: tuple[int, ...] | None = None) -> list[dict]:
    """Window, sinks + window and H2O at each cache size over n tokens of the user's text
    (``own``) or the shipped book, each beside the full cache (queued, progress, Cancel)."""
    ids = list(own) if own is not None else text_ids()
    return queue.run(
        t("chat.queue_sweep"),
        _sweep,
        model(),
        ids,
        n,
        budgets,
        t("chat.progress_positions"),
        key=repr((n, budgets, own)),
        cancel_label=t("chat.stop_sweep"),
    )


def _sweep(chat, ids, n, budgets, unit, cancel, progress) -> list[dict]:

    rows = cache_eval.budget_sweep(
        chat,
        ids,
        budgets,
        n_eval=n + 1,  # n positions predict the token after them
        h2o_interval=H2O_INTERVAL,
        should_stop=cancel.is_set,
        progress=lambda done, total: progress(done, total, unit),
    )
    keep = ("budget", "agreement", "kl", "ppl", "ppl_full", "evicted_from", "n_predicted")
    keep += ("agreement_evicted", "kl_evicted", "ppl_evicted", "ppl_full_evicted", "stopped")
    return [{"policy": r["policy"]["name"], **{k: r[k] for k in keep}} for r in rows]


# ---- variants inside the model ---------------------------------------------------------

VARIANTS_N = (in_pretrained.LLM_MIN_TOKENS, in_pretrained.LLM_MAX_TOKENS)  # tokens of the text
# The greedy continuation each variant writes: from the text's first tokens, this many new.
VARIANTS_PROMPT, VARIANTS_NEW = in_pretrained.PROMPT_TOKENS, in_pretrained.NEW_TOKENS
VARIANTS_DEFAULT = ("longformer", "bigbird", "int8", "performer")


def variant_names() -> list:
    """Every variant of the registry, in its order."""

    return list(REGISTRY.values())


def variants(n: int, names: tuple[str, ...], layers: tuple[int, ...]) -> dict:
    """Each variant in place of the model's attention (in ``layers``; empty: all) on n
    tokens of the text: perplexity and continuation beside full attention (queued)."""
    return queue.run(
        t("chat.queue_variants"),
        _variants,
        model(),
        text_ids()[:n],
        names,
        layers,
        t("chat.progress_variants"),
        key=repr((n, names, layers)),
        cancel_label=t("chat.stop_variants"),
    )


def _variants(chat, ids, names, layers, unit, cancel, progress) -> dict:

    return in_pretrained.variants_in_llm(
        chat,
        ids,
        variants=list(names),
        layers=list(layers) or None,
        should_stop=cancel.is_set,
        progress=lambda done, total: progress(done, total, unit),
    )
