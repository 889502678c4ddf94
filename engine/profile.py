"""Cost profiles: measured time and peak memory vs sequence length, against the models.

Method (so every number can be reproduced):
- time: median of ``repeats`` wall-clock runs (``time.perf_counter``) of the variant's
  output path (no map; with it for a variant that sets ``profile_map``), after one
  untimed warm-up run, with torch held to one thread — on a shared 2-core machine two
  OpenMP threads contending with other work can be 50× slower and noisier than one.
- peak memory: the warm-up run goes through a ``TorchDispatchMode`` that adds up the
  bytes of every tensor storage an aten op creates and subtracts them when the storage
  is freed (a weakref finalizer); the peak of that running total is reported. It sees
  torch's allocations (tracemalloc does not) but not scratch space a single kernel
  allocates and frees internally, nor the Python interpreter's own objects.
- prediction: each variant's memory model (plus q, k, v and the output) is evaluated
  before anything runs; a point over the memory budget is refused with the prediction.
- exponent: least-squares slope of log(time) against log(n); the expected slope is the
  slope of the variant's FLOP model over the same lengths (2 for full attention, 1 for
  linear-time variants, a little above 1 for n log n).
"""

from __future__ import annotations

import contextlib
import math
import statistics
import time
import weakref
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from engine.errors import InputError
from engine.params import Param
from engine.variants.base import FLOAT_BYTES
from engine.variants.registry import get

DEFAULT_LENGTHS = (128, 256, 512, 1024, 2048, 4096)
LENGTH = Param("n", "Sequence length n", 1024, 64, 32768)
LENGTH_LIMITS = (LENGTH.low, LENGTH.high)
MEMORY_BUDGET = 2 * 2**30  # bytes a single profiled run may use
TIME_BUDGET_S = 30.0
EXPONENT_TOLERANCE = 0.2
# What a call may ask, checked before anything runs: a head size of 0 divides by zero in
# the FLOP model and 0 heads stops the process in a kernel (SIGFPE), not with a message.
RUN_PARAMS = (
    Param("d", "Head size d", 64, 1, 1024),
    Param("heads", "Heads", 1, 1, 64),
    Param("repeats", "Timed runs", 3, 1, 100),
    Param("seed", "Seed", 0, 0, 2**31 - 1),
)
BUDGETS = (
    Param("time_budget_s", "Time budget, s", TIME_BUDGET_S, 0.0, 3600.0),
    Param("memory_budget", "Memory budget, bytes", float(MEMORY_BUDGET), 0.0, 64.0 * 2**30),
)


@dataclass
class Point:
    """One measured (variant, n)."""

    variant: str
    n: int
    d: int
    heads: int
    median_s: float
    best_s: float
    times_s: list[float]
    peak_bytes: int
    predicted_bytes: float
    flops: float
    wall_s: float  # the whole measurement: profiled warm-up + timed repeats


@dataclass
class Skip:
    """A (variant, n) not run, and why (with the prediction that decided it)."""

    variant: str
    n: int
    reason: str
    predicted_bytes: float = 0.0
    predicted_s: float = 0.0


@dataclass
class Summary:
    variant: str
    complexity: str
    measured_exponent: float | None
    expected_exponent: float
    within_tolerance: bool | None
    points: int
    notes: list[str] = field(default_factory=list)


@contextlib.contextmanager
def single_thread():
    """Measure with one torch thread, restoring the previous setting afterwards."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


class _AllocationTracker(TorchDispatchMode):
    """Live bytes of the tensor storages aten ops create, and their peak.

    A storage counts from the op that returns it until Python's weakref finalizer sees
    it freed (views share their base's storage, so they never count twice). Dispatch
    modes are per thread, so concurrent app sessions do not see each other's tensors.
    """

    def __init__(self) -> None:
        super().__init__()
        self.live = self.peak = 0
        self.sizes: dict[int, int] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor) and t.device.type == "cpu":
                storage = t.untyped_storage()
                key, size = storage.data_ptr(), storage.nbytes()
                if size and key not in self.sizes:
                    self.sizes[key] = size
                    self.live += size
                    self.peak = max(self.peak, self.live)
                    weakref.finalize(storage, self._free, key)
        return out

    def _free(self, key: int) -> None:
        self.live -= self.sizes.pop(key, 0)


def peak_memory_bytes(fn) -> int:
    """Peak bytes of tensor storage live at once during ``fn()`` (see _AllocationTracker)."""
    tracker = _AllocationTracker()
    with tracker:
        fn()
    return int(tracker.peak)


def warm_tracker() -> float:
    """Load torch's dispatch machinery (once per process, ≈ 4 s here) and the matmul and
    softmax kernels, so that the first measured point does not pay for them."""
    t0 = time.perf_counter()
    peak_memory_bytes(lambda: torch.softmax(torch.ones(64, 64) @ torch.ones(64, 64), dim=-1))
    return time.perf_counter() - t0


def predict_bytes(name: str, n: int, d: int, heads: int, hp: dict | None = None) -> float:
    """Predicted peak bytes: the variant's working set plus q, k, v and the output."""
    n, (d, heads) = LENGTH.check(n), _checked(RUN_PARAMS[:2], d, heads)
    variant = get(name)
    hp = variant.resolve(hp, n)
    return heads * (variant.memory(n, d, hp) + 4.0 * n * d * FLOAT_BYTES)


def flops(name: str, n: int, d: int, heads: int, hp: dict | None = None) -> float:
    n, (d, heads) = LENGTH.check(n), _checked(RUN_PARAMS[:2], d, heads)
    variant = get(name)
    return heads * variant.flops(n, d, variant.resolve(hp, n))


def check_budget(
    name: str, n: int, d: int, heads: int, hp: dict | None = None, budget: float = MEMORY_BUDGET
) -> float:
    """The prediction, or an InputError quoting it when it exceeds ``budget``."""
    need = predict_bytes(name, n, d, heads, hp)
    if need > budget:
        raise InputError(
            "profile.over_budget",
            title=get(name).title,
            n=n,
            need=need / 2**30,
            budget=budget / 2**30,
        )
    return need


def measure(
    name: str,
    n: int,
    *,
    d: int = 64,
    heads: int = 1,
    repeats: int = 3,
    hp: dict | None = None,
    seed: int = 0,
    budget: float = MEMORY_BUDGET,
) -> Point:
    """Median time and measured peak memory of one variant at one length."""
    d, heads, repeats, seed = _checked(RUN_PARAMS, d, heads, repeats, seed)
    (budget,) = _checked(BUDGETS[1:], budget)
    n = LENGTH.check(n)
    variant = get(name)
    hp = variant.resolve(hp, n)
    predicted = check_budget(name, n, d, heads, hp, budget)
    g = torch.Generator().manual_seed(seed)
    q, k, v = torch.randn(3, 1, heads, n, d, generator=g).unbind(0)
    causal = variant.causal_support == "always"
    # A variant whose point is its map (full attention) is profiled holding it.
    want_map = getattr(variant, "profile_map", False)

    def run():
        variant.run(q, k, v, causal=causal, want_map=want_map, hp=hp)

    wall = time.perf_counter()
    with single_thread():
        peak = peak_memory_bytes(run)  # doubles as the warm-up run
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
    return Point(
        name,
        n,
        d,
        heads,
        statistics.median(times),
        min(times),
        times,
        peak,
        predicted,
        heads * variant.flops(n, d, hp),
        time.perf_counter() - wall,
    )


def _checked(params: tuple[Param, ...], *values) -> tuple:
    return tuple(p.check(v) for p, v in zip(params, values, strict=True))


def sweep(
    names,
    lengths=DEFAULT_LENGTHS,
    *,
    d: int = 64,
    heads: int = 1,
    repeats: int = 3,
    params: dict | None = None,
    time_budget_s: float = TIME_BUDGET_S,
    memory_budget: float = MEMORY_BUDGET,
) -> Iterator[Point | Skip]:
    """Measure every variant at every length, shortest first, yielding as it goes.

    Before each point its measurement time is predicted from the variant's previous point
    scaled by the FLOP model; a point that would not fit the remaining time budget, or whose
    predicted memory exceeds the memory budget, is yielded as a ``Skip`` instead.
    """
    if isinstance(names, str) or not isinstance(names, (list, tuple)) or not names:
        raise InputError("profile.no_variants")
    if isinstance(lengths, str) or not isinstance(lengths, (list, tuple, range)) or not lengths:
        raise InputError("profile.no_lengths")
    lengths = sorted(set(LENGTH.check(n) for n in lengths))
    d, heads, repeats = _checked(RUN_PARAMS[:3], d, heads, repeats)
    time_budget_s, memory_budget = _checked(BUDGETS, time_budget_s, memory_budget)
    params = params if params is not None else {}
    if not isinstance(params, dict):
        raise InputError("profile.params")
    warm_tracker()  # a one-off cost of the process, not of the sweep's budget
    start = time.perf_counter()
    last: dict[str, Point] = {}
    for n in lengths:
        for name in names:
            hp = params.get(name)
            need = predict_bytes(name, n, d, heads, hp)
            if need > memory_budget:
                yield Skip(
                    name,
                    n,
                    f"predicted {need / 2**30:.2f} GiB > budget {memory_budget / 2**30:.2f} GiB",
                    predicted_bytes=need,
                )
                continue
            prev = last.get(name)
            guess = 0.0
            if prev is not None:
                guess = prev.wall_s * flops(name, n, d, heads, hp) / max(prev.flops, 1.0)
            left = time_budget_s - (time.perf_counter() - start)
            if guess > left:
                yield Skip(
                    name,
                    n,
                    f"predicted {guess:.1f} s > {max(left, 0):.1f} s left of the time budget",
                    predicted_bytes=need,
                    predicted_s=guess,
                )
                continue
            point = measure(name, n, d=d, heads=heads, repeats=repeats, hp=hp, budget=memory_budget)
            last[name] = point
            yield point


def fit_exponent(ns, values) -> float | None:
    """Slope of log(values) against log(ns), by least squares (None with < 2 points)."""
    if len(ns) < 2:
        return None
    slope, _ = np.polyfit(np.log(np.asarray(ns, float)), np.log(np.asarray(values, float)), 1)
    return float(slope)


def expected_exponent(name: str, ns, d: int = 64, hp: dict | None = None) -> float:
    """Slope of the FLOP model over the same lengths: what the measurement should show."""
    return fit_exponent(ns, [flops(name, n, d, 1, hp) for n in ns]) or 0.0


def summarize(
    points: list[Point],
    params: dict | None = None,
    tolerance: float = EXPONENT_TOLERANCE,
    stat: str = "median_s",
) -> list[Summary]:
    """One row per variant: measured vs expected exponent of time (``stat``) against n."""
    params = params or {}
    rows = []
    for name in dict.fromkeys(p.variant for p in points):
        pts = sorted((p for p in points if p.variant == name), key=lambda p: p.n)
        ns = [p.n for p in pts]
        measured = fit_exponent(ns, [getattr(p, stat) for p in pts])
        expected = expected_exponent(name, ns, pts[0].d, params.get(name))
        ok = None if measured is None else abs(measured - expected) <= tolerance
        notes = [] if measured is not None else ["needs two lengths to fit an exponent"]
        rows.append(
            Summary(name, get(name).time_complexity, measured, expected, ok, len(pts), notes)
        )
    return rows


def as_rows(items) -> list[dict]:
    """Points, Skips or Summaries as plain dicts (tables, CSV, JSON)."""
    return [asdict(x) for x in items]


def human_bytes(b: float) -> str:
    if b <= 0:
        return "0 B"
    unit = min(int(math.log(b, 1024)), 4)
    return f"{b / 1024**unit:.1f} {['B', 'KiB', 'MiB', 'GiB', 'TiB'][unit]}"
