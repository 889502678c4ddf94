"""Memory page costs: answer + Trace capture, and UMAP of 2,000 memories (cold and warm).

``python bench/memn2n.py [--model memn2n-joint]``; the last stdout line is one JSON object.
The first UMAP call is timed twice: in this process (numba's disk cache as it is) and,
with ``--cold``, in a child process with an empty cache directory, which is what a
brand-new machine pays once.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from _save import save

CHILD = """
import time, json
t0 = time.perf_counter()
from engine import projection
import umap
t1 = time.perf_counter()
first = projection.warm_up()
print(json.dumps({"import_s": t1 - t0, "first_fit_s": first}))
"""


def first_call(cache_dir: str) -> dict:
    env = dict(os.environ, ATTENTION_STUDIO_CACHE=cache_dir)
    env.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run(
        [sys.executable, "-c", CHILD],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None, help="checkpoint (default: joint, else any)")
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--cold", action="store_true", help="also time a first call, empty cache")
    args = ap.parse_args()

    import numpy as np
    import torch

    torch.set_num_threads(1)
    from engine import projection
    from engine.data.babi import dataset
    from engine.models import registry

    names = [c.name for c in registry.by_family("memn2n")]
    name = args.model or ("memn2n-joint" if "memn2n-joint" in names else names[0])
    card = registry.get(name)
    reader = card.load()
    task = reader.meta["tasks"][0]
    samples = dataset(task, "test")[: args.repeats]
    card.trace(
        samples[0], model=reader
    )  # first call allocates; not what a user waits for each time
    times = []
    for s in samples:
        t0 = time.perf_counter()
        card.trace(s, model=reader)
        times.append(1000 * (time.perf_counter() - t0))

    result = {
        "model": name,
        "answer_capture_ms_median": round(statistics.median(times), 3),
        "answer_capture_ms_p90": round(float(np.percentile(times, 90)), 3),
    }

    # The first UMAP call of this process: numba's disk cache (if any) is what decides it.
    t0 = time.perf_counter()
    import umap  # noqa: F401

    result["umap_import_s"] = round(time.perf_counter() - t0, 3)
    result["umap_first_call_s"] = round(projection.warm_up(), 3)

    vecs, tasks = [], reader.meta["tasks"]
    for t in tasks:
        vecs += reader.memories(dataset(t, "test")[: 2_000 // len(tasks)])
    X = np.concatenate(vecs)[:2_000]
    fits = []
    for seed in range(3):
        t0 = time.perf_counter()
        projection.umap_2d(X, seed=seed)
        fits.append(time.perf_counter() - t0)
    result["umap_points"] = int(len(X))
    result["umap_2000_warm_s_median"] = round(statistics.median(fits), 3)
    if args.cold:
        with tempfile.TemporaryDirectory() as d:
            cold = first_call(d)
            warm_disk = first_call(d)  # a restart: same cache directory, new process
        result["cold_import_s"] = round(cold["import_s"], 3)
        result["cold_first_fit_s"] = round(cold["first_fit_s"], 3)
        result["restart_first_fit_s"] = round(warm_disk["first_fit_s"], 3)
    print(json.dumps(save(result, "memn2n-cold" if args.cold else "memn2n")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
