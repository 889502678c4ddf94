"""``python -m engine.evaluate cache``: KV-cache presses judged by what they lose.

Every example of every RULER-style task (:mod:`engine.data.ruler`) is prefilled once;
each press at each compression ratio (:mod:`engine.analysis.presses`) then keeps its
positions of that one cache and answers the question greedily, all runs of an example in
one batch (:mod:`engine.analysis.press_eval`). Beside accuracy, the perplexity of the
book's next 32 tokens read over the same compressed cache, so the two can be set side by
side: does perplexity show what a press loses?

Each finished example is appended to ``<result>.jsonl`` as one line; a run that is killed
continues where it stopped when started again with the same options. At the end (or with
``--summary``) the summary is written as ``cache-eval-presses.json`` and, with ``--csv``,
as a table: per task and length the full cache's accuracy first (a task counts only
where it reaches ≥ 0.5, as RULER calibrates to the model), then per press and ratio the
accuracy, the perplexity and the share of the cache kept. Progress goes to stderr; the
last stdout line is the summary's JSON.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import platform
import sys
import time
from pathlib import Path

import torch

from engine import checkpoints
from engine._cli import recorded_command
from engine.analysis import press_eval, presses
from engine.data import ruler
from engine.models import precision, registry

RESULT = checkpoints.result_name("cache", "presses")
COUNTS = 0.5  # a task counts where the full cache's accuracy reaches this


def plan(names, ratios) -> list[tuple[str, float]]:
    """The full cache once, then every other press at every ratio above 0."""
    ratios = [presses.check_ratio(r) for r in ratios]
    return [("full", 0.0)] + [(p, r) for p in names if p != "full" for r in ratios if r > 0]


def _done(path: Path, runs) -> dict[tuple, dict]:
    """Examples already in the JSON-lines file with every planned run."""
    want = {(p, r) for p, r in runs}
    done = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a line cut short by a kill
            if want <= {(x["press"], x["ratio"]) for x in rec["runs"]}:
                done[(rec["task"], rec["length"], rec["seed"])] = rec
    return done


def _every(path: Path) -> dict[tuple, dict]:
    """Every example in the JSON-lines file, whatever runs it holds (a calibration run of
    the full cache alone: ``--presses full --ratios 0``); the fullest line per example."""
    found: dict[tuple, dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            key = (rec["task"], rec["length"], rec["seed"])
            if len(rec["runs"]) >= len(found.get(key, {"runs": ()})["runs"]):
                found[key] = rec
    return found


def summarise(records: list[dict], runs) -> dict:
    """Per task and length: the full cache's accuracy first, then each press and ratio
    over the examples that ran it (a task only calibrated has the full cache alone)."""
    out = {}
    for key in sorted({(r["task"], r["length"]) for r in records}):
        recs = [r for r in records if (r["task"], r["length"]) == key]
        cells = {}
        for p, ratio in runs:
            rows = [x for r in recs for x in r["runs"] if (x["press"], x["ratio"]) == (p, ratio)]
            if not rows:
                continue
            cells.setdefault(p, {})[str(ratio)] = {
                "accuracy": round(sum(x["score"] for x in rows) / len(rows), 4),
                "ppl": round(math.exp(sum(x["nll"] for x in rows) / len(rows)), 3),
                "kept": round(sum(x["kept"] for x in rows) / len(rows), 4),
                "n": len(rows),
            }
        full = cells["full"]["0.0"]
        out[f"{key[0]}@{key[1]}"] = {
            "task": key[0],
            "length": key[1],
            "n": len(recs),
            "full_accuracy": full["accuracy"],
            "counts": full["accuracy"] >= COUNTS,
            "full_ppl": full["ppl"],
            "seconds_per_example": round(
                sum(sum(r["seconds"].values()) for r in recs) / len(recs), 2
            ),
            "cpu_seconds_per_example": round(
                sum(r.get("cpu_seconds", math.nan) for r in recs) / len(recs), 2
            ),
            "presses": cells,
        }
    return out


COLUMNS = ("task", "length", "n", "counts", "press", "ratio", "accuracy", "ppl", "kept")


def write_csv(path: Path, summary: dict) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        w.writerows(press_eval.rows(summary))


def estimate_hours(summary: dict, examples: int, key: str = "seconds_per_example") -> dict:
    """The full sweep (every task, ``examples`` per point) from the measured seconds."""
    per_length: dict[int, list[float]] = {}
    for s in summary.values():
        if len(s["presses"]) == 1:  # a calibration of the full cache alone: not a sweep's cost
            continue
        per_length.setdefault(s["length"], []).append(s[key])
    return {
        str(n): round(sum(v) / len(v) * examples * len(ruler.TASKS) / 3600, 2)
        for n, v in per_length.items()
    }


def _args(argv):
    p = argparse.ArgumentParser(prog="python -m engine.evaluate cache", description=__doc__)
    p.add_argument("--tasks", nargs="+", default=list(ruler.TASKS), choices=ruler.TASKS)
    p.add_argument("--lengths", nargs="+", type=int, default=list(ruler.LENGTHS))
    p.add_argument("--examples", type=int, default=25, help="examples per task and length")
    p.add_argument("--seed", type=int, default=0, help="the first example's seed")
    p.add_argument("--presses", nargs="+", default=list(presses.PRESSES), choices=presses.PRESSES)
    p.add_argument("--ratios", nargs="+", type=float, default=list(presses.RATIOS))
    p.add_argument("--out", type=Path, default=None, help="directory (default assets/checkpoints)")
    p.add_argument("--csv", type=Path, default=None, help="also write the summary as CSV")
    p.add_argument("--summary", action="store_true", help="summarise what is done, run nothing")
    return p.parse_args(argv)


def main(argv: list[str]) -> int:
    args = _args(argv)
    for n in args.lengths:
        ruler.check(args.tasks[0], n)
    runs = plan(args.presses, args.ratios)
    torch.set_num_threads(1)
    out_dir = args.out or checkpoints.CHECKPOINT_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = out_dir / f"{RESULT}.jsonl"
    done = _done(lines, runs)
    todo = [
        (t, n, args.seed + i)
        for n in args.lengths
        for t in args.tasks
        for i in range(args.examples)
        if (t, n, args.seed + i) not in done
    ]
    total = len(todo) + len(done)
    print(f"{len(done)} of {total} examples done; {len(runs)} runs each", file=sys.stderr)
    if todo and not args.summary:
        chat = registry.chat().load()
        heads = press_eval.duo_scores(chat)
        retrieval = press_eval.retrieval_scores(chat) if "retrieval_heads" in args.presses else None
        started = time.perf_counter()
        for i, (task, n, seed) in enumerate(todo, 1):
            ex = ruler.generate(chat.tokenizer, task, n, seed)
            rec = press_eval.run_example(chat, ex, runs, heads, retrieval=retrieval)
            rec["duo_head_scores"] = heads.tolist()
            with lines.open("a", encoding="utf-8") as f:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            done[(task, n, seed)] = rec
            full = rec["runs"][0]["score"]
            eta = (time.perf_counter() - started) / i * (len(todo) - i) / 60
            sec = " + ".join(f"{k} {v:.1f}" for k, v in rec["seconds"].items())
            print(
                f"[{len(done)}/{total}] {task} {n} seed {seed}: {sec} s; full {full:.2f}, "
                f"mean of presses {sum(x['score'] for x in rec['runs']) / len(runs):.2f}; "
                f"about {eta:.0f} min left",
                file=sys.stderr,
            )
    wanted = {(t, n) for t in args.tasks for n in args.lengths}
    if args.summary:  # everything measured, a task only calibrated as its baseline
        done = _every(lines)
    records = [r for k, r in done.items() if k[:2] in wanted]
    summary = summarise(records, runs)
    result = {
        "command": recorded_command("engine.evaluate cache", argv, "--out"),
        "runs": [[p, r] for p, r in runs],
        "counts_from": COUNTS,
        "tasks": summary,
        "duo_head_scores": next((r["duo_head_scores"] for r in records), None),
        # the retrieval_heads press ranks K/V heads by this result's scores (max per group)
        "retrieval_scores_from": f"{press_eval.RETRIEVAL_HEADS}.json",
        "estimate_hours_25": estimate_hours(summary, 25),
        "estimate_cpu_hours_25": estimate_hours(summary, 25, "cpu_seconds_per_example"),
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {torch.get_num_threads()} torch thread",
        # bfloat16 products where the CPU has them, else float32 (engine.models.precision)
        "arithmetic": str(precision.LONG).removeprefix("torch."),
    }
    checkpoints.save_result(RESULT, result, out_dir)
    if args.csv:
        write_csv(args.csv, summary)
    print(json.dumps(result, ensure_ascii=False))
    return 0
