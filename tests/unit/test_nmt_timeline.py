"""The Bahdanau models' training timelines (issue 21): what ``python -m engine.train nmt``
records beside each checkpoint, that recording never changes the trained weights, and that
"train it now" (``training.live``) is the command line's run, snapshot for snapshot."""

import json

import numpy as np
import pytest
import torch
from safetensors.numpy import load_file

from engine import checkpoints, timeline
from engine.data import enfr
from engine.errors import InputError
from engine.models import registry
from engine.models.cards.nmt import DATE_EXAMPLES
from engine.run import Run
from engine.training import nmt as training

pytestmark = pytest.mark.slow  # --quick and --live trainings: seconds each on an idle CPU


@pytest.fixture(scope="module")
def quick_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("nmt-timeline")
    training.main(["--task", "en-fr", "--quick", "--out-dir", str(d)])
    training.main(["--task", "en-fr", "--no-attention", "--quick", "--out-dir", str(d)])
    return d


def test_the_probes_are_the_cards_examples():
    dates = ["".join(p.src) for p in training.probes("dates")]
    assert dates and set(dates) <= set(DATE_EXAMPLES)
    assert training.probes("en-fr") == list(enfr.EXAMPLES.values())
    (live,) = training.probes("en-fr", live=True)
    vocab = set(w for p in training.slice_splits(0, 300, 20)["train"] for w in p.src)
    assert set(live.src) <= vocab, "the live slice holds every word of its probe"


def test_the_timeline_is_written_beside_the_checkpoint(quick_dir):
    tl = timeline.load("nmt-enfr-additive", quick_dir)
    assert tl.steps[0] == 0 and tl.steps[-1] == training.QUICK["steps"]
    assert all(b > a for a, b in zip(tl.steps, tl.steps[1:], strict=False))
    assert 12 <= len(tl.steps) <= 20
    assert set(tl.metrics) == {"loss", "train_loss", "accuracy", "aer"}
    assert tl.metrics["train_loss"][0] is None  # nothing trained yet at step 0
    assert tl.metrics["loss"][-1] < tl.metrics["loss"][0]  # the held-out loss falls
    assert all(0 <= a <= 1 for a in tl.metrics["aer"] + tl.metrics["accuracy"])
    assert tl.meta["held_out"] == training.QUICK["n_test"]
    meta = json.loads((quick_dir / "nmt-enfr-additive.json").read_text())
    assert tl.meta["command"] == meta["command"]
    for traces in tl.probes:
        for trace, pair in zip(traces, enfr.EXAMPLES.values(), strict=True):
            amap = trace.maps["alignment"]  # the reference fed in: same shape at every step
            assert amap.shape == (1, 1, len(pair.tgt), len(pair.src))
            assert amap.query_labels == pair.tgt and amap.key_labels == pair.src
            np.testing.assert_allclose(amap.weights.sum(-1), 1.0, atol=2e-3)
            assert 0 <= trace.outputs["aer"] <= 1


def test_without_attention_the_timeline_has_curves_only(quick_dir):
    tl = timeline.load("nmt-enfr-none", quick_dir)
    assert set(tl.metrics) == {"loss", "train_loss", "accuracy"}
    assert all(not trace.maps for traces in tl.probes for trace in traces)
    assert all(trace.outputs["translation"] is not None for trace in tl.probes[-1])


def test_recording_does_not_change_the_weights(tmp_path):
    with_tl, without = tmp_path / "with", tmp_path / "without"
    training.main(["--task", "dates", "--quick", "--out-dir", str(with_tl)])
    training.main(["--task", "dates", "--quick", "--out-dir", str(without), "--no-timeline"])
    a = load_file(str(with_tl / "nmt-dates.safetensors"))
    b = load_file(str(without / "nmt-dates.safetensors"))
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert timeline.exists("nmt-dates", with_tl) and not timeline.exists("nmt-dates", without)


def test_a_stopped_run_ends_on_a_snapshot_of_where_it_stopped():
    calls = []
    stop = Run(lambda: len(calls) >= 12, lambda step, loss: calls.append((step, loss)))
    run = training.live("dates", 1, steps=40, run=stop)
    assert run.timeline.steps[-1] == run.record["steps"] == 12
    assert [s for s, _ in calls] == list(range(1, 13))


def test_the_live_run_is_the_command_lines_run(tmp_path):
    """Same seed, same film: the weights and the last map the page's live run ends on are
    those ``python -m engine.train nmt --live`` saves."""
    torch.set_num_threads(1)
    shots = []
    run = training.live("en-fr", 7, steps=14, run=Run(on_snapshot=lambda *s: shots.append(s)))
    assert [s for s, *_ in shots] == run.timeline.steps
    training.main(
        ["--task", "en-fr", "--live", "--seed", "7", "--steps", "14", "--out-dir", str(tmp_path)]
    )
    name = training.checkpoint_name("en-fr", "additive", live=True)
    state, meta = checkpoints.load(name, tmp_path)
    live_state = run.model.state_dict()
    assert all(torch.equal(state[k], live_state[k]) for k in live_state)
    assert meta["command"] == training.command("en-fr", "additive", 7, False, 14, live=True)
    saved = timeline.load(name, tmp_path)
    assert saved.steps == run.timeline.steps and saved.metrics == run.timeline.metrics
    last, live_last = saved.probes[-1][0], run.timeline.probes[-1][0]
    np.testing.assert_allclose(
        last.maps["alignment"].weights, live_last.maps["alignment"].weights, atol=2e-3
    )  # float16 on disk
    assert last.outputs == live_last.outputs


SHIPPED = ("nmt-dates", "nmt-enfr-additive", "nmt-enfr-dot", "nmt-enfr-none")


@pytest.mark.parametrize("name", SHIPPED)
def test_the_shipped_timelines_show_the_model_learning(name):
    card = registry.get(name)
    try:
        tl = card.timeline()
    except InputError:
        pytest.skip(f"no shipped timeline for {name}: {card.train_command}")
    assert tl.meta["command"] == card.train_command
    assert tl.steps[-1] == card.meta["train"]["steps"]
    assert tl.metrics["loss"][-1] < 0.5 * tl.metrics["loss"][0]
    if card.task == "dates":  # from nothing right to nearly every date right
        assert tl.metrics["accuracy"][0] == 0 and tl.metrics["accuracy"][-1] > 0.95
    elif card.aligns:  # the argmax of α moves onto the gold links
        assert tl.metrics["aer"][-1] < tl.metrics["aer"][0] - 0.3
    weights, meta = timeline.paths(name, card.directory or checkpoints.CHECKPOINT_DIR)
    assert weights.stat().st_size + meta.stat().st_size < 400_000  # committed: kept small
