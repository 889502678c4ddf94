"""Cost profiles: the memory tracker sees torch allocations, budgets refuse with the
prediction, sweeps trim instead of overrunning, exponents are fitted correctly."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine import profile
from engine.errors import InputError

torch.set_num_threads(1)


def test_peak_memory_sees_torch_allocations_and_frees():
    def work():
        a = torch.ones(1000, 1000)  # 4 MB
        b = a * 2  # 4 MB more, both alive
        del a
        c = b + 1  # a was freed: still 8 MB at most
        return c.view(-1).sum()

    assert profile.peak_memory_bytes(work) == 8_000_000 + 4  # + the 0-d sum


def test_full_attention_peak_matches_its_model():
    p = profile.measure("full", 512, d=32, repeats=1)
    scores = 512 * 512 * 4
    assert scores <= p.peak_bytes <= 1.2 * p.predicted_bytes  # one n × n buffer, in place
    assert p.median_s > 0 and p.flops == pytest.approx(4 * 512 * 512 * 32 + 5 * 512 * 512)


def test_predicted_memory_grows_as_stated():
    full = [profile.predict_bytes("full", n, 64, 1) for n in (8192, 16384)]
    lin = [profile.predict_bytes("linformer", n, 64, 1) for n in (8192, 16384)]
    assert full[1] / full[0] == pytest.approx(4, rel=0.05)  # the n² map dominates q, k, v
    assert lin[1] / lin[0] == pytest.approx(2, rel=0.05)


def test_over_budget_is_refused_with_the_prediction():
    with pytest.raises(InputError, match=r"predicted to need 1\.0\d GiB, over the 0\.50 GiB"):
        profile.check_budget("full", 16384, 64, 1, budget=0.5 * 2**30)
    with pytest.raises(InputError, match=r"Sequence length n must be in 64 … 32768; got 10"):
        profile.measure("full", 10)


@pytest.mark.parametrize(
    "call",
    [
        lambda: list(profile.sweep(["full"], [64], heads=0)),  # was SIGFPE: the process died
        lambda: list(profile.sweep(["full"], [64], d=0)),  # was ZeroDivisionError
        lambda: list(profile.sweep(["full"], [64], d="x")),
        lambda: list(profile.sweep(["full"], [64], repeats=0)),
        lambda: list(profile.sweep(["full"], [64], time_budget_s=float("nan"))),
        lambda: list(profile.sweep(["full"], [64], memory_budget=-1)),
        lambda: list(profile.sweep(["full"], [64], params=[1])),
        lambda: list(profile.sweep(["full"], [64], params={"full": 3})),
        lambda: list(profile.sweep("full", [64])),
        lambda: list(profile.sweep(["full"], 64)),
        lambda: list(profile.sweep(["full"], [2.5])),
        lambda: profile.measure("full", 64, seed="x"),
        lambda: profile.predict_bytes("full", 64, 64, 0),
        lambda: profile.flops("full", float("inf"), 64, 1),
    ],
)
def test_a_call_outside_the_declared_limits_is_refused_before_anything_runs(call):
    with pytest.raises(InputError):
        call()


def test_sweep_trims_over_budget_points_with_a_note():
    items = list(
        profile.sweep(["full", "chunked"], [64, 8192], d=32, repeats=1, memory_budget=64 * 2**20)
    )
    done = {(p.variant, p.n) for p in items if isinstance(p, profile.Point)}
    skipped = [s for s in items if isinstance(s, profile.Skip)]
    assert done == {("full", 64), ("chunked", 64), ("chunked", 8192)}
    assert skipped[0].variant == "full" and "budget" in skipped[0].reason
    assert skipped[0].predicted_bytes > 64 * 2**20
    timed_out = list(profile.sweep(["full"], [64, 128], repeats=1, time_budget_s=0))
    assert all(isinstance(s, profile.Skip) and "time budget" in s.reason for s in timed_out)


def test_exponent_fit_and_expectations():
    ns = np.array([1024, 2048, 4096, 8192])
    assert profile.fit_exponent(ns, 3e-9 * ns**2) == pytest.approx(2)
    assert profile.fit_exponent([1], [1]) is None
    assert profile.expected_exponent("full", ns) == pytest.approx(2, abs=0.01)
    assert profile.expected_exponent("performer", ns) == pytest.approx(1, abs=0.01)
    assert 1.0 <= profile.expected_exponent("reformer", ns) <= 1.2
    pts = [profile.Point("x", int(n), 64, 1, 1e-9 * n, 1e-9 * n, [], 0, 0, 1.0, 0.0) for n in ns]
    with pytest.raises(InputError):
        profile.summarize(pts)  # an unknown variant is refused by the registry
