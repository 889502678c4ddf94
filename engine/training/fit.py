"""One training harness for every family: the step loop, its timeline, Cancel and progress.

A family writes what is its own — draw a batch, compute the loss, take the optimiser step —
as ``step(k) → loss`` (k = the steps already taken), and what a snapshot measures as
``snapshot(k) → (metrics, traces)``. :func:`fit` owns the rest: when to snapshot
(``recorder.due``), the training loss between snapshots, a stop asked by the run (Cancel, a
time limit) that still ends on a snapshot of where it stopped, a loss that is no longer a
number, and the clocks. The NMT, Transformer, MemN2N, induction and variant-grid loops and
both live-training pages go through it, so each of those is written once.

A snapshot must draw no random numbers and compute no gradients (call it through
:func:`engine.timeline.quiet`): a run that records then trains the same weights as one
that does not.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from engine.run import NOTHING, Run
from engine.timeline import Recorder


@dataclass
class Fitted:
    steps: int  # optimiser steps taken
    loss: float  # the last step's batch loss (not finite when the run diverged)
    stopped: bool  # the run asked to stop (Cancel, a time limit)
    diverged: bool  # a step's loss was not a finite number; the step reported it unstepped
    wall_s: float
    cpu_s: float  # the process's CPU time
    thread_cpu_s: float  # this thread's alone (a one-thread run's cost, whatever else runs)
    record_s: float  # of wall_s, the time spent taking snapshots


def fit(
    step: Callable[[int], float],
    steps: int,
    recorder: Recorder | None = None,
    run: Run | None = None,
    *,
    snapshot: Callable[[int], tuple[dict, list]] | None = None,
    train_loss: bool = False,
    end: bool = True,
) -> Fitted:
    """Take up to ``steps`` steps. With a ``recorder`` and a ``snapshot``, record at every
    due step and, with ``end``, at the step the run ended on (a family that must change the
    weights before its last snapshot — the grid rounds them to float16 — passes
    ``end=False`` and records it itself). ``train_loss`` adds the mean batch loss since the
    previous snapshot to each (None at step 0). ``step`` returns its batch loss; one that
    is not a finite number ends the run (the family reports it without stepping on it)."""
    run = run or NOTHING
    since: list[float] = []
    t0, cpu0, thread0, record_s = time.perf_counter(), time.process_time(), time.thread_time(), 0.0
    loss, stopped, diverged, k = math.nan, False, False, 0
    for k in range(steps + 1):
        stopped = k < steps and run.stopping()
        last = k == steps or stopped
        due = end if last else recorder is not None and recorder.due(k)
        if recorder is not None and snapshot is not None and due:
            r0 = time.perf_counter()
            metrics, traces = snapshot(k)
            if train_loss:
                metrics["train_loss"] = sum(since) / len(since) if since else None
                since.clear()
            recorder.add(k, metrics, traces)
            record_s += time.perf_counter() - r0
            run.snapshot(k, metrics, traces)
        if last:
            break
        loss = float(step(k))
        if not math.isfinite(loss):
            diverged = True
            break
        since.append(loss)
        run.step(k + 1, loss)
    return Fitted(
        steps=k,
        loss=loss,
        stopped=stopped,
        diverged=diverged,
        wall_s=time.perf_counter() - t0,
        cpu_s=time.process_time() - cpu0,
        thread_cpu_s=time.thread_time() - thread0,
        record_s=record_s,
    )
