"""The variant-quality grid: the small model trains with every variant, jobs run on a
process pool and on Ray, checkpoints are safetensors + JSON, evaluate reproduces them."""

from __future__ import annotations

import json

import pytest
import torch

from engine import checkpoints, timeline
from engine.data import long_range
from engine.evaluation import variants as evaluation
from engine.models.variant_lm import VariantModel, VariantModelConfig
from engine.training import variants as grid
from engine.variants.registry import get

torch.set_num_threads(1)


def test_grid_covers_every_variant_the_issue_names():
    assert set(grid.BUDGETS) >= {
        "full",
        "flash",
        "chunked",
        "longformer",
        "bigbird",
        "sparse",
        "linformer",
        "performer",
        "reformer",
        "linear",
        "mamba",
    }
    assert len(grid.SEEDS) >= 2


def test_every_registered_variant_is_a_cell_or_says_why_not():
    from engine.variants.registry import names

    assert set(grid.BUDGETS) | set(grid.NOT_IN_GRID) == set(names())
    assert not set(grid.BUDGETS) & set(grid.NOT_IN_GRID)
    for name, hp in grid.BUDGETS.items():  # every budget is valid at every grid task's n
        for task in grid.GRID_TASKS:
            get(name).resolve(hp, long_range.get(task).n)


def test_flash_and_full_give_the_same_model_outputs_and_gradients():
    """FlashAttention must equal full attention inside the trained model, gradients too."""
    from engine.variants.registry import attend_fn

    task = long_range.Task("t", "mqar", 48, 6)
    x, y = task.batch(2, seed=0)
    grads = []
    for name in ("full", "flash"):
        torch.manual_seed(0)
        model = VariantModel(VariantModelConfig(vocab=long_range.VOCAB, n_max=48, d_model=16))
        logits, _ = model(x, attend_fn(name))
        torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten()).backward()
        grads.append((logits.detach(), model.blocks[0].attn.W_Q.weight.grad.clone()))
    assert torch.allclose(grads[0][0], grads[1][0], atol=1e-5)
    assert torch.allclose(grads[0][1], grads[1][1], atol=1e-5)


def test_model_returns_each_layers_map_on_request():
    from engine.variants.registry import attend_fn

    model = VariantModel(VariantModelConfig(vocab=long_range.VOCAB, n_max=32, d_model=16))
    x, _ = long_range.get("control-128").batch(1, 0)
    logits, maps = model(x[:, :32], attend_fn("longformer", {"window": 2}), want_weights=True)
    assert logits.shape == (1, 32, long_range.VOCAB) and len(maps) == model.cfg.n_layers
    assert maps[0].shape == (1, 2, 32, 32)
    assert torch.allclose(maps[0].sum(-1), torch.ones(1))


def _quick(tmp_path, *extra):
    from engine.training.variants import main

    argv = ["--quick", "--task", "control-128", "--variant", "full", "linear"]
    argv += ["--seeds", "0", "1", "--lr", "3e-3", "--out-dir", str(tmp_path), *extra]
    assert main(argv) == 0
    names = checkpoints.available("", tmp_path)
    assert len(names) == 4
    return names


def test_quick_grid_on_the_process_pool_writes_reproducible_checkpoints(tmp_path, capsys):
    names = _quick(tmp_path)
    meta = json.loads((tmp_path / f"{names[0]}.json").read_text())
    assert meta["family"] == "variant-quality" and meta["weights_dtype"] == "float16"
    assert meta["command"].startswith("python -m engine.train variants ")
    assert "--quick" in meta["command"] and "--seeds" in meta["command"]
    assert meta["seconds_per_step"] > 0 and meta["peak_rss_mib"] > 0
    result = evaluation.evaluate(tmp_path)
    assert {c["variant"] for c in result["cells"]} == {"full", "linear"}
    for cell in result["cells"]:  # rescored from the shipped weights: the same numbers
        assert cell["accuracy"] == pytest.approx(cell["trained_accuracy"], abs=1e-6)
    row = result["table"]["full"]["control-128"]
    assert row["seeds"] == [0, 1] and row["spread"] >= 0
    assert result["lra_published"]["label"] == "published (LRA), not ours"
    # LRA's published averages sit in their own column, each beside its own variant only.
    lra = result["lra_published"]["average_accuracy"]
    assert "full" in lra and "linear" not in lra  # one row of each kind in the quick grid
    rows = [line.split("|") for line in evaluation.markdown(result).splitlines()[2:]]
    last = {cells[1].strip(): cells[-2].strip() for cells in rows}
    assert last == {v: str(lra[v]) if v in lra else "—" for v in result["table"]}


@pytest.mark.timeout(120)
def test_quick_grid_on_a_local_ray_cluster(tmp_path):
    pytest.importorskip("ray")
    _quick(tmp_path, "--ray", "local", "--jobs", "2")


def test_evaluate_cli_prints_one_json_object_last(tmp_path, capsys):
    _quick(tmp_path)
    capsys.readouterr()
    assert evaluation.main(["--dir", str(tmp_path)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert json.loads(last)["family"] == "variant-quality"


def test_a_cells_card_traces_its_maps_on_a_held_out_example(tmp_path):
    from engine.errors import InputError
    from engine.models import registry
    from engine.training.variants import main

    argv = ["--quick", "--task", "mqar-256", "--variant", "linformer", "--seeds", "0"]
    argv += ["--lr", "3e-3"]
    out = tmp_path / "variants"  # the grid's folder under a checkpoints folder
    assert main([*argv, "--jobs", "1", "--out-dir", str(out)]) == 0
    card = registry.get("mqar-256-linformer-s0", tmp_path)  # not listed, but found
    assert "mqar-256-linformer-s0" not in registry.names(tmp_path)
    assert (card.family, card.task, card.variant) == ("variant-quality", "mqar-256", "linformer")
    tr = card.trace(card.examples[0].input)
    amap = tr.maps["attention"]
    assert amap.implied and not amap.exact  # Linformer's map is implied, and says so
    assert amap.weights.shape[0] == 1 and amap.weights.shape[-1] == len(amap.key_labels)
    assert len(tr.outputs["answers"]) == len(tr.outputs["predictions"]) == 8  # 32 pairs / 4
    assert all(a.startswith("v") for a in tr.outputs["answers"])
    assert amap.key_labels[0].startswith("k") and amap.key_labels[1].startswith("v")
    with pytest.raises(InputError, match="No trained cell"):
        registry.cell("mqar-256-performer-s0", tmp_path)
    for example in ("8", "x", ""):  # the quick test set, hence the probe, is 8 examples
        with pytest.raises(InputError):
            card.trace(example)
    assert card.trace("7").inputs["example"] == 7
    # The maps show the example the cell's timeline shows (one probe, not a second draw).
    last = timeline.load("mqar-256-linformer-s0", out).probes[-1][0].outputs
    for key in ("asked", "answers", "predictions", "evidence"):
        assert tr.outputs[key] == last[key]


def test_the_probe_is_one_batch_of_the_test_seed():
    from engine.models import variant_lm

    task = long_range.get("mqar-256")
    x, y = variant_lm.probe_batch(task, 256)
    ref = task.batch(variant_lm.PROBE_SIZE, variant_lm.TEST_SEED)
    assert x.shape[0] == variant_lm.PROBE_SIZE and torch.equal(x, ref[0]) and torch.equal(y, ref[1])
    assert variant_lm.probe_batch(task, 8)[0].shape[0] == 8  # a quick run's test set is all of it


def test_a_task_schedule_is_the_same_for_every_variant():
    """copy-128 trains longer than the recall tasks, and every variant gets that schedule."""
    import argparse

    args = argparse.Namespace(
        task=["copy-128", "mqar-256"],
        variant=["full", "mamba"],
        seeds=[0],
        steps=0,
        quick=False,
        out_dir="x",
        width=[64],
        plan=None,
        conv=4,
        lr=[3e-3],
    )
    jobs, _ = grid.Cells(args, grid.plans.Recipe(4, (3e-3,)), grid.plan_of(args)).grid([])
    by_task = {(j.task, j.schedule.steps, j.schedule.batch) for j in jobs}
    assert by_task == {("copy-128", 400, 16), ("mqar-256", grid.RECALL_STEPS, 8)}
    assert grid.schedule_for("copy-128", quick=True) == grid.QUICK
    assert grid.schedule_for("copy-128", steps=7).steps == 7
    assert "copy-128" in grid.GRID_TASKS


def test_a_cell_saves_its_timeline_and_recording_changes_no_weight(tmp_path, monkeypatch):
    """The timeline's snapshots run under no_grad with the random state restored, so the
    weights equal those of a run that records nothing (Reformer draws random hashes)."""
    from engine import timeline

    def job(out):  # run in this process, so that the monkeypatch below reaches it
        sch = grid.schedule_for("mqar-256", quick=True, steps=30)
        return grid.Job("reformer", "mqar-256", 0, sch, str(tmp_path / out), "cmd", True)

    threads = torch.get_num_threads()
    try:
        grid.run_job(job("on"))
        monkeypatch.setattr(timeline.Recorder, "due", lambda self, step: False)
        grid.run_job(job("off"))
    finally:
        torch.set_num_threads(threads)
    name = "mqar-256-reformer-s0"
    on, _ = checkpoints.load(name, tmp_path / "on")
    off, _ = checkpoints.load(name, tmp_path / "off")
    assert all(torch.equal(on[k], off[k]) for k in on)
    tl = timeline.load(name, tmp_path / "on")
    assert tl.steps[0] == 0 and tl.steps[-1] == 30 and len(tl.steps) >= 8
    assert set(tl.metrics) == {"loss", "accuracy", "evidence_mass"}
    assert all(0 <= a <= 1 for a in tl.metrics["accuracy"])
    amap = tl.probes[-1][0].maps["attention"]
    assert amap.weights.shape[-1] <= grid.TIMELINE_SIDE and amap.pooling >= 2
    meta = json.loads((tmp_path / "on" / f"{name}.json").read_text())
    assert tl.meta["command"] == meta["command"]
    # The last snapshot is the shipped float16 model: its probe accuracy is the test's
    # first PROBE_SIZE examples (the quick test set is 8, all of them).
    assert tl.metrics["accuracy"][-1] == pytest.approx(meta["accuracy"], abs=1e-6)
    assert checkpoints.available("", tmp_path / "on") == [name]  # a timeline is no cell


def test_the_width_sweep_names_its_cells_and_widens_the_model(tmp_path):
    from engine.training.variants import main

    argv = ["--quick", "--task", "mqar-256", "--variant", "full", "--seeds", "0", "--jobs", "1"]
    argv += ["--lr", "3e-3"]
    assert main([*argv, "--width", "64", "24", "--out-dir", str(tmp_path)]) == 0
    names = checkpoints.available("", tmp_path)
    assert names == ["mqar-256-full-s0", "mqar-256-full-s0-d24"]
    meta = json.loads((tmp_path / "mqar-256-full-s0-d24.json").read_text())
    assert meta["config"]["d_model"] == 24 and meta["config"]["d_ff"] == 48
    assert meta["command"].endswith("--width 24 --conv 4 --lr 0.003 --quick")
    assert not (tmp_path / "mqar-256-full-s0-d24-timeline.json").exists()  # the grid's only
    assert (tmp_path / "mqar-256-full-s0-timeline.json").exists()
    with pytest.raises(SystemExit):
        main([*argv, "--width", "7"])
