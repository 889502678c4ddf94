"""The heavy-work queue's time limit: a job past it is stopped with a message, whatever it
runs, and its worker, its queue slot and any slot it holds are free again."""

import threading
import time
from pathlib import Path

import pytest
from kit import queue
from kit.queue import TimeLimit, WorkQueue
from streamlit.testing.v1 import AppTest

from tests.app.test_queue import steps


def spin(seconds: float = 30.0) -> str:
    """Pure-Python work that never looks up: only an interruption stops it early."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sum(range(1_000))
    return "finished"


def holds(slot: threading.BoundedSemaphore) -> str:
    with slot:  # a live-training slot, say: released however the body ends
        return spin()


def swallows() -> str:
    """A job whose own handler catches every Exception: the limit still stops it."""
    try:
        return spin()
    except Exception:  # noqa: BLE001 - this is the point of the test
        return spin()


def deaf(*, cancel, progress):
    """Cooperative in signature, but it never looks at ``cancel``."""
    return spin()


def stopped_within(job, seconds: float):
    start = time.monotonic()
    with pytest.raises(TimeLimit):
        job.future.result(seconds)
    return time.monotonic() - start


@pytest.mark.parametrize("fn", [spin, swallows])
def test_a_job_past_its_limit_is_interrupted_and_its_worker_serves_the_next(fn):
    q = WorkQueue(workers=1, capacity=2, limit_s=0.3, grace_s=0.2)
    job = q.submit("a", "k1", "x", fn, (), {})
    assert stopped_within(job, 5) < 3
    assert job.stopped == "time" and q.load() == 0  # its place in the queue is free
    assert q.cached("k1") is None
    after = q.submit("a", "k2", "x", lambda: "next", (), {})
    assert after.future.result(5) == "next"  # the one worker thread survived


def test_a_slot_held_by_the_job_is_released():
    q, slot = WorkQueue(workers=1, capacity=2, limit_s=0.3), threading.BoundedSemaphore(1)
    job = q.submit("a", "k", "x", holds, (slot,), {})
    stopped_within(job, 5)
    assert slot.acquire(blocking=False)


def test_a_cooperative_job_stops_at_its_limit_with_what_it_finished():
    q = WorkQueue(workers=1, capacity=2, limit_s=0.3, grace_s=5)
    job = q.submit("a", "k", "x", steps, (10_000,), {})
    done = job.future.result(5)
    assert 1 <= len(done) < 10_000 and job.stopped == "time"
    assert q.cached("k") is None  # a cut result is not kept as the request's answer


def test_a_cooperative_job_that_ignores_cancel_is_interrupted_after_the_grace():
    q = WorkQueue(workers=1, capacity=2, limit_s=0.2, grace_s=0.3)
    job = q.submit("a", "k", "x", deaf, (), {})
    assert 0.3 < stopped_within(job, 5) + 0.2 < 3


def test_a_job_within_its_limit_is_untouched():
    q = WorkQueue(workers=1, capacity=2, limit_s=5)
    job = q.submit("a", "k", "x", spin, (0.3,), {})
    assert job.future.result(5) == "finished" and job.stopped is None


def test_the_server_limit_is_stated_in_the_readme():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert f"{queue.DEFAULT_LIMIT_S:.0f} seconds" in readme
    assert queue.LIMIT_ENV in readme


PAGE = """
import streamlit as st
from kit import queue
from tests.app.test_queue_time_limit import spin

queue.LIMIT_S = 1.0
queue.work_queue.clear()  # this test's queue, with the short limit
st.write(queue.run("Spin", spin))
st.write("never drawn")
"""


def test_the_page_says_the_request_hit_the_limit_and_stops_cleanly():
    server_limit = queue.LIMIT_S
    try:
        at = AppTest.from_string(PAGE, default_timeout=30).run()
    finally:  # the 1 s limit was the page's own: later tests' live runs were cut by it
        queue.LIMIT_S = server_limit
        queue.work_queue.clear()
    assert not at.exception
    warning = " ".join(w.value for w in at.warning)
    assert "Spin: stopped at the time limit of 1 s per request" in warning
    assert "never drawn" not in [m.value for m in at.markdown]
