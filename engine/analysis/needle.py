"""A needle-in-a-haystack probe of the variant-quality grid's recall models.

One key–value pair (the needle, ``κ ν``) is placed at depth f of an input of L tokens,
and the last token asks for κ; the answer is ν. Around it, blanks and D distractor pairs
(keys other than κ, at random even positions), so the input reads like the blank part
of an MQAR sequence (engine.data.long_range) with its pairs scattered:

    position of κ:  p(f, L) = round(f · (L − 3)),   ν at p + 1,   the query κ at L − 1

f = 0 puts the needle first, f = 1 right before the query (the pair ends at L − 2). The
lengths run past the length the model was trained at (its sinusoidal positions are
computed for any length), so the probe also measures length generalisation: the
depth × length heatmap of Gemini-/Claude-style needle tests, on a 2-layer model
trained only on ``task``.

``probe`` scores one trained cell; ``run`` every variant and seed of the grid that was
trained on ``task``, saved by ``python -m engine.evaluate variants --needle`` as
``variants-eval-needle.json`` (``RESULT``).
"""

from __future__ import annotations

import statistics
from pathlib import Path

import torch

from engine import checkpoints
from engine.data import long_range
from engine.models import variant_lm
from engine.models.variant_lm import VariantModel, VariantModelConfig
from engine.variants.registry import attend_fn

RESULT = checkpoints.result_name("variants", "needle")
TASK = "mqar-256"  # the models probed: trained on n = 256
LENGTHS = (64, 128, 256, 512)  # up to twice the trained length
DEPTHS = (0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0)
DISTRACTORS = 8
SIZE = 16  # needles per (depth, length)
SEED = 2_000_003  # never a training or test seed of the grid
PROBE_MIN = 0.1  # a cell below this on its own test set (chance 1/64) is not probed


def needle_position(length: int, depth: float) -> int:
    """Where the needle's key goes: round(f·(L − 3)); its value follows, the query is last."""
    if not 0.0 <= depth <= 1.0:
        raise ValueError(f"depth must lie in [0, 1]; got {depth}")
    if length < 4:
        raise ValueError(f"a needle, its value and the query need 4 tokens; got {length}")
    return round(depth * (length - 3))


def needle_batch(
    length: int, depth: float, size: int, seed: int, distractors: int = DISTRACTORS
) -> tuple[torch.Tensor, torch.Tensor]:
    """``size`` inputs ``[size, L]`` and targets (IGNORE but the last position: ν)."""
    if length < 4 * (distractors + 1):  # room for every pair at an even start
        raise ValueError(f"{distractors} distractors need length ≥ {4 * (distractors + 1)}")
    p = needle_position(length, depth)
    g = torch.Generator().manual_seed(int(seed))
    x = torch.full((size, length), long_range.BLANK)
    y = torch.full((size, length), long_range.IGNORE)
    # Distinct keys: the needle's first, then the distractors'.
    keys = torch.rand(size, long_range.KEYS, generator=g).argsort(dim=1)[:, : 1 + distractors]
    keys = keys + long_range.KEY0
    values = torch.randint(long_range.VALUES, (size, 1 + distractors), generator=g)
    values = values + long_range.VALUE0
    # Distractor pairs start at even positions whose pair overlaps neither the needle
    # (p, p + 1) nor the query (L − 1).
    starts = torch.tensor(
        [s for s in range(0, length - 2, 2) if s + 1 < p or s > p + 1], dtype=torch.long
    )
    for i in range(size):
        chosen = starts[torch.randperm(len(starts), generator=g)[:distractors]]
        x[i, chosen], x[i, chosen + 1] = keys[i, 1:], values[i, 1:]
    x[:, p], x[:, p + 1] = keys[:, 0], values[:, 0]
    x[:, length - 1] = keys[:, 0]
    y[:, length - 1] = values[:, 0]
    return x, y


def at_length(model: VariantModel, length: int) -> VariantModel:
    """The same weights with positions for ``length`` tokens (the PE is not a weight)."""
    if length <= model.cfg.n_max:
        return model
    longer = VariantModel(VariantModelConfig(**{**model.cfg.to_dict(), "n_max": length}))
    longer.load_state_dict(model.state_dict())
    return longer.eval()


@torch.no_grad()
def probe(
    model: VariantModel,
    attend,
    lengths=LENGTHS,
    depths=DEPTHS,
    size: int = SIZE,
    seed: int = SEED,
    batch: int = 16,
) -> list[list[float]]:
    """Accuracy ``[depth][length]`` of one trained model on the needles."""
    grid = []
    for depth in depths:
        row = []
        for length in lengths:
            m = at_length(model, length)
            x, y = needle_batch(length, depth, size, seed + length)
            right = 0
            for i in range(0, size, batch):
                logits, _ = m(x[i : i + batch], attend)
                right += int((logits[:, -1].argmax(-1) == y[i : i + batch, -1]).sum())
            row.append(round(right / size, 4))
        grid.append(row)
    return grid


def seed_mean(grids: list[list[list[float]]]) -> list[list[float]]:
    """The element-wise mean of several seeds' ``[depth][length]`` grids."""
    return [
        [round(statistics.fmean(cell), 4) for cell in zip(*rows, strict=True)]
        for rows in zip(*grids, strict=True)
    ]


def run(directory: Path | None = None, task: str = TASK, variants=None, log=None) -> dict:
    """Every trained cell of ``task`` (or of ``variants``) probed; the JSON to save.

    A variant whose cells answer ``task``'s own test set near chance (mean over seeds
    below ``PROBE_MIN``) is listed under "skipped" with that accuracy, not probed: it
    has learnt no lookup for the needles to measure.
    """
    torch.set_num_threads(1)
    directory = Path(directory) if directory is not None else variant_lm.OUT_DIR
    found: dict[str, list[str]] = {}
    for name in checkpoints.available(f"{task}-", directory):
        meta = checkpoints.load_meta(name, directory)
        if meta.get("family") != variant_lm.FAMILY or meta.get("task") != task:
            continue
        if variant_lm.width_of(meta) != variant_lm.GRID_WIDTH:
            continue  # a cell of the width sweep: the probe reads the grid's models
        if variants is None or meta["variant"] in variants:
            found.setdefault(meta["variant"], []).append(name)
    cells, skipped = {}, {}
    for variant, names in found.items():
        metas = [checkpoints.load_meta(n, directory) for n in names]
        trained = statistics.fmean(m["accuracy"] for m in metas)
        if trained < PROBE_MIN:
            skipped[variant] = round(trained, 4)
            continue
        for name in names:
            model, meta = variant_lm.load(name, directory)
            attend = attend_fn(variant, {**meta["params"], "seed": meta["seed"]})
            acc = probe(model, attend, LENGTHS, DEPTHS, SIZE)
            cells.setdefault(variant, {})[str(meta["seed"])] = acc
            if log:
                log(f"{name}: mean {statistics.fmean(a for row in acc for a in row):.3f}")
    return {
        "family": variant_lm.FAMILY,
        "task": task,
        "trained_n": long_range.get(task).n,
        "lengths": list(LENGTHS),
        "depths": list(DEPTHS),
        "distractors": DISTRACTORS,
        "size": SIZE,
        "seed": SEED,
        "chance": 1 / long_range.VALUES,
        "probe_min": PROBE_MIN,
        "accuracy": cells,  # variant → seed → [depth][length]
        "mean": {v: seed_mean(list(seeds.values())) for v, seeds in cells.items()},
        "skipped": skipped,  # variant → its mean test accuracy on task
    }


SETUP = ("task", "trained_n", "lengths", "depths", "distractors", "size", "seed")


def merge(old: dict | None, new: dict) -> dict:
    """``new``'s variants over ``old``'s, when both probed the same way (else ``new``):
    a probe of a few variants updates a saved probe of all."""
    if not old or any(old.get(k) != new[k] for k in SETUP):
        return new
    out = {**new}
    for key in ("accuracy", "mean", "skipped"):
        probed = set(new["accuracy"]) | set(new["skipped"])
        kept = {v: x for v, x in old.get(key, {}).items() if v not in probed}
        out[key] = {**kept, **new[key]}
    return out


def results(directory: Path | None = None) -> dict | None:
    """The saved probe (``python -m engine.evaluate variants --needle``), or None."""
    return checkpoints.load_result(RESULT, directory)
