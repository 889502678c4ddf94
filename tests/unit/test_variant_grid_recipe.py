"""The grid's recipe (issue 31): a short causal convolution before each mixer, a
learning-rate sweep kept by validation accuracy, Zoology's grid as a resumable plan; and
``--conv 0 --lr 3e-3`` is the grid as shipped, to the bit."""

from __future__ import annotations

import argparse
import functools
import json
import tomllib
from pathlib import Path

import pytest
import torch

from engine import checkpoints
from engine import jobs as engine_jobs
from engine.data import long_range
from engine.evaluation import variants as evaluation
from engine.models import variant_lm
from engine.models.variant_lm import VariantModel, VariantModelConfig
from engine.training import _grid_plan as plans
from engine.training import variants as grid
from engine.variants.registry import get

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[2]


def test_the_convolution_starts_as_the_identity_and_reads_only_the_past():
    torch.manual_seed(0)
    plain = VariantModel(VariantModelConfig(vocab=long_range.VOCAB, n_max=64))
    torch.manual_seed(0)
    conv = VariantModel(VariantModelConfig(vocab=long_range.VOCAB, n_max=64, conv=4))
    x, _ = long_range.get("mqar-64-4").batch(2, 0)
    assert torch.equal(plain(x)[0], conv(x)[0])  # the same model at step 0, same init
    assert set(conv.state_dict()) - set(plain.state_dict()) == {
        f"blocks.{i}.conv.{p}" for i in (0, 1) for p in ("weight", "bias")
    }
    layer = conv.blocks[0].conv
    with torch.no_grad():
        layer.weight.normal_()
    u = torch.randn(1, 12, 64)
    later = u.clone()
    later[:, 6:] += 1.0
    assert torch.equal(layer(u)[:, :6], layer(later)[:, :6])  # causal: no future leaks in
    assert not torch.equal(layer(u)[:, 6:9], layer(later)[:, 6:9])
    shifted = u.clone()
    shifted[:, 2] += 1.0  # reaches t = 2, 3, 4, 5 (kernel 4), not t = 6
    assert torch.equal(layer(u)[:, 6:], layer(shifted)[:, 6:])


def test_a_shipped_cell_loads_without_a_convolution_and_scores_as_recorded():
    name = "control-128-full-s0"
    model, meta = variant_lm.load(name)
    assert "conv" not in meta["config"] and all(b.conv is None for b in model.blocks)
    assert variant_lm.recipe_of(meta) == {"conv": 0, "lrs": [3e-3], "lr": 3e-3}
    cell = evaluation.rescore(name, variant_lm.OUT_DIR)
    assert cell["accuracy"] == meta["accuracy"] and cell["recipe"]["conv"] == 0
    # Its recorded command predates the recipe's defaults: the flags that reproduce it.
    assert cell["command"] == meta["command"] + " --conv 0 --lr 0.003"


@pytest.mark.timeout(300)
def test_conv_0_at_one_rate_trains_the_shipped_cell_bit_for_bit(tmp_path, monkeypatch):
    monkeypatch.setattr(grid.grid_jobs, "run", functools.partial(engine_jobs.run, inline=True))
    argv = ["--task", "control-128", "--variant", "full", "--seeds", "0", "--jobs", "1"]
    threads = torch.get_num_threads()
    try:
        assert grid.main([*argv, "--conv", "0", "--lr", "3e-3", "--out-dir", str(tmp_path)]) == 0
    finally:
        torch.set_num_threads(threads)
    ours, meta = checkpoints.load("control-128-full-s0", tmp_path)
    shipped, old = checkpoints.load("control-128-full-s0", variant_lm.OUT_DIR)
    # Bit for bit on the CPU that trained it; another CPU's kernels sum in another order
    # (on an AMD EPYC the largest weight differs from the shipped one by 6e-4): the same weights
    # to a training run's rounding, and the same measured accuracy within one example in 500.
    assert set(ours) == set(shipped)
    worst = max(float((ours[k] - shipped[k]).abs().max()) for k in ours)
    assert all(torch.allclose(ours[k], shipped[k], rtol=1e-2, atol=5e-3) for k in ours), worst
    assert meta["schedule"] == old["schedule"]
    assert abs(meta["accuracy"] - old["accuracy"]) <= 0.002
    assert meta["recipe"] == {"conv": 0, "lrs": [3e-3], "lr": 3e-3}


@pytest.mark.timeout(300)
def test_a_cell_trained_before_its_variant_learned_is_reproduced_frozen(tmp_path, monkeypatch):
    """GLA's gate is learned in the grid's models now; a shipped cell trained before that
    names ``--frozen-variant`` in its command, and that command trains it again."""
    name = "control-128-gla-s0"
    old = checkpoints.load_meta(name, variant_lm.OUT_DIR)
    assert variant_lm.frozen(old) and not old["config"].get("variant")
    command = variant_lm.command_of(old)
    assert command.endswith(" --frozen-variant --conv 0 --lr 0.003")
    monkeypatch.setattr(grid.grid_jobs, "run", functools.partial(engine_jobs.run, inline=True))
    argv = ["--task", "control-128", "--variant", "gla", "--seeds", "0", "--jobs", "1"]
    argv += ["--frozen-variant", "--conv", "0", "--lr", "3e-3", "--out-dir", str(tmp_path)]
    threads = torch.get_num_threads()
    try:
        assert grid.main(argv) == 0
    finally:
        torch.set_num_threads(threads)
    ours, meta = checkpoints.load(name, tmp_path)
    shipped, _ = checkpoints.load(name, variant_lm.OUT_DIR)
    assert set(ours) == set(shipped) and not any(".learned." in k for k in ours)
    assert all(torch.allclose(ours[k], shipped[k], rtol=1e-2, atol=5e-3) for k in ours)
    assert abs(meta["accuracy"] - old["accuracy"]) <= 0.002
    assert variant_lm.command_of(meta) == meta["command"] and "--frozen-variant" in meta["command"]
    assert meta["learned"] == [] and variant_lm.frozen(meta)
    assert not variant_lm.frozen({**meta, "learned": ["gate_W1", "gate_W2", "gate_b"]})
    # Without the flag the same cell is another model (the gate learned): not done, trained.
    job = grid.Job("gla", "control-128", 0, grid.schedule_for("control-128"), str(tmp_path), "")
    assert job.keeps_seeded is False and grid.Job(**{**job.__dict__, "frozen": True}).keeps_seeded
    learned = VariantModel(VariantModelConfig(vocab=long_range.VOCAB, variant="gla"))
    assert {k for k in learned.state_dict() if ".learned." in k} == {
        f"blocks.{i}.learned.{p}" for i in (0, 1) for p in ("gate_W1", "gate_W2", "gate_b")
    }


def test_the_rate_is_kept_by_validation_never_by_test():
    runs = {
        1e-3: {"validation_accuracy": 0.5, "accuracy": 0.9},
        1e-2: {"validation_accuracy": 0.6, "accuracy": 0.1},
        1e-4: {"validation_accuracy": 0.6, "accuracy": 0.2},
    }
    assert variant_lm.best_lr(runs) == 1e-2  # ties: the first in the sweep's order
    # Tied on validation, the run that ended lower on its training loss is kept.
    runs[1e-2]["loss_curve"], runs[1e-4]["loss_curve"] = [[0, 4.2], [99, 0.02]], [[99, 0.001]]
    assert variant_lm.best_lr(runs) == 1e-4
    seeds = {variant_lm.VALID_SEED, variant_lm.TEST_SEED}
    assert len(seeds) == 2 and variant_lm.VALID_SEED >= 7 * 1_000_000  # past every train batch


def test_zoologys_plan_is_its_published_grid():
    points = {(p.task, p.width): p.seeds for p in plans.ZOOLOGY.points}
    assert {long_range.get(t).n: long_range.get(t).pairs for t, _ in points} == {
        64: 4,
        128: 8,
        256: 16,
    }
    assert {w for _, w in points} == {32, 64, 128} and len(points) == 9
    assert points[plans.ZOOLOGY_TUNE] == (0, 1)
    assert sum(len(s) for s in points.values()) == 10
    assert plans.ZOOLOGY_LRS == (1e-4, 4.6e-4, 2.2e-3, 1e-2)
    for name, hp in grid.BUDGETS.items():  # every budget is valid at every plan length
        for task, _ in points:
            get(name).resolve(hp, long_range.get(task).n)


def _args(tmp_path, **kw):
    args = dict(
        plan="zoology",
        task=grid.GRID_TASKS,
        variant=["full"],
        seeds=[0],
        steps=3,
        width=[64],
        conv=4,
        lr=[1e-3, 1e-2],
        quick=True,
        jobs=1,
        ray=None,
        out_dir=tmp_path,
    )
    return argparse.Namespace(**{**args, **kw})


@pytest.mark.timeout(300)
def test_the_plan_tunes_once_keeps_the_best_rate_and_resumes(tmp_path, monkeypatch):
    monkeypatch.setattr(grid.grid_jobs, "run", functools.partial(engine_jobs.run, inline=True))
    threads = torch.get_num_threads()
    lines: list[str] = []
    try:
        done = grid.train(_args(tmp_path), log=lines.append)
    finally:
        torch.set_num_threads(threads)
    assert len(done) == 10 and len(lines) == 2 + 10  # one line per tuning run and cell
    # Every rate's JSON and timeline stay; the weights are the cells' alone.
    assert checkpoints.available("", tmp_path / "tune") == []
    assert len(list((tmp_path / "tune").glob("*-timeline.json"))) == 2
    runs = {
        lr: json.loads((tmp_path / "tune" / f"mqar-256-16-full-s0-lr{lr:g}.json").read_text())
        for lr in (1e-3, 1e-2)
    }
    kept = variant_lm.best_lr(runs)
    names = checkpoints.available("", tmp_path)
    assert len(names) == 10 and "mqar-256-16-full-s1" in names
    for name in names:
        meta = json.loads((tmp_path / f"{name}.json").read_text())
        assert meta["recipe"]["conv"] == 4 and meta["config"]["conv"] == 4
        assert meta["recipe"]["lr"] == kept == meta["schedule"]["lr"]
        assert meta["recipe"]["tuned_at"] == "mqar-256-16, d = 64, seed 0"
        assert f"--conv 4 --lr {kept:g}" in meta["command"]
    # The tuning point's seed 0 is the kept tuning run itself: its score, its curve.
    cell = json.loads((tmp_path / "mqar-256-16-full-s0.json").read_text())
    assert cell["accuracy"] == runs[kept]["accuracy"]
    assert cell["validation_accuracy"] == runs[kept]["validation_accuracy"]
    assert (tmp_path / "mqar-256-16-full-s0-timeline.json").exists()
    # Evaluated as the plan: every cell there, each rescored from its float16 weights.
    result = evaluation.evaluate(tmp_path, plan="zoology")
    assert result["missing_cells"] == [
        variant_lm.checkpoint_name(p.task, v, s, p.width)
        for p in plans.ZOOLOGY.points
        for v in grid.BUDGETS
        for s in p.seeds
        if v != "full"
    ]
    for c in result["cells"]:
        assert c["accuracy"] == pytest.approx(c["trained_accuracy"], abs=1e-6)
    # A second run finds everything done; another recipe is not mistaken for this one.
    lines.clear()
    try:
        grid.train(_args(tmp_path), log=lines.append)
    finally:
        torch.set_num_threads(threads)
    assert len(lines) == 12 and all("done before" in ln or "kept" in ln for ln in lines)
    meta = json.loads((tmp_path / "mqar-64-4-full-s0-d32.json").read_text())
    other = plans.Recipe(0, (1e-3, 1e-2)).record(kept)
    assert plans.is_done(tmp_path, "mqar-64-4-full-s0-d32", other, meta["schedule"]) is None
    # Nor another budget of the same variant (a grid_hp changed since): trained again.
    same = (tmp_path, "mqar-64-4-full-s0-d32", meta["recipe"], meta["schedule"])
    assert plans.is_done(*same, params=meta["params"]) == meta
    assert plans.is_done(*same, params={**meta["params"], "block": 7}) is None
    # A rule of keeping that now prefers a rate whose weights were dropped: the tuning
    # point's cell is trained again at that rate instead of adopted.
    dropped = next(lr for lr in runs if lr != kept)
    cells = grid.Cells(_args(tmp_path), plans.Recipe(4, (1e-3, 1e-2)), plans.ZOOLOGY)
    monkeypatch.setattr(grid, "best_lr", lambda sweep: dropped)
    tuned = [(j, runs[j.schedule.lr]) for j in cells.tuning()]
    jobs, adopted = cells.grid(tuned)
    assert not adopted and len(jobs) == 10
    assert ("mqar-256-16", 0, dropped) in {(j.task, j.seed, j.schedule.lr) for j in jobs}


def test_every_shipped_cell_has_the_budget_its_variant_declares_today():
    """A cell's recorded command trains it again only while its variant's grid budget is
    the one it was trained with: MLA's latent and differential attention's head norm once
    changed under cells that kept the old values."""
    cells = [
        json.loads(path.read_text())
        for path in sorted(variant_lm.OUT_DIR.rglob("*.json"))
        if "-timeline" not in path.name and path.parent.name != "tune"
    ]
    cells = [c for c in cells if c.get("family") == "variant-quality"]
    assert len(cells) >= 230 + 230 + 4 * 23  # before the recipe, Zoology's, the ablation
    for c in cells:
        head = c["config"]["d_model"] // c["config"]["n_heads"]
        assert c["params"] == get(c["variant"]).grid_hp(head), c["command"]


def test_the_shipped_ablation_covers_every_variant_of_the_grid():
    """Each folder that takes a part of the recipe away scores every variant the recipe's
    folder does, at its tuning point: the verdict's "which part matters" has no gap."""
    found = variant_lm.plan_results("zoology")
    recipe = variant_lm.recipe_folder(variant_lm.tuning("zoology"))
    grid_variants = {c["variant"] for c in found[recipe]["cells"]}
    assert len(grid_variants) == len(grid.BUDGETS)
    ablation = {folder: data for folder, data in found.items() if folder != recipe}
    assert set(ablation) == {f"conv{k}-lr0.003{s}" for k in (0, 4) for s in ("", "-steps360")}
    for folder, data in ablation.items():
        at = {(c["variant"], c["task"], c["width"], c["seed"]) for c in data["cells"]}
        assert at == {(v, "mqar-256-16", 64, 0) for v in grid_variants}, folder


def test_the_ablations_are_flags_with_a_folder_each(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(grid, "train", lambda args, log=print: seen.append(args) or [])
    steps = ["--conv", "0", "--lr", "3e-3", "--steps", "360"]  # the grid before the recipe
    for flags in ([], ["--conv", "0"], ["--lr", "3e-3"], ["--conv", "0", "--lr", "3e-3"], steps):
        assert grid.main(["--plan", "zoology", *flags]) == 0
    dirs = [a.out_dir for a in seen]
    assert len(set(dirs)) == 5 and all(d.parent == variant_lm.OUT_DIR / "zoology" for d in dirs)
    # Other steps are another recipe's cells: a folder of their own, never the plan's.
    assert dirs[-1].name == dirs[-2].name + "-steps360"
    assert [(a.conv, a.lr) for a in seen] == [
        (4, list(plans.ZOOLOGY_LRS)),
        (0, list(plans.ZOOLOGY_LRS)),
        (4, [3e-3]),
        (0, [3e-3]),
        (0, [3e-3]),
    ]
    one = grid.Cells(_args(tmp_path, lr=[3e-3]), plans.Recipe(4, (3e-3,)), plans.ZOOLOGY)
    assert one.tuning() == []  # one rate: nothing to tune
    jobs, adopted = one.grid([])
    assert len(jobs) == 10 and not adopted and {j.schedule.lr for j in jobs} == {3e-3}


def test_evaluating_a_plan_never_replaces_the_grids_result_file(tmp_path):
    """``python -m engine.evaluate variants --plan zoology --save`` writes a file of its own
    per recipe folder, named by the one convention; without a plan, the grid's file."""
    from engine import checkpoints
    from engine.evaluation import variants as evaluation
    from engine.models import variant_lm

    assert evaluation.result_name(None, tmp_path) == variant_lm.RESULT
    folder = tmp_path / "conv4-lr0.0001-0.00046-0.0022-0.01"
    name = evaluation.result_name("zoology", folder)
    assert name != variant_lm.RESULT
    assert name == checkpoints.result_name("variants", "zoology-" + folder.name)
    ablation = evaluation.result_name("zoology", tmp_path / "conv0-lr0.0001-0.00046-0.0022-0.01")
    assert ablation != name


def test_the_plans_tuning_runs_are_read_with_the_rate_kept_by_validation(tmp_path):
    """``variant_lm.tuning`` reads a plan's tuning JSONs as the plan writes them; a variant's
    kept rate is marked only once every rate of its recipe is trained, by validation."""
    lrs = [1e-4, 4.6e-4, 2.2e-3, 1e-2]
    tune = tmp_path / "conv4-lr" / "tune"
    tune.mkdir(parents=True)

    def run(variant, lr, val, acc):
        meta = dict(
            variant=variant,
            task="mqar-256-16",
            width=64,
            status="trained",
            accuracy=acc,
            validation_accuracy=val,
            recipe=dict(conv=4, lr=lr, lrs=lrs),
        )  # noqa: E501
        (tune / f"mqar-256-16-{variant}-s0-lr{lr:g}.json").write_text(json.dumps(meta))

    for lr, val in zip(lrs, (0.1, 0.9, 0.95, 0.2), strict=True):
        run("deltanet", lr, val, val - 0.01)
    run("gla", 1e-4, 0.02, 0.02)  # one rate of four so far
    (tune / "mqar-256-16-gla-s0-lr0.01.json").write_text("{ truncated")  # being written
    rows = variant_lm.tuning(directory=tmp_path)
    assert [(r["variant"], r["lr"]) for r in rows] == [("deltanet", lr) for lr in lrs] + [
        ("gla", 1e-4)
    ]
    assert [r["lr"] for r in rows if r["kept"]] == [2.2e-3]  # by validation, never the test
    assert not any(r["kept"] for r in rows if r["variant"] == "gla")


def test_an_ablation_folder_is_told_by_its_cells_recipe_in_words():
    """A column of the verdict names a folder; the words under the table say its recipe,
    steps included (a folder's name says them only when they are not the plan's)."""
    from engine.analysis import recall_state

    cells = [dict(variant="gla", recipe=dict(conv=0, lrs=[3e-3], lr=3e-3), steps=360)]
    recipe = recall_state.folder_recipe({"cells": cells})
    assert recipe == {"conv": 0, "lrs": [3e-3], "steps": 360}
    assert recall_state.folder_recipe({"cells": []}) is None
    said = recall_state.recipe_words("conv0-lr0.003-steps360", recipe)
    assert said == "`conv0-lr0.003-steps360`: no convolution, one rate (0.003), 360 steps"
    # The page says it with its own phrases, the same keys: in English, the same words.
    english = tomllib.loads((ROOT / "app/locales/en/variants_verdict.toml").read_text())
    assert {key: english[key] for key in recall_state.RECIPE_PHRASES} == recall_state.RECIPE_PHRASES
    sweep = {"conv": 4, "lrs": list(plans.ZOOLOGY_LRS), "steps": 2000}
    assert "a width-4 convolution, the best of 4 rates, 2,000 steps" in recall_state.recipe_words(
        "conv4", sweep
    )
