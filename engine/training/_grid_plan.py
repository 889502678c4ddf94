"""The variant grid's plan: the recipe every cell is trained with, the points it covers,
which cells are already done, and the learning rate a sweep keeps.

**The recipe** (issue 31, the field's: Zoology and Based, Arora et al. 2023–24) is a
short causal depthwise convolution (kernel 4) before each mixer, for every variant alike
(``VariantModelConfig.conv``), and the best of Zoology's four learning rates
{1e-4, 4.6e-4, 2.2e-3, 1e-2}, kept by accuracy on a validation set (seed ``VALID_SEED``),
never the test set. ``Recipe(conv=0, lrs=(3e-3,))`` is the grid as it was before.

**Zoology's grid** (``ZOOLOGY``): MQAR at (length, pairs) = (64, 4), (128, 8), (256, 16)
× d_model ∈ {32, 64, 128}, one seed per point and two at (256, 16), d = 64. The learning
rate is tuned once per variant at (256, 16), d = 64, seed 0, and the chosen rate is used
at every point (the usual small-configuration tuning, as Zoology's sweeps do per config
only where they can afford it).

A cell is done when its checkpoint and JSON exist with the same recipe and schedule, so
a killed run continues from its finished cells. ``<out>/tune`` keeps every tuning run's
JSON and timeline; the kept run's weights move to its cell, the others' are dropped.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from engine import checkpoints
from engine.models import variant_lm
from engine.models.variant_lm import recipe_of

ZOOLOGY_LRS = (1e-4, 4.6e-4, 2.2e-3, 1e-2)
RECIPE_CONV = 4
TODAY_LR = 3e-3  # the single rate of the grid before the recipe


@dataclass(frozen=True)
class Recipe:
    conv: int = RECIPE_CONV
    lrs: tuple[float, ...] = ZOOLOGY_LRS

    @property
    def sweeps(self) -> bool:
        return len(self.lrs) > 1

    @property
    def tag(self) -> str:
        """A folder name: ``conv4-lr1e-04-0.00046-0.0022-0.01`` (one per recipe)."""
        return f"conv{self.conv}-lr" + "-".join(f"{lr:g}" for lr in self.lrs)

    def record(self, lr: float) -> dict:
        """What a cell's JSON keeps of its recipe (``meta["recipe"]``); the kept rate ``lr``."""
        return {"conv": self.conv, "lrs": list(self.lrs), "lr": lr}


TODAY = Recipe(0, (TODAY_LR,))  # the grid before the recipe: no convolution, one rate


@dataclass(frozen=True)
class Point:
    """One point of a grid: a task at a model width, with its seeds."""

    task: str
    width: int
    seeds: tuple[int, ...]


@dataclass(frozen=True)
class Plan:
    """Points, and where each point's learning rate is tuned: ``tune(point) → (task, width)``."""

    name: str
    points: tuple[Point, ...]
    tune_at: tuple[str, int] | None  # one tuning point for all; None: each task at d = 64

    def tuning_point(self, point: Point, grid_width: int) -> tuple[str, int]:
        return self.tune_at or (point.task, grid_width)


ZOOLOGY_TUNE = ("mqar-256-16", 64)
ZOOLOGY = Plan(
    "zoology",
    tuple(
        Point(f"mqar-{n}-{p}", d, (0, 1) if (n, d) == (256, 64) else (0,))
        for n, p in ((64, 4), (128, 8), (256, 16))
        for d in (32, 64, 128)
    ),
    ZOOLOGY_TUNE,
)
PLANS = {ZOOLOGY.name: ZOOLOGY}


def lr_tag(lr: float) -> str:
    """The suffix of a tuning run's name: ``-lr0.0022``."""
    return f"-lr{lr:g}"


def is_done(
    out_dir: Path,
    name: str,
    recipe: dict,
    schedule: dict,
    *,
    weights: bool = True,
    frozen: bool = False,
    params: dict | None = None,
) -> dict | None:
    """The cell's JSON when its checkpoint (``weights=False``: a tuning run, its JSON) and
    JSON exist with this recipe and schedule, its variant's own weights were learned, or
    kept seeded (``frozen``), as asked, and, given ``params``, with these hyper-parameters:
    a variant whose grid budget changed (MLA's latent, differential's head norm) trains
    its cells again instead of keeping ones its command no longer makes."""
    weights_path, meta_path = checkpoints.paths(name, Path(out_dir))
    if not meta_path.exists() or (weights and not weights_path.exists()):
        return None
    try:
        meta = json.loads(meta_path.read_text())
    except ValueError:
        return None
    same = recipe_of(meta) == recipe_of({"recipe": recipe}) and meta.get("schedule") == schedule
    same = same and (params is None or meta.get("params") == params)
    return meta if same and variant_lm.frozen(meta) == frozen else None


def adopt(tune_dir: Path, tuned: str, out_dir: Path, name: str, meta: dict) -> None:
    """The tuning run at the grid's own point becomes that point's cell: its weights moved
    and its timeline copied under the cell's name, ``meta`` written beside them."""
    tune_dir, out_dir = Path(tune_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    shutil.move(checkpoints.paths(tuned, tune_dir)[0], checkpoints.paths(name, out_dir)[0])
    line = checkpoints.TIMELINE_SUFFIX
    src, dst = checkpoints.paths(tuned + line, tune_dir), checkpoints.paths(name + line, out_dir)
    for a, b in zip(src, dst, strict=True):  # the timeline's two files
        if a.exists():
            shutil.copyfile(a, b)
    checkpoints.paths(name, out_dir)[1].write_text(json.dumps(meta, indent=1) + "\n")


def drop_weights(tune_dir: Path, names: list[str]) -> None:
    """The weights of the rates not kept: their JSON and timeline (the learning curve at
    each rate) stay, so the checkpoints a plan leaves are only the cells'."""
    for name in names:
        checkpoints.paths(name, Path(tune_dir))[0].unlink(missing_ok=True)
