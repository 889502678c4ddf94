"""``python -m engine.train variants [--plan zoology] [--task …] [--variant …] [--conv K]
[--lr LR …] [--quick] [--jobs N] [--ray ADDRESS]``.

The variant-quality grid: one small model (engine.models.variant_lm; same depth, width,
steps, optimiser and seeds in every cell) trained with each attention variant on each
long-range task (engine.data.long_range). Every cell is an independent job: a local
process pool by default (``--jobs``, one torch thread each), or a Ray cluster with
``--ray ADDRESS`` (``--ray local`` starts one on this machine). A job trains, scores the
fixed test set and writes ``assets/checkpoints/variants/<task>-<variant>-s<seed>``
(safetensors in float16 + JSON, family "variant-quality", with the command that
reproduces it). Results are scored after the float16 rounding, so the shipped weights
reproduce them exactly.

Every cell is trained with a recipe (engine.training._grid_plan): by default the field's,
a short convolution before each mixer (``--conv 4``) and the best of Zoology's four
learning rates by validation accuracy (``--lr 1e-4 4.6e-4 2.2e-3 1e-2``: each rate is a
tuning run of its own under ``<out-dir>/tune``, seed 0 at the grid's width, and the
other seeds and widths reuse the kept rate). ``--conv 0 --lr 3e-3`` is the grid as it was
before the recipe, to the bit. ``--plan zoology`` trains Zoology's published grid instead
of ``--task``; a cell whose checkpoint and JSON exist with the same recipe and schedule is
skipped, so a killed run continues where it stopped. One line is printed per cell.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from engine import checkpoints, timeline
from engine import jobs as grid_jobs
from engine._cli import recorded_command
from engine.data import long_range
from engine.models.variant_lm import (
    FAMILY,
    FROZEN_FLAG,
    GRID_WIDTH,
    OUT_DIR,
    TEST_SEED,
    VALID_SEED,
    VariantModel,
    VariantModelConfig,
    best_lr,
    checkpoint_name,
    learns,
    probe_batch,
    probe_trace,
    results,
)
from engine.training import _grid_plan as plans
from engine.training import fit as harness
from engine.variants.registry import REGISTRY

# The grid's cells and their parameters, as each variant declares them (Variant.grid_budget;
# a cell runs Variant.grid_hp at its head size, which differs only where a parameter follows
# it, as MLA's latent). Variant.not_in_grid: why a variant is no cell, printed beside the
# evaluation's table.
BUDGETS = {name: v.grid_budget for name, v in REGISTRY.items() if not v.not_in_grid}
NOT_IN_GRID = {name: v.not_in_grid for name, v in REGISTRY.items() if v.not_in_grid}
TASK_NAMES = list(long_range.TASKS)
# The shipped grid (its first 88 cells: 16.6 wall-minutes on 2 cores; Reformer and Mamba at
# n = 512 are the slowest cells, 0.3–0.45 s per step). copy-256 is left out: full
# attention needs ~400 steps of 16 there and the slow cells would cost 4× copy-128's;
# ``--task copy-256`` runs it.
GRID_TASKS = ["mqar-256", "mqar-512", "copy-128", "control-128"]
SEEDS = (0, 1)
TEST_SIZE = 256


@dataclass
class Schedule:
    steps: int = 180
    batch: int = 8
    lr: float = 3e-3
    warmup: int = 20
    weight_decay: float = 0.01
    test_size: int = TEST_SIZE
    model: dict = field(default_factory=lambda: dict(d_model=64, n_heads=2, n_layers=2, d_ff=128))


# Copying is learnt by position, not content: the recall initialisation does not help,
# and full attention sits at chance (0.25 after 180 steps of 8, 0.30 after 200 of 16)
# until a jump near step 300 of 16 sequences (1.000 at 400). Every variant of a task
# gets the same schedule; only the task changes it.
#
# Recall (issue 20 item 11): after 180 steps of 8, full attention was still on its plateau
# on one seed of mqar-512 (0.17) and at 0.98999 on one of mqar-256. It leaves the plateau
# between steps 100 and 150 on every seed; with 360 steps (the cosine decay no longer
# ends the run on the plateau) each seed reaches ≥ 0.999 (0.9991 / 0.9995 at n = 512,
# 0.9993 / 0.9998 at n = 256), so a variant at chance is at chance for its state, not
# for lack of steps.
RECALL_STEPS = 360
#
# Zoology's points (issue 31): a fixed-state mixer needs far longer than attention. Based
# on (64, 4), d = 64, with the convolution: at chance (loss ln 64) after 300 steps of 8,
# 0.90 after 1,500 at 2.2e-3 (0.03 at 1e-2); full attention ≥ 0.99 by step 300.
ZOOLOGY_STEPS = 2000
TASK_SCHEDULES: dict[str, dict] = {
    "copy-128": {"steps": 400, "batch": 16},
    "mqar-256": {"steps": RECALL_STEPS},
    "mqar-512": {"steps": RECALL_STEPS},
    **{t: {"steps": ZOOLOGY_STEPS} for t in ("mqar-64-4", "mqar-128-8", "mqar-256-16")},
}
# The width sweep (Zoology's x axis: state grows with the model's width): the recall
# tasks again at these d_model (d_ff = 2·d_model, the grid's heads and depth), so the
# recall-vs-state chart shows each variant as a line over its state sizes.
SWEEP_WIDTHS = (32, 128)
SWEEP_TASKS = ("mqar-256",)

QUICK = Schedule(
    steps=4, batch=4, test_size=8, model=dict(d_model=16, n_heads=2, n_layers=1, d_ff=32)
)
QUICK_TASK_N = 64  # --quick shrinks every task to this length (and a quarter of its pairs)


@dataclass(frozen=True)
class Job:
    variant: str
    task: str
    seed: int
    schedule: Schedule
    out_dir: str
    command: str
    quick: bool = False
    width: int = GRID_WIDTH
    recipe: dict = field(default_factory=lambda: plans.TODAY.record(plans.TODAY_LR))
    tag: str = ""  # a tuning run's suffix to the cell's name (``-lr0.0022``)
    frozen: bool = False  # the variant's own weights stay seeded (--frozen-variant)

    @property
    def name(self) -> str:
        return checkpoint_name(self.task, self.variant, self.seed, self.width) + self.tag

    @property
    def params(self) -> dict:
        """The variant's hyper-parameters at this cell's head size (Variant.grid_hp)."""
        model = self.schedule.model
        return REGISTRY[self.variant].grid_hp(model["d_model"] // model["n_heads"])

    @property
    def keeps_seeded(self) -> bool:
        """Frozen, and the variant has weights of its own to freeze."""
        return self.frozen and learns(self.variant, self.schedule.model)


def task_for(job: Job) -> long_range.Task:
    task = long_range.get(job.task)
    if not job.quick:
        return task
    return long_range.Task(task.name, task.kind, QUICK_TASK_N, max(1, task.pairs // 4))


def build(task: long_range.Task, schedule: Schedule, variant: str) -> VariantModel:
    cfg = VariantModelConfig(long_range.VOCAB, task.n, **schedule.model, variant=variant)
    return VariantModel(cfg)


@torch.no_grad()
def score(
    model: VariantModel, attend, task: long_range.Task, size: int, batch: int = 32, seed=TEST_SEED
):
    """Accuracy on the fixed test set (seed TEST_SEED), every variant on the same examples;
    ``seed=VALID_SEED``: on the validation set that picks a learning rate."""
    model.eval()
    x, y = task.batch(size, seed)
    right = asked = 0
    for i in range(0, size, batch):
        logits, _ = model(x[i : i + batch], attend)
        mask = y[i : i + batch] != long_range.IGNORE
        right += int((logits.argmax(-1)[mask] == y[i : i + batch][mask]).sum())
        asked += int(mask.sum())
    return right / max(asked, 1)


# The training timeline (issue 21): ≈ 12 log-spaced snapshots of a fixed probe — loss and
# accuracy on PROBE_SIZE held-out examples (variant_lm.probe_batch), the attention the asked
# positions put on their evidence (EVIDENCE_SIZE examples), and probe example 0's maps pooled to
# TIMELINE_SIDE² cells (the whole sequence, float16: ≈ 8 KB a snapshot). A snapshot costs
# about 3 training steps at n = 512, so a 360-step run pays ≈ 10 %.
SNAPSHOTS = 12
EVIDENCE_SIZE = 8
TIMELINE_SIDE = 32


def run_job(job: Job) -> dict:
    """Train one cell, score it, write its checkpoint and timeline; returns the JSON."""
    torch.set_num_threads(1)
    torch.manual_seed(job.seed)
    task, sch = task_for(job), job.schedule
    params = job.params
    hp = {**params, "seed": job.seed}
    variant = REGISTRY[job.variant]
    attend = variant.attend(hp)
    model = build(task, sch, "" if job.frozen else job.variant)  # "": no weights of its own
    opt = torch.optim.AdamW(model.parameters(), lr=sch.lr, weight_decay=sch.weight_decay)

    def lr_at(step):  # linear warm-up, then cosine to 0
        if step < sch.warmup:
            return (step + 1) / sch.warmup
        return 0.5 * (1 + math.cos(math.pi * (step - sch.warmup) / max(1, sch.steps - sch.warmup)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=long_range.IGNORE)
    name = job.name
    rec = timeline.Recorder(name, sch.steps, n=SNAPSHOTS)
    recording = job.width == GRID_WIDTH  # the sweep's cells feed one chart; no page replays them
    probe = Probe(task, variant, name, sch.test_size)
    losses: list[list] = []

    def step(k: int) -> float:
        x, y = task.batch(sch.batch, seed=job.seed * 1_000_000 + k)
        logits, _ = model(x, attend)
        loss = loss_fn(logits.flatten(0, 1), y.flatten())
        if not torch.isfinite(loss):
            return float(loss)  # the harness ends a diverged run; this step is not taken
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if k % 50 == 0 or k == sch.steps - 1:
            losses.append([k, round(loss.item(), 4)])
        return loss.item()

    done = harness.fit(
        step,
        sch.steps,
        rec if recording else None,
        snapshot=lambda k: probe.snapshot(k, model, attend),
        end=False,  # the last snapshot reads the shipped (float16) weights, below
    )
    status = f"diverged at step {done.steps} (loss {done.loss})" if done.diverged else "trained"
    # Round to the shipped precision first, so the checkpoint reproduces the score.
    state = {k: v.half() for k, v in model.state_dict().items()}
    model.load_state_dict({k: v.float() for k, v in state.items()})
    accuracy = score(model, attend, task, sch.test_size)
    validation = score(model, attend, task, sch.test_size, seed=VALID_SEED)
    if recording and (not rec.steps or rec.steps[-1] < done.steps):
        rec.add(done.steps, *probe.snapshot(done.steps, model, attend))
    resolved = variant.resolve(hp, task.n)
    cfg = model.cfg
    meta = {
        "family": FAMILY,
        "variant": job.variant,
        "variant_title": variant.title,
        "params": params,
        # The variant's own weights this model learned (Variant.learned); [] when frozen.
        "learned": sorted(model.blocks[0].learned.keys()),
        "task": job.task,
        "task_description": task.description,
        "n": task.n,
        "pairs": task.pairs,
        "seed": job.seed,
        "status": status,
        "accuracy": round(accuracy, 6),
        "test": {"seed": TEST_SEED, "size": sch.test_size},
        "validation_accuracy": round(validation, 6),
        "validation": {"seed": VALID_SEED, "size": sch.test_size},
        "recipe": job.recipe,
        "steps": done.steps,
        "schedule": asdict(sch),
        "config": cfg.to_dict(),
        "train_seconds": round(done.wall_s, 2),
        "seconds_per_step": round(done.wall_s / max(done.steps, 1), 5),
        # The process's own CPU time (one torch thread): what the cell costs, whatever
        # else the machine was running; wall time above is what a user waited.
        "cpu_seconds_per_step": round(done.cpu_s / max(done.steps, 1), 5),
        # ru_maxrss is per process; every job runs in a fresh one (see run_grid).
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "attention_flops_per_layer": variant.flops(task.n, cfg.d_model // cfg.n_heads, resolved)
        * sch.batch
        * cfg.n_heads,
        "attention_memory_bytes_per_layer": variant.memory(
            task.n, cfg.d_model // cfg.n_heads, resolved
        )
        * sch.batch
        * cfg.n_heads,
        "loss_curve": losses,
        "quick": job.quick,
        "width": job.width,  # the grid's, or the sweep's --width (a --quick model is smaller)
        "command": job.command,
        "weights_dtype": "float16",
    }
    checkpoints.save(name, state, meta, Path(job.out_dir))
    if not recording:
        return meta
    tl = rec.timeline(
        command=job.command,
        seed=job.seed,
        variant=job.variant,
        task=job.task,
        probe={
            "test_seed": TEST_SEED,
            "size": probe.size,
            "evidence_size": EVIDENCE_SIZE,
            "map": f"test example 0, pooled to at most {TIMELINE_SIDE}×{TIMELINE_SIDE}",
        },
    )
    timeline.save(tl, name, Path(job.out_dir))
    return meta


class Probe:
    """The fixed probe of a cell's timeline (:func:`engine.models.variant_lm.probe_batch`)."""

    def __init__(self, task: long_range.Task, variant, name: str, test_size: int):
        self.task, self.variant, self.name = task, variant, name
        self.x, self.y = probe_batch(task, test_size)
        self.size = len(self.x)
        self.loss_fn = torch.nn.CrossEntropyLoss(ignore_index=long_range.IGNORE)

    def snapshot(self, step: int, model: VariantModel, attend) -> tuple[dict, list]:
        """(metrics, [trace]) at ``step``, without gradients or touching the random state:
        a run that records trains the same weights as one that does not."""
        was_training = model.training
        model.eval()
        try:
            metrics, trace = timeline.quiet(lambda: self.measure(model, attend))
        finally:
            model.train(was_training)
        trace.maps = {k: m.pooled(TIMELINE_SIDE) for k, m in trace.maps.items()}
        return metrics, [trace]

    def measure(self, model: VariantModel, attend) -> tuple[dict, object]:
        right = asked = 0
        loss_sum = 0.0
        for i in range(0, self.size, 32):
            x, y = self.x[i : i + 32], self.y[i : i + 32]
            logits, _ = model(x, attend)
            mask = y != long_range.IGNORE
            right += int((logits.argmax(-1)[mask] == y[mask]).sum())
            asked += int(mask.sum())
            loss_sum += float(self.loss_fn(logits.flatten(0, 1), y.flatten())) * int(mask.sum())
        _, maps = model(self.x[:EVIDENCE_SIZE], attend, want_weights=True)
        metrics = {
            "loss": loss_sum / max(asked, 1),
            "accuracy": right / max(asked, 1),
            "evidence_mass": evidence_mass(self.task, self.x, self.y, maps),
        }
        trace = probe_trace(
            model,
            self.variant,
            attend,
            self.task,
            self.x[:1],
            self.y[:1],
            name=self.name,
            show=self.task.n,
        )
        return metrics, trace


def evidence_mass(task: long_range.Task, x, y, maps: list) -> float:
    """Mean weight an asked position puts on its evidence (the key's place for recall), in
    the last layer, the best head: does attention find what the answer is read from?"""
    last = maps[-1]  # [B, H, n, n]
    found = []
    for b in range(last.shape[0]):
        for i in (y[b] != long_range.IGNORE).nonzero().flatten().tolist():
            e = long_range.evidence(task.kind, x[b], i)
            if e is not None:
                found.append(float(last[b, :, i, e].max()))
    return sum(found) / len(found) if found else 0.0


def run_grid(jobs: list[Job], *, workers: int = 2, ray_address: str | None = None, log=None):
    """Run every job not already done (engine.jobs: a process pool, one fresh process per
    job, or Ray), one line per cell as it finishes. Returns ``[(job, meta)]``."""
    log = log or progress
    out, pending = [], []
    for job in jobs:
        meta = plans.is_done(
            Path(job.out_dir),
            job.name,
            job.recipe,
            asdict(job.schedule),
            weights=not job.tag,
            frozen=job.keeps_seeded,
            params=job.params,
        )
        if meta is None:
            pending.append(job)
        else:
            out.append((job, meta))
            log(_line(job, meta, "done before"))
    t0 = time.perf_counter()
    for job, meta in grid_jobs.run(run_job, pending, workers=workers, ray_address=ray_address):
        out.append((job, meta))
        log(_line(job, meta, f"[{len(out)}/{len(jobs)}, {time.perf_counter() - t0:.0f} s]"))
    return out


def progress(line: str) -> None:
    print(line, flush=True)  # a run hours long is followed in its log file as it goes


def _line(job: Job, meta: dict, where: str = "") -> str:
    return (
        f"{job.task:12s} {job.variant:14s} d {job.width:<3d} seed {job.seed} "
        f"lr {job.schedule.lr:<6g} conv {job.recipe['conv']}: acc {meta['accuracy']:.3f} "
        f"(val {meta.get('validation_accuracy', float('nan')):.3f}) {meta['steps']} steps "
        f"{meta['train_seconds']:.0f} s {meta['status']} {where}"
    ).rstrip()


def schedule_for(
    task: str, quick: bool = False, steps: int = 0, width: int = 0, *, conv: int = 0, lr=None
) -> Schedule:
    """The task's schedule (the grid's, or TASK_SCHEDULES'), ``--quick``, ``--steps``,
    ``--width`` (d_model, with d_ff = 2·d_model), the recipe's ``conv`` and a rate applied."""
    base = asdict(QUICK) if quick else {**asdict(Schedule()), **TASK_SCHEDULES.get(task, {})}
    if width:
        base["model"] = {**base["model"], "d_model": width, "d_ff": 2 * width}
    if conv:
        base["model"] = {**base["model"], "conv": conv}
    return Schedule(**{**base, **({"steps": steps} if steps else {}), **({"lr": lr} if lr else {})})


class Cells:
    """The jobs of one run: its plan's points × variants × seeds, trained with ``recipe``."""

    def __init__(self, args, recipe: plans.Recipe, plan: plans.Plan):
        self.args, self.recipe, self.plan = args, recipe, plan
        self.base = recorded_command("engine.train variants", [], "--out-dir").strip()
        self.out = Path(args.out_dir)

    def job(self, variant, task, width, seed, lr, *, tag="", out=None, recipe=None) -> Job:
        a = self.args
        wide_model = 0 if width == GRID_WIDTH else width
        sch = schedule_for(task, a.quick, a.steps, wide_model, conv=self.recipe.conv, lr=lr)
        wide = "" if width == GRID_WIDTH else f" --width {width}"
        frozen = getattr(a, "frozen_variant", False)  # a Namespace built without the flag
        extra = (" --quick" if a.quick else "") + (f" --steps {a.steps}" if a.steps else "")
        extra += f" {FROZEN_FLAG}" if frozen else ""
        command = (
            f"{self.base} --task {task} --variant {variant} --seeds {seed}{wide}"
            f" --conv {self.recipe.conv} --lr {lr:g}{extra}"
        )
        return Job(
            variant,
            task,
            seed,
            sch,
            str(out or self.out),
            command,
            a.quick,
            width,
            recipe or self.recipe.record(lr),
            tag,
            frozen,
        )

    def tuning(self) -> list[Job]:
        """One run per variant, tuning point and rate (seed 0), under ``<out>/tune``."""
        if not self.recipe.sweeps:
            return []
        points = sorted({self.plan.tuning_point(p, GRID_WIDTH) for p in self.plan.points})
        return sort(
            [
                self.job(v, task, width, 0, lr, tag=plans.lr_tag(lr), out=self.out / "tune")
                for v in self.args.variant
                for task, width in points
                for lr in self.recipe.lrs
            ]
        )

    def grid(self, tuned: list[tuple[Job, dict]]) -> tuple[list[Job], list[tuple[Job, dict]]]:
        """The grid's jobs at the kept rates, and the cells a tuning run already is."""
        runs: dict[tuple, dict[float, dict]] = {}
        for job, meta in tuned:
            runs.setdefault((job.variant, job.task, job.width), {})[job.schedule.lr] = meta
        jobs, adopted = [], []
        for point in self.plan.points:
            at = self.plan.tuning_point(point, GRID_WIDTH)
            for variant in self.args.variant:
                sweep = runs.get((variant, *at), {})
                lr = best_lr(sweep) if sweep else self.recipe.lrs[0]
                recipe = self.recipe.record(lr)
                if sweep:
                    recipe["tuned_at"] = f"{at[0]}, d = {at[1]}, seed 0"
                    recipe["validation_by_lr"] = {
                        f"{r:g}": m["validation_accuracy"] for r, m in sweep.items()
                    }
                for seed in point.seeds:
                    job = self.job(variant, point.task, point.width, seed, lr, recipe=recipe)
                    if sweep and (point.task, point.width) == at and seed == 0:
                        meta = self.adopt(job, sweep)
                        if meta is None:
                            jobs.append(job)
                        else:
                            adopted.append((job, meta))
                    else:
                        jobs.append(job)
        return sort(jobs), adopted

    def adopt(self, job: Job, sweep: dict[float, dict]) -> dict | None:
        """The kept tuning run as the cell ``job`` (the same weights, its own JSON), unless
        a run before this one did it already; the other rates' weights are dropped. None
        when the kept run's weights were dropped by an earlier rule of keeping: the cell
        is then trained again, at the kept rate and seed, as any other."""
        lr, tune = job.schedule.lr, self.out / "tune"
        meta = plans.is_done(
            Path(job.out_dir),
            job.name,
            job.recipe,
            asdict(job.schedule),
            frozen=job.keeps_seeded,
            params=job.params,
        )
        if meta is None and not checkpoints.paths(job.name + plans.lr_tag(lr), tune)[0].exists():
            return None
        if meta is None:
            meta = {**sweep[lr], "recipe": job.recipe, "command": job.command}
            plans.adopt(tune, job.name + plans.lr_tag(lr), self.out, job.name, meta)
        plans.drop_weights(tune, [job.name + plans.lr_tag(r) for r in sweep if r != lr])
        return meta


def sort(jobs: list[Job]) -> list[Job]:
    """Slowest variants first (their ms/step in the shipped grid), then the longest tasks and
    widest models, so the pool does not end on one long job."""
    shipped = (results() or {}).get("table", {})
    cost = {v: max(t["ms_per_step"] for t in row.values()) for v, row in shipped.items()}
    return sorted(
        jobs, key=lambda j: (-cost.get(j.variant, 0), -long_range.get(j.task).n, -j.width)
    )


def plan_of(args) -> plans.Plan:
    if args.plan:
        return plans.PLANS[args.plan]
    points = (plans.Point(t, w, tuple(args.seeds)) for t in args.task for w in args.width)
    return plans.Plan("tasks", tuple(points), None)


def train(args, log=None) -> list[tuple[Job, dict]]:
    """Tuning runs first (when the recipe sweeps rates), then the grid at the kept rates."""
    log = log or progress
    recipe = plans.Recipe(args.conv, tuple(args.lr))
    cells = Cells(args, recipe, plan_of(args))
    kw = dict(workers=args.jobs, ray_address=args.ray, log=log)
    tuned = run_grid(cells.tuning(), **kw)
    jobs, adopted = cells.grid(tuned)
    for job, meta in adopted:
        log(_line(job, meta, "the kept tuning run"))
    return adopted + run_grid(jobs, **kw)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.train variants", description=__doc__)
    p.add_argument("--plan", choices=list(plans.PLANS), help="a published grid instead of --task")
    p.add_argument("--task", nargs="+", default=GRID_TASKS, choices=TASK_NAMES)
    p.add_argument("--variant", nargs="+", default=list(BUDGETS), choices=list(BUDGETS))
    p.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    p.add_argument("--steps", type=int, default=0, help="training steps (default: the grid's)")
    p.add_argument(
        "--width",
        nargs="+",
        type=int,
        default=[GRID_WIDTH],
        help=f"model widths d_model (the grid: {GRID_WIDTH}; the sweep: "
        f"--task {' '.join(SWEEP_TASKS)} --width {' '.join(map(str, SWEEP_WIDTHS))})",
    )
    p.add_argument(
        "--conv",
        type=int,
        default=plans.RECIPE_CONV,
        help="kernel of the short convolution before each mixer (0: none, the old grid)",
    )
    p.add_argument(
        "--lr",
        nargs="+",
        type=float,
        default=list(plans.ZOOLOGY_LRS),
        help="learning rates; more than one: keep the best by validation accuracy",
    )
    p.add_argument("--quick", action="store_true", help="tiny model, n = 64, a few steps")
    p.add_argument(
        FROZEN_FLAG,
        action="store_true",
        help="the variant's own weights (GLA's gate, Mamba's selection, MLA's projections, "
        "NSA's gates, the λ, the sink logit) stay at their seeded values, as in the cells "
        "trained before they were learned",
    )
    p.add_argument("--jobs", type=int, default=2, help="parallel jobs (process pool or Ray CPUs)")
    p.add_argument("--ray", metavar="ADDRESS", help="run on Ray: a cluster address, or 'local'")
    p.add_argument(
        "--out-dir",
        type=Path,
        help=f"default {OUT_DIR}; with --plan, its <plan>/<recipe>[-steps<N>] folder",
    )
    args = p.parse_args(argv)
    if args.steps < 0:
        p.error("--steps must be positive")
    if any(w < 8 or w > 512 or w % 2 for w in args.width):
        p.error("--width must be an even number from 8 to 512 (two heads)")
    if not 0 <= args.conv <= 16 or not all(0 < lr < 1 for lr in args.lr):
        p.error("--conv must be 0–16 and every --lr in (0, 1)")
    if args.out_dir is None:
        recipe = plans.Recipe(args.conv, tuple(args.lr))
        # Other steps than the plan's are another recipe's cells: their own folder, so
        # they never overwrite (or get skipped as) the plan's cells.
        tag = recipe.tag + (f"-steps{args.steps}" if args.steps else "")
        args.out_dir = OUT_DIR / args.plan / tag if args.plan else OUT_DIR
    t0 = time.perf_counter()
    done = train(args)
    summary = {
        "jobs": len(done),
        "wall_seconds": round(time.perf_counter() - t0, 1),
        "runner": f"ray {args.ray}" if args.ray else f"process pool × {args.jobs}",
        "out_dir": str(args.out_dir),
        "lr": {f"{j.variant} {j.task} d{j.width}": j.schedule.lr for j, _ in done if j.seed == 0},
    }
    print(json.dumps(summary), file=sys.stdout)
    return 0
