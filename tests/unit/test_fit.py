"""The one training harness (engine.training.fit): when it snapshots, what a stop and a
diverged loss do, and the training loss it adds — checked on a toy step, no model."""

from __future__ import annotations

import math

from engine.run import Run
from engine.timeline import Recorder
from engine.training.fit import fit


def counting(losses):
    """A step that returns the next loss of ``losses`` and records which k it was asked."""
    asked = []

    def step(k: int) -> float:
        asked.append(k)
        return losses[k]

    return step, asked


def snapshot(k: int):
    return {"k": float(k)}, []


def test_snapshots_at_the_due_steps_and_the_end_with_the_mean_loss_between():
    step, asked = counting([float(i) for i in range(20)])
    rec = Recorder("toy", 20, n=4)
    seen = []
    run = Run(on_snapshot=lambda k, m, t: seen.append(k))
    done = fit(step, 20, rec, run, snapshot=snapshot, train_loss=True)
    assert asked == list(range(20)) and done.steps == 20 and done.loss == 19.0
    assert rec.steps == sorted(rec.wanted) == seen and rec.steps[-1] == 20
    assert rec.metrics["train_loss"][0] is None  # nothing trained before step 0
    i = rec.steps.index(20)
    before = rec.steps[i - 1]
    assert rec.metrics["train_loss"][i] == sum(range(before, 20)) / (20 - before)


def test_a_stop_ends_on_a_snapshot_of_where_it_stopped():
    step, asked = counting([1.0] * 50)
    calls = []
    run = Run(should_stop=lambda: len(calls) >= 7, on_step=lambda k, loss: calls.append(k))
    rec = Recorder("toy", 50, n=3)
    done = fit(step, 50, rec, run, snapshot=snapshot)
    assert done.stopped and done.steps == 7 and asked == list(range(7))
    assert rec.steps[-1] == 7 and calls == list(range(1, 8))


def test_a_loss_that_is_not_a_number_ends_the_run_unstepped():
    step, asked = counting([2.0, 1.5, math.nan] + [1.0] * 37)
    rec = Recorder("toy", 40, n=2)  # due at 0 and 40
    done = fit(step, 40, rec, snapshot=snapshot)
    assert done.diverged and done.steps == 2 and math.isnan(done.loss)
    assert asked == [0, 1, 2] and rec.steps == [0]  # no snapshot of a diverged state


def test_end_false_leaves_the_last_snapshot_to_the_family():
    step, _ = counting([1.0] * 12)
    rec = Recorder("toy", 12, n=3)
    fit(step, 12, rec, snapshot=snapshot, end=False)
    assert 12 not in rec.steps and 12 in rec.wanted  # the grid records it after rounding


def test_without_a_recorder_it_only_steps():
    step, asked = counting([0.5] * 3)
    done = fit(step, 3)
    assert asked == [0, 1, 2] and done.steps == 3 and not done.stopped and not done.diverged
