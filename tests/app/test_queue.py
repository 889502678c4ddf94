"""The heavy-work queue: bounded, one job per session, positions, cancel, bounded results."""

import threading
import time

import pytest
from kit.queue import RESULTS, Busy, WorkQueue


def blocker(gate: threading.Event, value):
    gate.wait(10)
    return value


def steps(n, *, cancel, progress):
    done = []
    for i in range(n):
        if cancel.is_set():
            break
        done.append(i)
        progress(i + 1, n, "step")
        time.sleep(0.02)
    return done


def test_full_queue_refuses_instead_of_piling_up():
    q, gate = WorkQueue(workers=1, capacity=2), threading.Event()
    q.submit("a", "k1", "x", blocker, (gate, 1), {})
    q.submit("b", "k2", "x", blocker, (gate, 2), {})
    with pytest.raises(Busy):
        q.submit("c", "k3", "x", blocker, (gate, 3), {})
    gate.set()


def test_positions_follow_arrival_and_running_is_zero():
    q, gate = WorkQueue(workers=1, capacity=8), threading.Event()
    first = q.submit("a", "k1", "x", blocker, (gate, 1), {})
    second = q.submit("b", "k2", "x", blocker, (gate, 2), {})
    third = q.submit("c", "k3", "x", blocker, (gate, 3), {})
    time.sleep(0.1)
    assert (q.position(first), q.position(second), q.position(third)) == (0, 1, 2)
    gate.set()
    assert third.future.result(5) == 3


def test_one_job_per_session_the_newer_request_wins():
    q, gate = WorkQueue(workers=1, capacity=8), threading.Event()
    q.submit("a", "busy", "x", blocker, (gate, 0), {})
    old = q.submit("s", "k1", "x", blocker, (gate, 1), {})
    same = q.submit("s", "k1", "x", blocker, (gate, 1), {})
    assert same is old  # a rerun keeps waiting for the same job
    new = q.submit("s", "k2", "x", blocker, (gate, 2), {})
    assert old.future.cancelled() and old.cancel.is_set()
    gate.set()
    assert new.future.result(5) == 2


def test_cooperative_cancel_returns_what_was_done_and_is_not_cached():
    q = WorkQueue(workers=1, capacity=8)
    job = q.submit("s", "k", "x", steps, (200,), {})
    while job.done_steps[0] < 3:
        time.sleep(0.01)
    q.cancel("s")
    done = job.future.result(5)
    assert 3 <= len(done) < 200
    assert q.cached("k") is None


def test_results_are_bounded():
    q = WorkQueue(workers=1, capacity=8)
    for i in range(RESULTS + 5):
        q.submit("s", f"k{i}", "x", lambda v: v, (i,), {}).future.result(5)
    assert q.cached("k0") is None and q.cached(f"k{RESULTS + 4}")[1] == RESULTS + 4
