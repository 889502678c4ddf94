"""Grids of independent training jobs, on the engine the field uses for them.

A grid (the variant-quality cells, MemN2N's restarts) is a list of jobs that share
nothing: each trains, writes or returns its result. They run on a local process pool —
one fresh process per job (``max_tasks_per_child=1``: no torch thread pool or memory
carried from one job to the next, and ``ru_maxrss`` is the job's own) — or on a Ray
cluster (``ray_address``: a cluster's address, or ``local`` to start one here), never on a
scheduler of our own.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed


def run(
    fn: Callable,
    jobs: Iterable,
    *,
    workers: int = 2,
    ray_address: str | None = None,
    inline: bool = False,
) -> Iterator[tuple[object, object]]:
    """Yield ``(job, fn(job))`` for every job as it finishes. ``inline`` runs them one by
    one in this process (tests, or a machine with one core to give)."""
    jobs = list(jobs)
    if ray_address:
        yield from _on_ray(fn, jobs, workers, ray_address)
    elif inline:
        for job in jobs:
            yield job, fn(job)
    else:
        ctx = mp.get_context("spawn")  # no forked torch thread pools
        with ProcessPoolExecutor(workers, mp_context=ctx, max_tasks_per_child=1) as pool:
            futures = {pool.submit(fn, job): job for job in jobs}
            for fut in as_completed(futures):
                yield futures[fut], fut.result()


def _on_ray(fn: Callable, jobs: list, workers: int, address: str):
    import ray  # heavy: a cluster client, only for --ray

    if address == "local":
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=address, log_to_driver=False)
    try:
        remote = ray.remote(num_cpus=1, max_calls=1)(fn)  # a fresh worker per job
        pending = {remote.remote(job): job for job in jobs}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            yield pending.pop(done[0]), ray.get(done[0])
    finally:
        ray.shutdown()
