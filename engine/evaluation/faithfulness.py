"""``python -m engine.evaluate faithfulness --family nmt|memn2n|retrieval``: is attention
faithful to what the output needs? (:mod:`engine.analysis.faithfulness`)

- ``nmt``: the shipped en→fr Bahdanau model on its test split with the gold target fed
  in. Alignments by the argmax of each target word's row of α, of occlusion (erasing
  source word j), of gradient × input and of integrated gradients, each scored by AER
  against the grammar's gold links (Ding et al. 2019's comparison), and each row of α
  against the same row of every attribution (Spearman ρ, top-1 agreement).
- ``memn2n``: each task's shipped MemN2N on its test questions; every fact removed in
  turn (its slot masked at every hop). Per task and hop: how often the most-attended
  fact is the one whose removal lowers the answer's probability most, and how often
  removing it changes the answer; beside it how often any single removal does.
- ``retrieval``: the chat model answering generated bAbI questions (the stream of
  ``python -m engine.evaluate retrieval``) with the whole story in the prompt; every
  passage dropped in turn. The passage the answer needs (largest drop in log p of the
  model's own answer) is a supporting fact how often, beside the most-attended passage
  (the 0.21 of ``retrieval-eval.json``), gradient × input's and a random passage's.

The last stdout line is the JSON; ``--save`` writes it to
``assets/checkpoints/faithfulness-eval-<family>.json``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from engine import checkpoints
from engine import translation_quality as metrics
from engine.analysis import faithfulness as F
from engine.analysis import faithfulness_memory, faithfulness_nmt, faithfulness_retrieval
from engine.analysis import retrieval as rag
from engine.data import babi_tasks, enfr
from engine.data.babi import TASK_IDS, dataset
from engine.evaluation.retrieval import eval_samples
from engine.models import registry

FAMILIES = ("nmt", "memn2n", "retrieval")


def result_name(family: str) -> str:
    return checkpoints.result_name("faithfulness", family)


def _rate(values) -> float | None:
    values = list(values)
    return round(float(np.mean(values)), 4) if values else None


# -- Bahdanau NMT ------------------------------------------------------------------------
def nmt(n: int, seed: int = 0, steps: int = F.IG_STEPS, log=print) -> dict:
    card = registry.default("en-fr", family="nmt")
    tr = card.load()
    # the test split (a prefix of each length bucket) does not depend on the other sizes;
    # enfr.splits never returns when n is not a multiple of the buckets, so n is rounded down
    per = max(1, n // len(enfr.LENGTH_BUCKETS))
    pairs = enfr.splits(seed, n_train=0, n_valid=0, n_test=per * len(enfr.LENGTH_BUCKETS))["test"]
    links = {m: [] for m in ("attention", "occlusion", "grad_x_input", "integrated_gradients")}
    rows: dict[str, list[F.Agreement]] = {m: [] for m in list(links)[1:]}
    ig_error = []
    t0 = time.perf_counter()
    for k, p in enumerate(pairs):
        s = faithfulness_nmt.saliency(tr, list(p.src), list(p.tgt), steps)
        T = len(p.tgt)  # the words' rows; </s> aligns to nothing gold
        links["attention"].append(metrics.argmax_links(s.alpha[:T]))
        for name, m in s.methods().items():
            links[name].append(metrics.argmax_links(m[:T]))
            rows[name] += [F.agreement(a, b) for a, b in zip(s.alpha[:T], m[:T], strict=True)]
        ig_error += list(s.ig_error)
        if (k + 1) % 50 == 0:
            log(f"nmt: {k + 1}/{len(pairs)} ({time.perf_counter() - t0:.0f} s)")
    aer = {
        m: round(metrics.aer((a, p.sure, p.possible) for a, p in zip(x, pairs, strict=True)), 4)
        for m, x in links.items()
    }
    return {
        "model": tr.name,
        "n_test": len(pairs),
        "n_rows": len(rows["occlusion"]),
        "aer": aer,
        "agreement_with_attention": {m: F.summarise(r) for m, r in rows.items()},
        "ig_steps": steps,
        "ig_completeness_error": {
            "median": round(float(np.median(ig_error)), 5),
            "max": round(float(np.max(ig_error)), 5),
        },
        "rule": "gold target fed in; alignment: each target word to the argmax of its row "
        "(α, Δ log p when source word j's embedding is erased, g·x, IG from a zero "
        "baseline); AER (Och & Ney) against sure + possible gold links; agreement: each "
        "target word's α row against the attribution's row",
        "timings": {"total_s": round(time.perf_counter() - t0, 1)},
    }


# -- MemN2N ------------------------------------------------------------------------------
def _question(reader, sample) -> dict:
    """One question's facts removed in turn, read per hop (see the module docstring)."""
    r = faithfulness_memory.remove_each(reader, sample)
    top, need, changes = r.hops.argmax(-1), int(r.delta.argmax()), r.changes()
    return {
        "correct": reader.candidates[r.answer] == sample.answer,
        "top_is_needed": [int(t) == need for t in top],
        "top_changes": [bool(changes[t]) for t in top],
        "any_changes": bool(changes.any()),
        "needed_is_support": need in r.support,
        "top_is_support": [int(t) in r.support for t in top],
        "chance": 1 / len(r.delta),
        "agreement": r.agreement(),
    }


def memn2n_task(task: int, n: int) -> dict:
    reader = registry.for_babi_task(task).load()
    rows = [_question(reader, s) for s in dataset(task, "test")[:n]]
    hops = range(reader.cfg.hops)

    def per_hop(key: str) -> list:
        return [_rate(q[key][h] for q in rows) for h in hops]

    return {
        "model": reader.name,
        "n": len(rows),
        "accuracy": _rate(q["correct"] for q in rows),
        "top_attended_is_most_needed": per_hop("top_is_needed"),
        "removing_top_attended_changes_answer": per_hop("top_changes"),
        "some_removal_changes_answer": _rate(q["any_changes"] for q in rows),
        "most_needed_is_support": _rate(q["needed_is_support"] for q in rows),
        "top_attended_is_support": per_hop("top_is_support"),
        "chance": _rate(q["chance"] for q in rows),
        "spearman": [F.summarise([q["agreement"][h] for q in rows])["spearman"] for h in hops],
    }


def memn2n(n: int, log=print) -> dict:
    t0 = time.perf_counter()
    tasks = {}
    for t in TASK_IDS:
        tasks[str(t)] = r = memn2n_task(t, n)
        log(
            f"task {t:2d}: top attended = most needed per hop {r['top_attended_is_most_needed']}"
            f"  its removal changes the answer {r['removing_top_attended_changes_answer']}"
        )
    last = [r["top_attended_is_most_needed"][-1] for r in tasks.values()]
    changes = [r["removing_top_attended_changes_answer"][-1] for r in tasks.values()]
    return {
        "tasks": tasks,
        "mean_last_hop_top_is_most_needed": _rate(last),
        "mean_last_hop_removal_changes_answer": _rate(changes),
        "rule": "fact i removed: its memory slot masked at every hop; most needed: the "
        "largest drop in log p of the model's own answer; per hop: that hop's argmax p_i; "
        "chance: 1 / facts, the rate of a uniformly random fact being the most needed",
        "timings": {"total_s": round(time.perf_counter() - t0, 1)},
    }


# -- retrieval ---------------------------------------------------------------------------
def retrieval_task(task: int, n: int, seed: int, max_new_tokens: int, log=print) -> dict:
    chat = registry.chat().load()
    samples, generator_seed = eval_samples(task, n, seed)
    rows, t0 = [], time.perf_counter()
    for k, s in enumerate(samples):
        trace = rag.answer(
            chat, s.question, rag.story_passages(s), mode="story", max_new_tokens=max_new_tokens
        )
        r = faithfulness_retrieval.drop_each(chat, trace)
        correct = rag.named_answer(trace.outputs["answer"], babi_tasks.PLACES) == s.answer
        rows.append((r, correct))
        if (k + 1) % 5 == 0:
            log(f"retrieval task {task}: {k + 1}/{len(samples)} ({time.perf_counter() - t0:.0f} s)")

    def hit(v, r) -> bool:
        return bool(r.support[int(np.argmax(v))])

    def rates(chosen) -> dict:
        return {
            "n": len(chosen),
            "attention_hit_rate": _rate(hit(r.attention, r) for r, _ in chosen),
            "occlusion_hit_rate": _rate(hit(r.delta, r) for r, _ in chosen),
            "grad_x_input_hit_rate": _rate(hit(r.grad_x_input, r) for r, _ in chosen),
            "chance_rate": _rate(sum(r.support) / len(r.support) for r, _ in chosen),
        }

    return {
        "generator_seed": generator_seed,
        **rates(rows),
        "correct_answers": rates([x for x in rows if x[1]]),
        "accuracy": _rate(c for _, c in rows),
        "agreement_with_attention": {
            m: F.summarise([r.agreement()[m] for r, _ in rows])
            for m in ("occlusion", "grad_x_input")
        },
        "mean_passages": _rate(len(r.support) for r, _ in rows),
        "timings": {"task_s": round(time.perf_counter() - t0, 1)},
    }


def retrieval(n: int, tasks: tuple[int, ...], seed: int, max_new_tokens: int, log=print) -> dict:
    return {
        "tasks": {str(t): retrieval_task(t, n, seed, max_new_tokens, log) for t in tasks},
        "n": n,
        "seed": seed,
        "mode": "story",
        "max_new_tokens": max_new_tokens,
        "rule": "the whole story in the prompt (passages = its sentences); the answer: the "
        "model's greedy reply up to its last word; Δ_j: log p(answer | all passages) − "
        "log p(answer | passage j dropped, the rest renumbered); hit: the argmax over "
        "passages is a supporting fact. attention: mass per passage, mean over layers, heads "
        "and answer steps (retrieval-eval.json's most-read passage); grad_x_input: Σ g·x over "
        "the passage's input embeddings; chance: a uniformly random passage",
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m engine.evaluate faithfulness",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--family", choices=FAMILIES, required=True)
    ap.add_argument("--n", type=int, default=None, help="examples (per task): 400 / 1000 / 30")
    ap.add_argument("--tasks", default="1", help="retrieval: comma-separated, from 1, 2, 3")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ig-steps", type=int, default=F.IG_STEPS)
    ap.add_argument("--max-new-tokens", type=int, default=12)
    ap.add_argument("--save", action="store_true", help="write faithfulness-eval-<family>.json")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    if a.family == "nmt":
        out = nmt(a.n or 400, a.seed, a.ig_steps)
    elif a.family == "memn2n":
        out = memn2n(a.n or 1000)
    else:
        tasks = tuple(int(t) for t in a.tasks.split(","))
        out = retrieval(a.n or 30, tasks, a.seed, a.max_new_tokens)
    out = {
        "family": a.family,
        **out,
        "command": "python -m engine.evaluate faithfulness " + " ".join(argv),
    }
    if a.save:
        checkpoints.save_result(result_name(a.family), out)
    print(json.dumps(out, ensure_ascii=False))
    return 0
