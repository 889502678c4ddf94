"""One bounded queue for heavy work per server: thirty students cannot starve the teacher.

Work over about a second (cost sweeps, long pooled maps, KV-cache runs, UMAP fits) runs
on a fixed pool of worker threads sized from the machine's cores, behind a bounded
queue. While a job waits or runs, its page shows "queued, position k" or its progress
and a Cancel button. Each session has at most one heavy job: asking for another
supersedes (cancels) the first, and when the queue is full the page says the studio is
busy instead of piling more work on the cores. Finished results sit in a small bounded
cache (entries and age), so memory stays flat over a long class.

A job's function may take ``cancel`` (a ``threading.Event``) and ``progress`` (a
callable ``progress(done, total, text)``): it is then *cooperative* — Cancel stops it
between steps and :func:`run` returns what it finished. Other functions can only be
dropped from the queue; once running they finish and their result is discarded.

Every job runs under one time limit, ``LIMIT_S`` of wall time from its start, so no
request holds a core longer whatever its input. At the limit a cooperative job is asked to
stop (as by Cancel) and returns what it finished; a job still running ``GRACE_S`` later,
cooperative or not, is interrupted: :class:`TimeLimit` is raised inside its thread at the
next Python instruction (``PyThreadState_SetAsyncExc``), unwinding its ``with`` and
``finally`` blocks, so slots and locks it holds are released. A torch operation already
inside C finishes first; the page inputs' limits keep each such operation short.

One slot: :func:`run` draws its status, Cancel and notes in one element, there whether the
job runs or its result is cached, so what the page draws after keeps its place between the
run and the next rerun. Were they two elements only while a job ran, the rerun that Cancel
asks for drew the page's note three places up, and the faded old note stayed beside it
until that rerun ended (a live training's "Cancelled at step", twice on screen).
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import inspect
import itertools
import logging
import os
import sys
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
from streamlit.runtime.state.common import user_key_from_element_id

from kit.errors import halt
from kit.i18n import t

log = logging.getLogger("attention_studio")
WORKERS = max(1, os.cpu_count() or 1)
CAPACITY = 8 * WORKERS  # jobs waiting or running, over all sessions
RESULTS = 32  # finished results kept …
RESULT_TTL_S = 30 * 60  # … for at most this long
POLL_S = 0.25
# The longest a job may run: above the live trainings' own minute (app/state/live.py) with
# their set-up, and far above any other page's work on inputs within their limits.
DEFAULT_LIMIT_S = 90.0
# A slower machine may lengthen it (the tests do: a CI runner ≈3× slower than the machine
# the limit was set on would cut a correct result partway, and a test checks correctness).
LIMIT_ENV = "ATTENTION_STUDIO_JOB_LIMIT_S"
LIMIT_S = float(os.environ.get(LIMIT_ENV, DEFAULT_LIMIT_S))
GRACE_S = 2.0  # a cooperative job asked to stop has this long to reach its next step
WATCH_S = 0.5  # how often the watchdog looks at the running jobs


class Busy(Exception):
    """The queue is full."""


class TimeLimit(BaseException):
    """Raised inside a job's thread at its time limit. A BaseException, as KeyboardInterrupt
    is, so the job's own ``except Exception`` clauses do not swallow it."""


def _interrupt(thread_id: int, exc: type[BaseException] | None) -> None:
    """Raise ``exc`` in thread ``thread_id`` at its next instruction; None clears one pending."""
    target = ctypes.py_object(exc) if exc is not None else ctypes.py_object()  # () is NULL
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), target)


@dataclass
class Job:
    key: str
    label: str
    cooperative: bool
    cancel: threading.Event = field(default_factory=threading.Event)
    future: Future | None = None
    number: int = 0
    started: float | None = None
    done_steps: tuple[int, int, str] = (0, 0, "")
    limit_s: float = LIMIT_S
    thread: int | None = None  # the worker thread while the job's function runs
    stopped: str | None = None  # "time" once the time limit has stopped it

    def progress(self, done: int, total: int, text: str = "") -> None:
        self.done_steps = (done, total, text)


class WorkQueue:
    def __init__(
        self,
        workers: int = WORKERS,
        capacity: int = CAPACITY,
        limit_s: float | None = None,
        grace_s: float = GRACE_S,
    ):
        self.capacity, self.grace_s = capacity, grace_s
        self.limit_s = LIMIT_S if limit_s is None else limit_s
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="studio-heavy")
        self._lock = threading.Lock()
        self._watch_lock = threading.Lock()  # held while a job's thread is set or interrupted
        self._active: list[Job] = []
        self._by_session: dict[str, Job] = {}
        self._results: OrderedDict[str, tuple[float, object]] = OrderedDict()
        self._numbers = itertools.count(1)
        watch = threading.Thread(target=_watch, args=(weakref.ref(self),), daemon=True)
        watch.start()

    # -- results ------------------------------------------------------------------------
    def cached(self, key: str):
        with self._lock:
            hit = self._results.get(key)
            if hit is None or time.monotonic() - hit[0] > RESULT_TTL_S:
                self._results.pop(key, None)
                return None
            self._results.move_to_end(key)
            return hit

    def _keep(self, key: str, value) -> None:
        with self._lock:
            self._results[key] = (time.monotonic(), value)
            self._results.move_to_end(key)
            while len(self._results) > RESULTS:
                self._results.popitem(last=False)

    # -- jobs ---------------------------------------------------------------------------
    def submit(self, session: str, key: str, label: str, fn, args, kwargs) -> Job:
        with self._lock:
            self._active = [j for j in self._active if not j.future.done()]
            mine = self._by_session.get(session)
            if mine is not None and not mine.future.done():
                if mine.key == key:
                    return mine  # the same request after a rerun: keep waiting for it
                self._stop(mine)  # one heavy job per session: the newer request wins
            if len(self._active) >= self.capacity:
                raise Busy(len(self._active))
            cooperative = {"cancel", "progress"} <= set(inspect.signature(fn).parameters)
            job = Job(key, label, cooperative, number=next(self._numbers), limit_s=self.limit_s)
            job.future = self._pool.submit(self._work, job, fn, args, kwargs)
            self._active.append(job)
            self._by_session[session] = job
            return job

    def _work(self, job: Job, fn, args, kwargs):
        if job.cancel.is_set():
            raise CancelledError
        if job.cooperative:
            kwargs = {**kwargs, "cancel": job.cancel, "progress": job.progress}
        with self._watch_lock:
            job.started, job.thread = time.monotonic(), threading.get_ident()
        try:
            value = fn(*args, **kwargs)
        finally:
            self._unwatch(job)
        if not job.cancel.is_set():
            self._keep(job.key, value)
        return value

    def _unwatch(self, job: Job) -> None:
        """No interruption reaches this thread once the job's function has returned: an
        exception still pending would land in the pool's own loop and kill the worker."""
        while True:
            try:
                with self._watch_lock:
                    job.thread = None
                    _interrupt(threading.get_ident(), None)
                return
            except TimeLimit:
                continue  # raised just before the lock was taken: clear and try again

    def running(self) -> int:
        """Jobs started and not finished."""
        with self._lock:
            return sum(1 for j in self._active if j.started and not j.future.done())

    def enforce_limits(self) -> None:
        """Stop each job past its time limit: a request to stop, then an interruption."""
        with self._lock:
            running = [j for j in self._active if j.started is not None]
        now = time.monotonic()
        for job in running:
            over = now - job.started - job.limit_s
            if over < 0 or job.future.done():
                continue
            job.stopped = "time"
            job.cancel.set()
            if over >= (self.grace_s if job.cooperative else 0):
                with self._watch_lock:
                    if job.thread is not None:
                        _interrupt(job.thread, TimeLimit)

    def _stop(self, job: Job) -> None:
        job.cancel.set()
        job.future.cancel()  # only succeeds while it still waits

    def cancel(self, session: str) -> Job | None:
        with self._lock:
            job = self._by_session.get(session)
            if job is not None and not job.future.done():
                self._stop(job)
            return job

    def position(self, job: Job) -> int:
        """1-based place among jobs not yet started; 0 once it runs."""
        if job.started is not None:
            return 0
        with self._lock:
            waiting = [j for j in self._active if j.started is None and not j.future.done()]
        return 1 + sum(j.number < job.number for j in waiting)

    def load(self) -> int:
        with self._lock:
            return sum(not j.future.done() for j in self._active)


def _watch(queue: weakref.ref) -> None:
    """The watchdog of one queue, for as long as the queue exists."""
    while (q := queue()) is not None:
        q.enforce_limits()
        del q
        time.sleep(WATCH_S)


@st.cache_resource(max_entries=1)
def work_queue() -> WorkQueue:
    """The server's one queue (shared by every session)."""
    return WorkQueue()


def _fingerprint(value) -> str:
    """A stable key for arguments, arrays included (by content, never by pickle)."""
    np = sys.modules.get("numpy")  # an array exists only once numpy is loaded
    if np is not None and isinstance(value, np.ndarray):
        return f"nd{value.shape}{value.dtype}{hashlib.sha1(value.tobytes()).hexdigest()}"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_fingerprint(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, list | tuple):
        return "(" + ",".join(_fingerprint(v) for v in value) + ")"
    return repr(value)


def _session() -> str:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "bare"


def _show_status(queue: WorkQueue, job: Job, label: str) -> None:
    """Where a job stands: its place in the queue, its progress, or how long it has run."""
    position = queue.position(job)
    done, total, text = job.done_steps
    if position:
        st.info(t("queue.waiting", label=label, position=position))
    elif total:
        st.progress(min(1.0, done / total), f"{label}: {text} ({done} / {total})")
    else:
        seconds = time.monotonic() - (job.started or time.monotonic())
        st.info(t("queue.running", label=label, seconds=f"{seconds:.0f}"))


@contextmanager
def spare_cores(running: Callable[[], int], others: Callable[[], int]) -> Iterator[Callable]:
    """Inside a long job (its own thread): ``adjust()``, called between its steps, gives
    this thread's torch every core (``WORKERS``) while it is the only job ``running()``
    and ``others()`` (work outside the queue, e.g. the chat batch) is 0, and one core as
    soon as either is not. An idle core then shortens a 40-s sweep instead of idling, and
    a newcomer waits at most one step for its own core. The thread's setting is restored
    on the way out (a pool thread serves the next job)."""
    import torch  # here: the queue serves pages that never load torch

    before = torch.get_num_threads()

    def adjust() -> None:
        alone = running() <= 1 and others() == 0
        torch.set_num_threads(WORKERS if alone else 1)

    try:
        yield adjust
    finally:
        torch.set_num_threads(before)


def stepper(cancel, progress, total: int, unit: str):
    """``should_stop()`` for an engine loop that polls before each step: it ticks the
    job's progress bar (step k of ``total`` ``unit``) and says whether Cancel was pressed."""
    steps = itertools.count()

    def should_stop() -> bool:
        progress(next(steps), total, unit)
        return cancel.is_set()

    return should_stop


_pageless = threading.local()


class _QuietWherePageless(logging.Filter):
    """Drops Streamlit's "missing ScriptRunContext" notice in a pageless thread only. A
    per-thread flag, not the logger's level: two such threads (the chat preload, a
    warm-up) saving and restoring one shared level could leave it raised for all."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(_pageless, "on", False)


logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").addFilter(
    _QuietWherePageless()
)


@contextmanager
def pageless() -> Iterator[None]:
    """Work in a thread of the server's own (a preload, a warm-up): no session's page is
    there, and Streamlit logs that each cached call has no ScriptRunContext; expected."""
    _pageless.on = True
    try:
        yield
    finally:
        _pageless.on = False


# A process ending while a warm-up is inside torch would end that thread in C++ code,
# which aborts the whole process ("terminate called without an active exception", exit
# status 134: seen when a test run ended during the Quality section's warm-up). So the
# exit asks each warm-up to stop after its current step and waits for that step.
_STOPPING = threading.Event()
_BACKGROUND: weakref.WeakSet = weakref.WeakSet()
STOP_WAIT_S = 10.0  # one step is one Trace: ≈ 1 s at n = 512 on a busy machine


def background(name: str, steps: Iterable[Callable[[], object]]) -> threading.Thread | None:
    """Each of ``steps`` in turn, in a daemon thread of the server, pageless; a failure is
    logged (it only means a page computes what this would have). The process's exit stops
    it between two steps. None where no server runs (scripts keep their work in the page)."""
    if not st.runtime.exists():
        return None

    def work() -> None:
        try:
            with pageless():
                for step in steps:
                    if _STOPPING.is_set():
                        return
                    step()
        except Exception:  # noqa: BLE001 - a warm-up that fails leaves the work to the page
            log.exception("background work %s failed", name)

    thread = threading.Thread(target=work, name=name, daemon=True)
    _BACKGROUND.add(thread)
    thread.start()
    return thread


@atexit.register
def _stop_background() -> None:
    _STOPPING.set()
    for thread in list(_BACKGROUND):
        thread.join(STOP_WAIT_S)


def prefetch(fn, *args, key: str, **kwargs) -> None:
    """Compute what ``run(label, fn, *args, key=key, **kwargs)`` would, with no page to show
    it (a server's preload): the result waits in the queue's result cache, so the first
    visitor's ``run`` returns it at once. Waits for it; a cached result is not redone."""
    queue = work_queue()
    key = f"{fn.__module__}.{fn.__qualname__}:{key}"
    if queue.cached(key) is None:
        queue.submit("preload", key, "preload", fn, args, kwargs).future.result()


def run(
    label: str,
    fn,
    *args,
    key: str | None = None,
    cancel_label: str | None = None,
    watch=None,
    **kwargs,
):
    """``fn(*args, **kwargs)`` through the queue, with position, progress and Cancel shown.

    ``key`` names the result when the arguments hold objects (a loaded model) whose
    content is not a fair cache key; by default the arguments' content is the key.
    ``watch()``, when given, is called at each poll while the job runs: a page draws what
    the job has made so far (a model training live), in its own placeholder.

    Returns the result, a cached result at once, or — for a cooperative job the user
    cancelled — what it finished. A non-cooperative job that is cancelled stops the
    script with a note; a full queue shows that the studio is busy.
    """
    queue = work_queue()
    name = f"{fn.__module__}.{fn.__qualname__}"
    key = f"{name}:{key}" if key is not None else f"{name}{_fingerprint((args, kwargs))}"
    slot = st.empty()  # one element, run or cached: see "One slot" in the module's docstring
    hit = queue.cached(key)
    if hit is not None:
        return hit[1]
    session = _session()
    cancel_key = f"kit-queue-cancel-{label}"
    if st.session_state.get(cancel_key):
        job = queue.cancel(session)
        if job is None or not job.cooperative or job.future.cancelled():
            slot.info(t("queue.cancelled", label=label))
            halt()
        return job.future.result()  # cooperative: it returns what it finished
    try:
        job = queue.submit(session, key, label, fn, args, kwargs)
    except Busy as busy:
        slot.warning(t("queue.busy", jobs=busy.args[0]))
        halt()
    box = slot.container()
    status, cancel = box.empty(), box.empty()
    shown = False
    while not wait([job.future], timeout=POLL_S).done:  # returns as soon as the job ends
        if not shown:  # a job done within one poll never shows a status or a button
            cancel.button(cancel_label or t("queue.cancel"), key=cancel_key)
            shown = True
        elif pressed_meanwhile(cancel_key):
            queue.cancel(session)  # a cooperative job ends soon with what it finished
            if not job.cooperative:
                slot.info(t("queue.cancelled", label=label))
                halt()
        with status.container():
            _show_status(queue, job, label)
        if watch is not None:
            watch()
        time.sleep(POLL_S)
    slot.empty()
    return _outcome(job, label, slot)


def pressed_meanwhile(key: str) -> bool:
    """Whether the button ``key`` was pressed while this run waits on a job.

    A button inside a fragment asks for a rerun of that fragment alone, and Streamlit queues
    such a rerun behind the running script instead of interrupting it (its
    ``_fragment_run_should_not_preempt_script``): a Cancel pressed while a fragment polls
    its job took effect only once the job had ended (a live training ran its 400 steps).
    The press is read from the pending rerun's widget states instead; outside a fragment
    the press interrupts the run, and the rerun's own Cancel branch handles it."""
    ctx = get_script_run_ctx(suppress_warning=True)
    requests = getattr(ctx, "script_requests", None)
    if getattr(requests, "_state", None) != ScriptRequestType.RERUN:
        return False
    states = getattr(getattr(requests, "_rerun_data", None), "widget_states", None)
    widgets = getattr(states, "widgets", ())
    return any(user_key_from_element_id(w.id) == key and w.trigger_value for w in widgets)


def _outcome(job: Job, label: str, slot):
    """A finished job's result, or the note that stops the script: cancelled, or stopped
    at the time limit with nothing to show."""
    seconds = f"{job.limit_s:.0f}"
    try:
        value = job.future.result()
    except CancelledError:
        slot.info(t("queue.cancelled", label=label))
        halt()
    except TimeLimit:
        slot.warning(t("queue.time_limit", label=label, seconds=seconds))
        halt()
    if job.stopped == "time":  # cooperative: what it finished within the limit
        slot.info(t("queue.time_limit_partial", label=label, seconds=seconds))
    return value
