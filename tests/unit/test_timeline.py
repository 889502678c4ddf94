"""engine.timeline: snapshots round-trip, bad files are messages, recording changes nothing."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from engine import timeline
from engine.errors import InputError
from engine.trace import AttentionMap, Trace


def _trace(step: int, n: int = 5) -> Trace:
    rng = np.random.default_rng(step)
    w = rng.random((2, 1, n, n)) + 1e-3
    w /= w.sum(-1, keepdims=True)
    amap = AttentionMap(w, [f"q{i}" for i in range(n)], [f"k{i}" for i in range(n)], "self")
    outputs = {"step": step}
    return Trace("toy", "probe", inputs={"text": "a <b>"}, outputs=outputs, maps={"self": amap})


def _recorded(total: int = 100) -> timeline.Timeline:
    rec = timeline.Recorder("toy", total, n=6)
    for step in range(total + 1):
        if rec.due(step):
            metrics = {"loss": 1.0 / (step + 1)} | ({"accuracy": 0.5} if step >= 10 else {})
            rec.add(step, metrics, [_trace(step), _trace(step + 1, 3)])
    rec.mark("linear_start_end", 40)
    return rec.timeline(command="python -m engine.train toy", seed=0)


def test_snapshot_steps_are_log_spaced_from_zero_to_the_end():
    steps = timeline.snapshot_steps(1000, 16)
    assert steps[0] == 0 and steps[1] == 10 and steps[-1] == 1000 and len(steps) == 16
    gaps = np.diff(steps[1:])
    assert (gaps[1:] >= gaps[:-1]).all()  # growing gaps: log spacing
    assert timeline.snapshot_steps(5) == [0, 1, 2, 3, 4, 5]


def test_round_trip_keeps_steps_metrics_marks_and_maps(tmp_path):
    tl = _recorded()
    timeline.save(tl, "toy", tmp_path)
    back = timeline.load("toy", tmp_path)
    assert back.steps == tl.steps and back.marks == {"linear_start_end": 40}
    assert back.metrics["accuracy"][0] is None and back.metrics["accuracy"][-1] == 0.5
    assert back.meta["command"] == "python -m engine.train toy"
    for before, after in zip(tl.probes, back.probes, strict=True):
        for a, b in zip(before, after, strict=True):
            assert a.inputs == b.inputs and a.outputs == b.outputs
            np.testing.assert_allclose(a.maps["self"].weights, b.maps["self"].weights, atol=2e-3)
    assert back.curve("accuracy")[0][0] == 10


def test_at_picks_the_saved_step_at_or_before():
    tl = _recorded()
    assert tl.at(0) == 0 and tl.at(tl.steps[3]) == 3 and tl.at(tl.steps[3] + 1) == 3
    assert tl.at(-5) == 0 and tl.at(10**9) == len(tl.steps) - 1


@pytest.mark.parametrize("damage", ["missing", "truncated", "json", "steps"])
def test_a_damaged_timeline_is_a_message(tmp_path, damage):
    timeline.save(_recorded(), "toy", tmp_path)
    weights, meta = timeline.paths("toy", tmp_path)
    if damage == "missing":
        weights.unlink()
    elif damage == "truncated":
        weights.write_bytes(weights.read_bytes()[:100])
    elif damage == "json":
        meta.write_text("{not json")
    else:
        data = json.loads(meta.read_text())
        data["steps"][0] = data["steps"][1]  # no longer increasing
        meta.write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        timeline.load("toy", tmp_path)
    assert err.value.message.key == ("timeline.missing" if damage == "missing" else "timeline.bad")


def test_a_timeline_map_pooled_keeps_block_means_and_says_so():
    w = np.random.default_rng(0).random((1, 1, 130, 130))
    w /= w.sum(-1, keepdims=True)
    amap = AttentionMap(w, [str(i) for i in range(130)], [str(i) for i in range(130)], "self")
    small = amap.pooled(side=64)  # what a recorded grid cell keeps (TIMELINE_SIDE)
    assert small.pooling == 3 and small.shape == (1, 1, 44, 44) and "pooled ×3" in small.flags
    assert np.isclose(small.weights[0, 0, 0, 0], w[0, 0, :3, :3].mean(), atol=1e-6)
    assert np.isclose(small.weights[0, 0, -1, -1], w[0, 0, 129, 129])  # a 1×1 last block
    assert small.pooled(side=64) is small


def test_quiet_probe_leaves_the_random_state_alone():
    torch.manual_seed(0)
    timeline.quiet(lambda: torch.rand(3))
    after = torch.rand(1)
    torch.manual_seed(0)
    assert torch.equal(after, torch.rand(1))
