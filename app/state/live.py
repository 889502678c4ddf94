"""Train it now: what every live training of the studio shares.

A live run holds one core for at most a minute, so a class pressing Train cannot stall the
server: it takes one of ``SLOTS`` server-wide slots (a run that finds none is told the
server is busy), runs at one torch thread (so its film is the command line's, bit for bit),
and stops on Cancel or at its time limit. A page hands :func:`fit` of a model card (its
``train_now``) to :func:`train_now` (app/state/learning.py, app/state/nmt_training.py) and
draws the run as it learns with :func:`stream`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import streamlit as st
import torch
from kit import queue
from kit.i18n import t

from engine import run as engine_run
from engine.timeline import Timeline

SLOTS = 2  # live trainings at once on the whole server, every page together
# A live run's wall-time limit: a preset takes 15–30 s of one core, and the limit stops a run
# on a crowded server, where one core is shared by several jobs.
SECONDS = 60.0


class Busy(Exception):
    """Every live-training slot of the server is taken."""


@st.cache_resource(max_entries=1)
def slots() -> threading.BoundedSemaphore:
    """The server's slots: one semaphore for every session and every page."""
    return threading.BoundedSemaphore(SLOTS)


@dataclass
class Run(engine_run.Run):
    """The engine's run context (Cancel and the time limit as ``should_stop``, progress as
    ``on_step``, the film as ``on_snapshot``); after the run, ``stopped`` is None, "cancel"
    or "time"."""

    reasons: list = field(default_factory=list)

    @property
    def stopped(self) -> str | None:
        return self.reasons[0] if self.reasons else None


class Film:
    """What a live training has shown so far: its snapshots, written by the worker thread
    (``add``, the run's ``on_snapshot``) and read by the page's polls (``latest`` changes
    with each new one)."""

    def __init__(self, name: str = "") -> None:
        self._lock = threading.Lock()
        self.name = name
        self.shots: list[tuple[int, dict, list]] = []

    def add(self, step: int, metrics: dict, traces: list) -> None:
        with self._lock:
            self.shots.append((step, dict(metrics), list(traces)))

    def latest(self) -> int:
        with self._lock:
            return len(self.shots)

    def so_far(self) -> Timeline | None:
        """The snapshots so far as a timeline, None before the first."""
        with self._lock:
            shots = list(self.shots)
        if not shots:
            return None
        names = dict.fromkeys(m for _, metrics, _ in shots for m in metrics)
        metrics = {m: [shot.get(m) for _, shot, _ in shots] for m in names}
        return Timeline(self.name, [s for s, _, _ in shots], metrics, [p for *_, p in shots])


def fit(card, seed: int, steps: int) -> Callable[[Run], Timeline]:
    """A page's training call for :func:`train_now`: ``card.train_now`` (a fresh model of
    the card's kind; its timeline's meta names the command that saves the same run, with
    its wall and CPU seconds), plus ``meta["stopped"]``: None, "cancel" or "time"."""

    def train(run: Run) -> Timeline:
        tl = card.train_now(seed, steps, run=run)
        tl.meta["stopped"] = run.stopped
        return tl

    return train


def train_card(card, seed: int, label: str, unit: str, film: Film, *, watch):
    """Train a fresh model of ``card``'s kind from ``seed`` for its ``live_steps`` through
    :func:`train_now` while ``watch()`` draws ``film`` (the card, seed and steps name it)."""
    steps = card.live_steps
    key = repr((card.name, seed, steps))
    return train_now(label, unit, fit(card, seed, steps), steps, film, key=key, watch=watch)


def same_run(page: str, meta: dict, last: int) -> str:
    """What the command line does with the same seed: a whole run ends on this film's last
    map; one that stopped (Cancel, the time limit) at step ``last`` shares the snapshots
    before it (the command trains the whole run, and a schedule over its steps, as the NMT
    learning rate's, makes a shorter run another run)."""
    said = dict(command=meta["command"], seconds=meta["wall_s"], cpu=meta["cpu_s"])
    if meta.get("stopped"):
        return t(f"{page}.live_same_stopped", step=last, **said)
    return t(f"{page}.live_same", **said)


def train_now(
    label: str, unit: str, train: Callable[[Run], object], steps: int, film: Film, *, key, watch
):
    """``train(run)``, a page's training call, through the server's queue (progress,
    Cancel, one job per session) while ``watch()`` draws ``film``. ``key`` names the run
    (page, model, seed, steps): the same key is the same film, so a finished run is shared
    from the queue's result cache. Raises :class:`Busy` when every slot is taken."""
    return queue.run(label, job, train, steps, film, slots(), unit, key=key, watch=watch)


def job(
    train: Callable[[Run], object], steps: int, film: Film, slot, unit: str, *, cancel, progress
):
    """The queue's job: ``train(run)`` in ``slot`` at one thread, stopped by Cancel or at
    SECONDS; ``unit`` is the progress text (formatted with the loss)."""
    with one_core(slot, SECONDS, steps, unit, film, cancel=cancel, progress=progress) as run:
        return train(run)


@contextmanager
def one_core(
    slot, seconds: float, steps: int, text: str, film: Film, *, cancel, progress
) -> Iterator[Run]:
    """Hold ``slot`` (raise :class:`Busy` when none is free) and one torch thread while the
    body trains; Cancel or ``seconds`` of wall time stop it; ``progress`` shows the step and
    ``text`` (formatted with the loss); each snapshot goes to ``film``."""
    if not slot.acquire(blocking=False):
        raise Busy
    threads, started, reasons = torch.get_num_threads(), time.monotonic(), []
    torch.set_num_threads(1)  # this worker thread only (OpenMP's setting is per thread)

    def should_stop() -> bool:
        if cancel.is_set():
            reasons.append("cancel")
        elif time.monotonic() - started > seconds:
            reasons.append("time")
            cancel.set()  # so the queue does not keep a cut film as this seed's result
        return bool(reasons)

    def on_step(step: int, loss: float) -> None:
        progress(step, steps, text.format(loss=loss))

    try:
        yield Run(should_stop, on_step, film.add, reasons)
    finally:
        torch.set_num_threads(threads)
        slot.release()


def idle() -> None:
    """The running film's place with no run: one empty element, as :func:`stream`'s."""
    st.empty()


def stream(train: Callable, version: Callable[[], int], draw: Callable, busy: str):
    """Run ``train(watch)`` (a page's ``train_live``), redrawing into one area only when
    ``version()`` has moved since the last poll (``draw(area, version)``); returns the
    run's timeline, or None after showing ``busy`` when every slot is taken."""
    # The film, the queue's status and Cancel sit in one element (with no run, idle's): the
    # finished film drawn below keeps its place in the rerun that Cancel asks for (were they
    # three elements only while a run ran, that rerun drew the stopped note three places up
    # and the faded old one stayed beside it until the rerun ended).
    holder, drawn = st.empty(), [0]
    with holder.container():
        area = st.empty()

        def watch() -> None:
            now = version()
            if now == drawn[0]:
                return  # nothing new: no redraw
            drawn[0] = now
            draw(area, now)

        try:
            tl, said = train(watch), None
        except Busy:
            tl, said = None, busy
    if said:
        holder.warning(said)
    else:
        holder.empty()
    return tl
