"""``python -m engine.evaluate memn2n --task N|all``: test accuracy and supporting-fact hits.

For each task: accuracy on its fixed 1,000 test questions, and the *supporting-fact
hit rate* — per hop, how often that hop's most-attended memory is one of the question's
supporting facts, and how often at least one hop's is. Each task is answered by its own
model or the joint one, whichever is more accurate on the task's dev questions (a split
neither was trained on). Beside each task, the published accuracy of MemN2N PE LS RN
trained on 1k, per task and joint (Sukhbaatar et al. 2015, Table 1).
The last stdout line is one JSON object; ``--save`` also writes it to
``assets/checkpoints/memn2n-eval.json`` (in the ``--checkpoints`` directory when given),
where the Memory page reads it.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import torch

from engine import checkpoints
from engine.data.babi import TASK_IDS, dataset, elsewhere_stories, short_stories
from engine.data.babi_encode import encode, times_and_mask
from engine.models import registry
from engine.models.cards.memn2n import MemN2NCard
from engine.models.memn2n import MemN2N, checkpoint_name

# Sukhbaatar et al. 2015, "End-To-End Memory Networks", Table 1: test error (%) on the
# bAbI 1k tasks, tasks 1-20. Column "PE LS RN": one model per task, best of 10 runs
# picked on validation; column "PE LS RN joint": one model for all 20 tasks. Their mean
# errors are 13.9 and 12.4, as printed in the table; the joint column also matches a
# public transcription of it digit for digit. Our generated tasks follow the published
# generators but are not the published files, so the comparison is indicative.
# fmt: off
PAPER_PE_LS_RN_1K_ERROR = dict(enumerate((
    0.0, 8.3, 40.3, 2.8, 13.1, 7.6, 17.3, 10.0, 13.2, 15.1,
    0.9, 0.2, 0.4, 1.7, 0.0, 1.3, 51.0, 11.1, 82.8, 0.0), start=1))
PAPER_PE_LS_RN_JOINT_1K_ERROR = dict(enumerate((
    0.0, 11.4, 21.9, 13.4, 14.4, 2.8, 18.3, 9.3, 1.9, 6.5,
    0.3, 0.1, 0.2, 6.9, 0.0, 2.7, 40.4, 9.4, 88.0, 0.0), start=1))
# fmt: on
TARGETS = {1: 0.99, 4: 0.95, 15: 0.95}


def paper_accuracy(task: int, joint: bool = False) -> float:
    table = PAPER_PE_LS_RN_JOINT_1K_ERROR if joint else PAPER_PE_LS_RN_1K_ERROR
    return round(1 - table[task] / 100, 4)


def score(reader: MemN2N, task: int, split: str = "test", batch: int = 250, short=None) -> dict:
    """Accuracy and supporting-fact hit rates of one model on one task's dev or test set
    (``short``: on the given short stories instead)."""
    samples = dataset(task, split) if short is None else short
    enc = encode(samples, reader.vocab, reader.candidates, reader.cfg.memory)
    correct, hits, any_hit = 0, np.zeros(reader.cfg.hops), 0
    with torch.no_grad():
        for start in range(0, len(enc), batch):
            sl = slice(start, start + batch)
            n_facts = torch.from_numpy(enc.n_facts[sl])
            story = torch.from_numpy(enc.story[sl])
            times, mask = times_and_mask(n_facts, story.shape[1])
            logits, p, _ = reader(story, times, mask, torch.from_numpy(enc.query[sl]))
            correct += int((logits.argmax(-1).numpy() == enc.answer[sl]).sum())
            top = p.argmax(-1).numpy()  # (B, K): each hop's most-attended memory
            hit = np.take_along_axis(enc.support[sl][:, None, :], top[..., None], 2)[..., 0]
            hits += hit.sum(0)
            any_hit += int(hit.any(1).sum())
    n = len(enc)
    return {
        "accuracy": round(correct / n, 4),
        "paper_accuracy": paper_accuracy(task),
        "paper_joint_accuracy": paper_accuracy(task, joint=True),
        "support_hit_any_hop": round(any_hit / n, 4),
        "support_hit_per_hop": [round(float(h) / n, 4) for h in hits],
        "n_test": n,
        "model": reader.name,
    }


def short_and_restarts(reader: MemN2N, task: int, test_accuracy: float) -> dict:
    """Accuracy on the task's fixed 2–4-sentence stories, how far the paper's PE LS RN
    (per task, 1k) is above ours (negative: we are above it), and the restarts the
    model was kept from (its training JSON: seed, every restart's validation error)."""
    short = short_stories(task)
    acc = score(reader, task, short=short)["accuracy"]
    meta = reader.meta
    # Short stories whose "no" is asked about someone else's place (the Daniel story):
    # only the yes/no tasks have them.
    other = elsewhere_stories(task)
    there = {"elsewhere_accuracy": score(reader, task, short=other)["accuracy"]} if other else {}
    return {
        "short_accuracy": acc,
        "n_short": len(short),
        **there,
        "n_elsewhere": len(other),
        "paper_miss": round(paper_accuracy(task) - test_accuracy, 4),
        "restarts": {
            "seed": meta.get("seed"),
            "n": meta.get("repeats", 1),
            "val_errors": [r["val_error"] for r in meta.get("restarts", [])],
            "command": meta.get("command"),
        },
    }


def choose(task: int, directory=None, cache: dict | None = None) -> tuple[str, dict]:
    """The shipped model for a task: its own or the joint one, whichever is more accurate
    on the task's dev questions (never trained on). Returns (name, dev accuracy by name)."""
    cache = {} if cache is None else cache
    names = [
        n
        for n in (checkpoint_name(task), checkpoint_name("joint"))
        if n in checkpoints.available("memn2n-", directory)
    ]
    if not names:
        raise checkpoints.CheckpointError("checkpoint.no_memn2n")
    dev = {}
    for name in names:
        if name not in cache:
            cache[name] = registry.get(name, directory).load()
        dev[name] = score(cache[name], task, "dev")["accuracy"]
    return max(names, key=lambda n: dev[n]), dev


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m engine.evaluate memn2n",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--task", default="all", help=f"one of {TASK_IDS} or 'all'")
    ap.add_argument("--checkpoints", default=None, help="directory (default assets/checkpoints)")
    ap.add_argument(
        "--joint", action="store_true", help="score the joint model on every task (no choice)"
    )
    ap.add_argument(
        "--save", action="store_true", help="also write memn2n-eval.json for the Memory page"
    )
    args = ap.parse_args(argv)
    if args.task != "all" and (not args.task.isdigit() or int(args.task) not in TASK_IDS):
        ap.error(f"--task must be one of {TASK_IDS} or 'all'")
    torch.set_num_threads(1)
    tasks = TASK_IDS if args.task == "all" else (int(args.task),)
    cache: dict = {}
    per_task = {}
    for t in tasks:
        if args.joint:
            name, dev = checkpoint_name("joint"), {}
            cache.setdefault(name, registry.get(name, args.checkpoints).load())
        else:
            name, dev = choose(t, args.checkpoints, cache)
        per_task[str(t)] = r = {**score(cache[name], t), "dev_accuracy": dev}
        r |= short_and_restarts(cache[name], t, r["accuracy"])
        print(
            f"task {t:2d}: accuracy {r['accuracy']:.3f} (paper {r['paper_accuracy']:.3f}, "
            f"joint {r['paper_joint_accuracy']:.3f})  short stories {r['short_accuracy']:.3f}  "
            f"someone else's place {r.get('elsewhere_accuracy', float('nan')):.3f}  "
            f"support hit {r['support_hit_any_hop']:.3f} per hop {r['support_hit_per_hop']}  "
            f"[{name}]"
        )
    mean = float(np.mean([r["accuracy"] for r in per_task.values()]))
    short = float(np.mean([r["short_accuracy"] for r in per_task.values()]))
    paper = float(np.mean([r["paper_accuracy"] for r in per_task.values()]))
    met = {
        str(t): per_task[str(t)]["accuracy"] >= g for t, g in TARGETS.items() if str(t) in per_task
    }
    summary = {
        "family": "memn2n",
        "training_size": "1k",
        "tasks": per_task,
        "mean_accuracy": round(mean, 4),
        "mean_short_accuracy": round(short, 4),
        "paper_mean_accuracy": round(paper, 4),
        "targets": {str(t): g for t, g in TARGETS.items()},
        "targets_met": met,
        "mean_at_least_paper": mean >= paper,
        "paper": "Sukhbaatar et al. 2015, Table 1, bAbI 1k, MemN2N PE LS RN (per task); "
        "paper_joint_accuracy: PE LS RN joint",
        "command": "python -m engine.evaluate memn2n " + " ".join(argv),
    }
    if args.save:
        checkpoints.save_result(MemN2NCard.result_name, summary, args.checkpoints)
    print(json.dumps(summary))
    return 0
