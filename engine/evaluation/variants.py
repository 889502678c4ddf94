"""``python -m engine.evaluate variants [--dir DIR] [--save]``: score the variant-quality grid.

Every checkpoint in assets/checkpoints/variants/ is reloaded and scored again on its
task's fixed test set (engine.training.variants.score), so the table is reproduced
from the shipped weights, not copied from the training log. Beside the accuracies:
training time per step and peak memory from each cell's JSON, mean and spread
(max − min) over seeds, and Long Range Arena's published averages (Tay et al. 2020,
Table 1) for the variants it covers, labelled as published, not ours. The last stdout
line is one JSON object; ``--save`` also writes assets/checkpoints/variants-eval.json
(``engine.models.variant_lm.RESULT``).
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

import torch

from engine import checkpoints
from engine.data import long_range
from engine.models import variant_lm
from engine.training import variants as grid
from engine.variants.registry import attend_fn

# Tay et al. 2020, "Long Range Arena", Table 1: average accuracy over the LRA tasks.
LRA_PUBLISHED = {
    "source": "Tay et al. 2020, Long Range Arena, Table 1 (average over tasks)",
    "label": "published (LRA), not ours",
    "average_accuracy": {
        "full": 54.39,
        "longformer": 53.46,
        "linformer": 51.36,
        "reformer": 50.67,
        "performer": 51.41,
        "bigbird": 55.01,
    },
}


def evaluate(directory: Path | None = None) -> dict:
    """Rescore every shipped cell; the result the evaluate command prints."""
    torch.set_num_threads(1)
    directory = Path(directory) if directory is not None else variant_lm.OUT_DIR
    cells = []
    for name in checkpoints.available("", directory):
        model, meta = variant_lm.load(name, directory)
        if meta.get("family") != variant_lm.FAMILY:
            continue
        task = long_range.get(meta["task"])
        if meta["n"] != task.n:  # a --quick cell: its task was shrunk
            task = long_range.Task(task.name, task.kind, meta["n"], meta["pairs"])
        attend = attend_fn(meta["variant"], {**meta["params"], "seed": meta["seed"]})
        acc = grid.score(model, attend, task, meta["test"]["size"])
        cells.append(
            {
                "variant": meta["variant"],
                "task": meta["task"],
                "seed": meta["seed"],
                "accuracy": round(acc, 6),
                "trained_accuracy": meta["accuracy"],
                "status": meta["status"],
                "seconds_per_step": meta["seconds_per_step"],
                "peak_rss_mib": meta["peak_rss_mib"],
                "attention_flops_per_layer": meta["attention_flops_per_layer"],
                "attention_memory_bytes_per_layer": meta["attention_memory_bytes_per_layer"],
                "steps": meta["steps"],
                "command": meta["command"],
            }
        )
    return {
        "family": variant_lm.FAMILY,
        "cells": cells,
        "table": summarise(cells),
        "lra_published": LRA_PUBLISHED,
        "tasks": {t.name: t.description for t in long_range.TASKS.values()},
        "budgets": grid.BUDGETS,
    }


def summarise(cells: list[dict]) -> dict:
    """``table[variant][task]`` = mean, spread (max − min), seeds, ms/step, peak MiB."""
    groups = defaultdict(list)
    for c in cells:
        groups[c["variant"], c["task"]].append(c)
    table: dict[str, dict] = defaultdict(dict)
    for (variant, task), cs in groups.items():
        accs = [c["accuracy"] for c in cs]
        table[variant][task] = {
            "mean": round(statistics.fmean(accs), 4),
            "spread": round(max(accs) - min(accs), 4),
            "seeds": sorted(c["seed"] for c in cs),
            "ms_per_step": round(1000 * statistics.fmean(c["seconds_per_step"] for c in cs), 1),
            "peak_rss_mib": max(c["peak_rss_mib"] for c in cs),
        }
    order = list(grid.BUDGETS)
    return {v: table[v] for v in sorted(table, key=lambda v: order.index(v) if v in order else 99)}


def markdown(result: dict) -> str:
    """The accuracy table as Markdown: mean ± spread per variant × task, then the costs."""
    tasks = [t for t in long_range.TASKS if any(t in row for row in result["table"].values())]
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


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.evaluate variants", description=__doc__)
    p.add_argument("--dir", type=Path, default=variant_lm.OUT_DIR, help="where the cells are")
    p.add_argument("--save", action="store_true", help=f"write {variant_lm.RESULT}.json")
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown too")
    args = p.parse_args(argv)
    result = evaluate(args.dir)
    if not result["cells"]:
        print(f"no variant-quality checkpoints in {args.dir}; run python -m engine.train variants")
        return 1
    if args.markdown:
        print(markdown(result))
    if args.save:
        checkpoints.save_result(variant_lm.RESULT, result)
    print(json.dumps(result))
    return 0
