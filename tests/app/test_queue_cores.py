"""A long job takes both cores only while it runs alone (kit.queue.spare_cores)."""

import threading

import torch
from kit import queue


def threads_seen(running: int, others: int) -> tuple[int, int]:
    """The torch threads of a job's thread inside ``spare_cores`` after ``adjust()``, and
    after it left."""
    seen = []

    def job():
        with queue.spare_cores(lambda: running, lambda: others) as adjust:
            adjust()
            seen.append(torch.get_num_threads())
        seen.append(torch.get_num_threads())

    torch.set_num_threads(1)
    worker = threading.Thread(target=job)
    worker.start()
    worker.join()
    return seen[0], seen[1]


def test_alone_it_takes_every_core_and_gives_them_back():
    assert threads_seen(running=1, others=0) == (queue.WORKERS, 1)


def test_beside_another_job_or_a_generation_it_keeps_one():
    assert threads_seen(running=2, others=0) == (1, 1)
    assert threads_seen(running=1, others=3) == (1, 1)


def test_the_queue_counts_the_jobs_running():
    q = queue.WorkQueue(workers=1, capacity=4)
    release = threading.Event()
    first = q.submit("a", "k1", "x", release.wait, (5,), {})
    second = q.submit("b", "k2", "x", release.wait, (5,), {})  # waits for the one worker
    for _ in range(100):
        if q.running() == 1:
            break
        threading.Event().wait(0.02)
    assert q.running() == 1
    release.set()
    first.future.result(5), second.future.result(5)
    assert q.running() == 0


def test_the_chat_batch_takes_every_core_while_the_queue_is_idle(monkeypatch):
    """ATTENTION_STUDIO_BATCH_THREADS: a number is fixed; "auto" asks the queue each time."""
    from state import chat as chat_state

    assert chat_state.batch_threads("3") == 3 and chat_state.batch_threads("0") == 1
    busy = [0]
    monkeypatch.setattr(queue.WorkQueue, "running", lambda self: busy[0])
    threads = chat_state.batch_threads("auto")
    assert threads() == queue.WORKERS
    busy[0] = 1
    assert threads() == 1
