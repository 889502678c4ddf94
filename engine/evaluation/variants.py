"""``python -m engine.evaluate variants [--dir DIR] [--plan zoology] [--save]``: score the
variant-quality grid.

Every checkpoint in assets/checkpoints/variants/ is reloaded and scored again on its
task's fixed test set (engine.training.variants.score), so the table is reproduced
from the shipped weights, not copied from the training log. Beside the accuracies:
training time per step and peak memory from each cell's JSON, mean and spread
(max − min) over seeds, each cell's recipe (short convolution, learning rate and how it
was chosen), and Long Range Arena's published averages (Tay et al. 2020,
Table 1) for the variants it covers, labelled as published, not ours. The last stdout
line is one JSON object; ``--save`` also writes assets/checkpoints/variants-eval.json
(``engine.models.variant_lm.RESULT``), or with ``--plan`` a file of that plan's recipe
folder (:func:`result_name`).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch

from engine import checkpoints
from engine.analysis import needle, recall_state
from engine.data import long_range
from engine.models import variant_lm
from engine.training import _grid_plan as plans
from engine.training import variants as grid
from engine.variants.registry import REGISTRY, attend_fn, names

# Long Range Arena's averages, as each variant declares it (Variant.lra_average).
LRA_PUBLISHED = {
    "source": "Tay et al. 2020, Long Range Arena, Table 1 (average over tasks)",
    "label": "published (LRA), not ours",
    "average_accuracy": {n: v.lra_average for n, v in REGISTRY.items() if v.lra_average},
}


# What Zoology and Based found, printed beside our recall-vs-state rows (not ours).
RECALL_PUBLISHED = {
    "label": "published, not ours",
    "findings": [
        {
            "source": "Arora et al. 2023, Zoology (arXiv 2312.04927)",
            "finding": "attention solves MQAR at a model dimension that stays constant as "
            "the sequence grows; gated-convolution models need a dimension growing with the "
            "sequence length and the number of key-value pairs; a 70M attention model beats a "
            "1.4B gated-convolution model on associative recall, and recall explains 82% of "
            "their perplexity gap on the Pile",
        },
        {
            "source": "Arora et al. 2024, Based (arXiv 2402.18668)",
            "finding": "a trade-off between the state a model keeps and its recall: models "
            "with a fixed recurrent state (H3, Mamba, RWKV) struggle at recall, attention's KV "
            "cache grows with the input; a recurrent model solving MQAR needs a state growing "
            "with the number of key-value pairs; Based's window and feature size move along "
            "the recall-memory Pareto frontier",
        },
    ],
}


def not_in_grid(cells: list[dict]) -> dict[str, str]:
    """Every registered variant without a cell, and why: it cannot train in the grid's
    model (``NOT_IN_GRID``), or it has a budget but was not trained in ``directory``."""
    trained = {c["variant"] for c in cells}
    missing = {}
    for name in names():
        if name in trained:
            continue
        if name in grid.NOT_IN_GRID:
            missing[name] = grid.NOT_IN_GRID[name]
        else:
            missing[name] = f"not trained here: python -m engine.train variants --variant {name}"
    return missing


def missing_cells(cells: list[dict], plan: plans.Plan | None = None) -> list[str]:
    """The grid's cells (GRID_TASKS × BUDGETS × SEEDS, or ``plan``'s points) with no
    checkpoint, by name."""
    have = {(c["task"], c["variant"], c["seed"], c["width"]) for c in cells}
    points = (
        plan.points
        if plan
        else [plans.Point(t, variant_lm.GRID_WIDTH, grid.SEEDS) for t in grid.GRID_TASKS]
    )
    return [
        variant_lm.checkpoint_name(p.task, variant, seed, p.width)
        for p in points
        for variant in grid.BUDGETS
        for seed in p.seeds
        if (p.task, variant, seed, p.width) not in have
    ]


def rescore(name: str, directory: Path) -> dict | None:
    """One cell reloaded and scored again on its task's test set (None: not a grid cell)."""
    torch.set_num_threads(1)
    model, meta = variant_lm.load(name, directory)
    if meta.get("family") != variant_lm.FAMILY:
        return None
    task = long_range.get(meta["task"])
    if (meta["n"], meta["pairs"]) != (task.n, task.pairs):  # a --quick cell: task shrunk
        task = long_range.Task(task.name, task.kind, meta["n"], meta["pairs"])
    attend = attend_fn(meta["variant"], {**meta["params"], "seed": meta["seed"]})
    acc = grid.score(model, attend, task, meta["test"]["size"])
    return {
        "variant": meta["variant"],
        "task": meta["task"],
        "seed": meta["seed"],
        "accuracy": round(acc, 6),
        "trained_accuracy": meta["accuracy"],
        "validation_accuracy": meta.get("validation_accuracy"),
        "recipe": variant_lm.recipe_of(meta),
        "status": meta["status"],
        "seconds_per_step": meta["seconds_per_step"],
        "cpu_seconds_per_step": meta.get("cpu_seconds_per_step"),
        "peak_rss_mib": meta["peak_rss_mib"],
        "attention_flops_per_layer": meta["attention_flops_per_layer"],
        "attention_memory_bytes_per_layer": meta["attention_memory_bytes_per_layer"],
        "steps": meta["steps"],
        "width": variant_lm.width_of(meta),
        "command": variant_lm.command_of(meta),
        "n": meta["n"],
        "config": meta["config"],
        "params": meta["params"],
    }


def evaluate(directory: Path | None = None, jobs: int = 1, plan: str | None = None) -> dict:
    """Rescore every shipped cell (``jobs`` processes); the result the command prints.
    ``plan``: the cells of that plan (engine.training._grid_plan.PLANS) are the grid."""
    torch.set_num_threads(1)
    directory = Path(directory) if directory is not None else variant_lm.OUT_DIR
    found = checkpoints.available("", directory)
    if jobs > 1:
        ctx = multiprocessing.get_context("spawn")  # no forked torch thread pools
        with ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
            scored = list(pool.map(rescore, found, [directory] * len(found)))
    else:
        scored = [rescore(name, directory) for name in found]
    cells, sweep, shapes = [], [], {}
    for cell in filter(None, scored):
        n, config, params = cell.pop("n"), cell.pop("config"), cell.pop("params")
        shapes[cell["variant"], cell["task"], cell["width"]] = (n, config, params)
        # The width sweep's cells feed the recall-vs-state chart only: the grid's table,
        # its missing cells and the needle probe are the grid's width. A plan's widths
        # are all its grid's.
        (cells if plan or cell["width"] == variant_lm.GRID_WIDTH else sweep).append(cell)
    return {
        "family": variant_lm.FAMILY,
        "cells": cells,
        "table": summarise(cells),
        "lra_published": LRA_PUBLISHED,
        "tasks": {t.name: t.description for t in long_range.TASKS.values()},
        "budgets": grid.BUDGETS,
        "not_in_grid": not_in_grid(cells),
        "missing_cells": missing_cells(cells, plans.PLANS[plan] if plan else None),
        # Zoology's axes: MQAR accuracy against the bytes the model keeps (see
        # engine.analysis.recall_state), with the papers' findings beside ours.
        "recall_state": recall_state.table(cells + sweep, grid.BUDGETS, shapes),
        "recall_published": RECALL_PUBLISHED,
        "width_sweep": {
            "cells": sweep,
            "widths": sorted({variant_lm.GRID_WIDTH, *(c["width"] for c in sweep)}),
            "missing_cells": [] if plan else missing_sweep(cells + sweep),  # a plan has none
        },
    }


def result_name(plan: str | None, directory: Path) -> str:
    """Where ``--save`` writes: the shipped grid's file, or for a plan a file of its own per
    recipe folder (``variants-eval-zoology-conv4-lr…``), so that evaluating a plan never
    replaces the grid the page shows."""
    if plan is None:
        return variant_lm.RESULT
    return variant_lm.plan_result_name(plan, directory.name)


def missing_sweep(cells: list[dict]) -> list[str]:
    """The width sweep's cells (SWEEP_TASKS × BUDGETS × SWEEP_WIDTHS, seed 0) not trained."""
    have = {(c["task"], c["variant"], c["seed"], c["width"]) for c in cells}
    return [
        variant_lm.checkpoint_name(task, variant, 0, width)
        for task in grid.SWEEP_TASKS
        for variant in grid.BUDGETS
        for width in grid.SWEEP_WIDTHS
        if (task, variant, 0, width) not in have
    ]


def step_seconds(cell: dict) -> float:
    """A cell's time per training step: its process's CPU time where recorded (one torch
    thread, so on a quiet machine it equals the wall time; on a loaded one it is the
    cell's own cost), else the wall time (cells trained before CPU time was recorded, on a
    quiet machine)."""
    cpu = cell.get("cpu_seconds_per_step")
    return cpu if cpu else cell["seconds_per_step"]


def column(cell: dict) -> str:
    """A cell's column in the table: its task, with `` d<width>`` off the grid's width."""
    width = cell.get("width", variant_lm.GRID_WIDTH)
    return cell["task"] if width == variant_lm.GRID_WIDTH else f"{cell['task']} d{width}"


def column_order(col: str) -> tuple[int, int]:
    task, _, width = col.partition(" d")
    return list(long_range.TASKS).index(task), int(width or variant_lm.GRID_WIDTH)


def summarise(cells: list[dict]) -> dict:
    """``table[variant][task]`` = mean, spread (max − min), seeds, ms/step, peak MiB."""
    groups = defaultdict(list)
    for c in cells:
        groups[c["variant"], column(c)].append(c)
    table: dict[str, dict] = defaultdict(dict)
    for (variant, task), cs in groups.items():
        accs = [c["accuracy"] for c in cs]
        table[variant][task] = {
            "mean": round(statistics.fmean(accs), 4),
            "spread": round(max(accs) - min(accs), 4),
            "seeds": sorted(c["seed"] for c in cs),
            "ms_per_step": round(1000 * statistics.fmean(step_seconds(c) for c in cs), 1),
            "peak_rss_mib": max(c["peak_rss_mib"] for c in cs),
        }
    order = list(grid.BUDGETS)
    return {v: table[v] for v in sorted(table, key=lambda v: order.index(v) if v in order else 99)}


def markdown(result: dict) -> str:
    """The accuracy table as Markdown: mean ± spread per variant × task, then the costs."""
    tasks = sorted({t for row in result["table"].values() for t in row}, key=column_order)
    timed = [t for t in tasks if t.startswith("mqar")]
    head = ["variant", *tasks, *(f"ms/step {t}" for t in timed), "peak RSS MiB"]
    lines = [
        "| " + " | ".join([*head, "LRA avg (published, not ours)"]) + " |",
        "|---|" + "---|" * len(head),
    ]
    lra = result["lra_published"]["average_accuracy"]
    for variant, row in result["table"].items():
        accs = [
            f"{row[t]['mean']:.3f} ± {row[t]['spread']:.3f}" if t in row else "—" for t in tasks
        ]
        speed = [f"{row[t]['ms_per_step']:.0f}" if t in row else "—" for t in timed]
        rss = max(c["peak_rss_mib"] for c in row.values())
        cells = [variant, *accs, *speed, f"{rss:.0f}", str(lra.get(variant, "—"))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def recall_markdown(result: dict) -> str:
    """Recall against state as Markdown: each MQAR row, accuracy per seed, state bytes."""
    lines = [
        "| variant | task | d_model | accuracy per seed | mean | state bytes | bytes/token "
        "| state |",
        "|---|---|---|---|---|---|---|---|",
    ]
    rows = sorted(result["recall_state"], key=lambda r: (r["task"], r["state_bytes"]))
    for r in rows:
        seeds = " / ".join(f"{a:.3f}" for a in r["accuracy"])
        cells = [r["variant"], r["task"], str(r.get("width", 64)), seeds, f"{r['mean']:.3f}"]
        cells += [f"{r['state_bytes']:,}"]
        cells += [f"{r['bytes_per_token']:,.0f}", r["kind"]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def verdict_markdown(result: dict, plan: str = "zoology") -> str:
    """A plan's verdict as Markdown (the Variants page's table): per variant its outcome on
    Zoology's tuning point, the smallest state that recalls, the recipe with every rate's
    validation accuracy, and each other recipe folder's best mean there (the ablation)."""
    runs = variant_lm.tuning(plan)
    recipe = variant_lm.recipe_folder(runs)
    found = recall_state.verdict(result["recall_state"], [r for r in runs if r["recipe"] == recipe])
    others = recall_state.ablations(variant_lm.plan_results(plan), recipe)
    head = ["variant", "verdict", "task, d", "accuracy per seed", "smallest state that recalls"]
    head += ["state", "conv", "kept lr", "validation per rate", *(f"{o}: best" for o in others)]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---|" * (len(head) - 1)]
    for v in found:
        small = v["smallest_state"]
        where = (
            f"{small['state_bytes']:,} B ({small['task']}, d = {small['width']})" if small else "—"
        )
        rates = " · ".join(f"{lr:g}: {a:.3f}" for lr, a in sorted(v["validation_by_lr"].items()))
        cells = [v["variant"], v["outcome"], f"{v['task']}, d = {v['width']}"]
        cells += [" / ".join(f"{a:.3f}" for a in v["accuracy"]), where, v["formula"]]
        cells += [str(v["conv"]), f"{v['lr']:g}" if v["lr"] else "—", rates or "—"]
        cells += [f"{o[v['variant']]:.3f}" if v["variant"] in o else "—" for o in others.values()]
        lines.append("| " + " | ".join(cells) + " |")
    bar = f"recalls: mean accuracy over seeds ≥ {recall_state.RECALLS} on some point trained"
    said = "\n".join(lines) + f"\n\nFolder `{recipe}`; {bar}; best on {recall_state.VERDICT_TASK}."
    missing = recall_state.not_on_grid(found)
    if missing:
        said += f"\n\nNot trained on this grid yet ({len(missing)}): {', '.join(missing)}."
    plans = variant_lm.plan_results(plan)
    ablated = [recall_state.recipe_words(o, recall_state.folder_recipe(plans[o])) for o in others]
    return said + ("\n\nThe ablation's folders: " + "; ".join(ablated) + "." if ablated else "")


def needle_markdown(probe: dict) -> str:
    """The probe as Markdown: per variant, accuracy per length (mean over depths and
    seeds), and the worst depth at the trained length."""
    lengths = probe["lengths"]
    trained = lengths.index(probe["trained_n"]) if probe["trained_n"] in lengths else None
    head = ["variant", *(f"L = {n}" for n in lengths), "worst depth at trained n"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---|" * (len(head) - 1)]
    for variant, grid_ in probe["mean"].items():
        per_len = [statistics.fmean(row[j] for row in grid_) for j in range(len(lengths))]
        worst = "—"
        if trained is not None:
            col = [row[trained] for row in grid_]
            i = min(range(len(col)), key=col.__getitem__)
            worst = f"{col[i]:.2f} at f = {probe['depths'][i]:g}"
        lines.append("| " + " | ".join([variant, *(f"{a:.2f}" for a in per_len), worst]) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.evaluate variants", description=__doc__)
    p.add_argument("--dir", type=Path, default=variant_lm.OUT_DIR, help="where the cells are")
    p.add_argument("--save", action="store_true", help=f"write {variant_lm.RESULT}.json")
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown too")
    p.add_argument(
        "--needle",
        action="store_true",
        help=f"also run the needle probe on the {needle.TASK} cells "
        f"(with --save: {needle.RESULT}.json)",
    )
    p.add_argument("--variant", nargs="+", help="probe only these variants (--save merges them in)")
    p.add_argument("--jobs", type=int, default=1, help="cells rescored in parallel")
    p.add_argument("--plan", choices=list(plans.PLANS), help="--dir holds this plan's cells")
    p.add_argument("--needle-only", action="store_true", help="the probe alone, no rescoring")
    args = p.parse_args(argv)
    if args.needle or args.needle_only:
        probe = needle.run(args.dir, variants=args.variant, log=print)
        if args.save:
            probe = needle.merge(needle.results(), probe)
            checkpoints.save_result(needle.RESULT, probe)
        if args.markdown:
            print(needle_markdown(probe))
        if args.needle_only:
            print(json.dumps(probe))
            return 0
    result = evaluate(args.dir, args.jobs, args.plan)
    if not result["cells"]:
        print(f"no variant-quality checkpoints in {args.dir}; run python -m engine.train variants")
        return 1
    if args.markdown:
        print(markdown(result), recall_markdown(result), sep="\n\n")
    if args.save:
        checkpoints.save_result(result_name(args.plan, Path(args.dir)), result)
    print(json.dumps(result))
    return 0
