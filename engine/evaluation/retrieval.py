"""``python -m engine.evaluate retrieval``: the chat model answering bAbI from passages.

On generated bAbI tasks 1, 2 and 3, each story's sentences are the passages
(:func:`engine.analysis.retrieval.story_passages`) and, per task:

- ``accuracy``: SmolLM2-135M-Instruct answering greedily with the top-k retrieved
  sentences in its prompt (``retrieved``, in the order the story told them), with the
  whole story (``story``; the earliest sentences dropped when it is over the model's
  256 tokens) and with no context (``none``). An answer counts when the first word of
  the reply that is a possible answer of the task (a bAbI place) equals the bAbI answer,
  case-insensitive (:func:`engine.analysis.retrieval.named_answer`), as MemN2N chooses
  among its candidates. Beside it, stricter and looser:
  ``accuracy_first_content_word`` (the first word that is not an article, preposition,
  pronoun, form of "be", "answer", nor a word of the question, so "Mary journeyed to
  the bathroom." is wrong) and ``accuracy_contains`` (the answer anywhere in the reply).
- ``recall_at_k``: MiniLM retrieval puts *all* the question's supporting facts in its
  top k (k = 1, 3, 5); ``top1_support_rate``: the top passage is one of them.
- ``attention_hit_rate``: the passage with the most attention mass (mean over layers
  and heads, averaged over the steps that wrote the answer) is a supporting fact, with
  the whole story in the prompt (``attention_hit_rate_retrieved``: the top-k prompt);
  beside it the rate a uniformly random passage of the same prompt would reach and how
  often the most-read passage is [1].
- ``memn2n_hit_rate``: the task's shipped MemN2N (``registry.for_babi_task``): the
  argmax of its *last* hop's weights p_i is a supporting fact (every hop in
  ``memn2n_hit_rate_per_hop``); ``memn2n_accuracy``: its answer is the bAbI answer.

Wrong answers count as they are. The last stdout line is the JSON, also written to
``assets/checkpoints/retrieval-eval.json`` (``--out`` for another directory).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import statistics
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np
import torch

from engine import checkpoints
from engine._cli import recorded_command
from engine.analysis import retrieval
from engine.data import babi, babi_tasks
from engine.models import chat as chat_model
from engine.models import memn2n, registry
from engine.models.pretrained import MINILM

TASKS = (1, 2, 3)
RECALL_AT = (1, 3, 5)
RESULT = checkpoints.result_name("retrieval")


def eval_samples(task: int, n: int, seed: int) -> tuple[list[babi.Sample], int]:
    """``n`` generated questions of ``task`` and the generator seed (a stream of its own:
    not the train, dev or test seeds of engine.data.babi.dataset)."""
    generator_seed = 50_000 + 1_000 * seed + task
    return babi.samples(babi_tasks.generate(task, n, generator_seed), task)[:n], generator_seed


def recall(order: np.ndarray, support: tuple[int, ...], k: int) -> bool:
    """All supporting facts are among the first k of ``order``."""
    return set(support) <= {int(i) for i in order[:k]}


def _chat_reading(chat, sample, passages, mode, max_new_tokens) -> dict:
    t0 = time.perf_counter()
    trace = retrieval.answer(
        chat, sample.question, passages, mode=mode, max_new_tokens=max_new_tokens
    )
    out = trace.outputs
    said = out["answer"]
    read = out["most_read"]
    shown = out["passages"]
    return {
        "answer": said,
        "correct": retrieval.named_answer(said, babi_tasks.PLACES) == sample.answer,
        "content_word": retrieval.first_content_word(said, sample.question) == sample.answer,
        "contains": sample.answer in babi.words(said),
        "hit": None if read is None else bool(shown[read]["support"]),
        "first": read == 0,
        "chance": (sum(p["support"] for p in shown) / len(shown)) if shown else None,
        "truncated": len(out["truncated"]),
        "support_truncated": any(p["support"] for p in out["truncated"]),
        "ms": (time.perf_counter() - t0) * 1e3,
    }


def _memn2n_reading(reader, sample) -> dict:
    trace = memn2n.answer(reader, sample)
    p = trace.maps["memory"].weights[:, 0, 0, :]  # (hops, n_kept)
    offset = len(sample.story) - p.shape[1]  # the memory keeps the last sentences
    tops = [offset + int(i) for i in p.argmax(-1)]
    return {
        "correct": trace.outputs["answer"] == sample.answer,
        "hits": [t in sample.support for t in tops],
    }


def _rate(values) -> float | None:
    values = [v for v in values if v is not None]
    return round(float(np.mean(values)), 4) if values else None


def score_sample(chat, emb, reader, sample, k: int, max_new_tokens: int) -> dict:
    """Retrieval, the chat model's three readings and MemN2N's on one question."""
    passages = retrieval.story_passages(sample)
    store = retrieval.build_store(passages, emb)
    t = time.perf_counter()
    r = retrieval.retrieve(store, sample.question, k, floor=-1.0, embedder=emb)
    ms = (time.perf_counter() - t) * 1e3
    order = np.argsort(-r.scores, kind="stable")
    chosen = [passages[j] for j in sorted(r.top)]  # the story's own order
    return {
        "recall": {j: recall(order, sample.support, j) for j in RECALL_AT},
        "top1": int(order[0]) in sample.support,
        "retrieve_ms": ms,
        "chat": {
            "retrieved": _chat_reading(chat, sample, chosen, "retrieved", max_new_tokens),
            "story": _chat_reading(chat, sample, passages, "story", max_new_tokens),
            "none": _chat_reading(chat, sample, passages, "none", max_new_tokens),
        },
        "memn2n": _memn2n_reading(reader, sample),
    }


def summarise(samples, rows: list[dict]) -> dict:
    """The task's rates from :func:`score_sample`'s rows (see the module docstring)."""
    modes, read = retrieval.MODES, retrieval.MODES[:2]
    chat = {m: [r["chat"][m] for r in rows] for m in modes}
    hops = np.array([r["memn2n"]["hits"] for r in rows], dtype=float)  # (n, hops)
    return {
        "n": len(rows),
        "accuracy": {m: _rate(x["correct"] for x in chat[m]) for m in modes},
        "accuracy_first_content_word": {
            m: _rate(x["content_word"] for x in chat[m]) for m in modes
        },
        "accuracy_contains": {m: _rate(x["contains"] for x in chat[m]) for m in modes},
        "recall_at_k": {str(j): _rate(r["recall"][j] for r in rows) for j in RECALL_AT},
        "top1_support_rate": _rate(r["top1"] for r in rows),
        # the whole story in the prompt: the chat model beside MemN2N over the same sentences
        "attention_hit_rate": _rate(x["hit"] for x in chat["story"]),
        "attention_hit_rate_retrieved": _rate(x["hit"] for x in chat["retrieved"]),
        "attention_chance_rate": {m: _rate(x["chance"] for x in chat[m]) for m in read},
        "attention_first_passage_rate": {m: _rate(x["first"] for x in chat[m]) for m in read},
        "story_truncated_rate": _rate(x["truncated"] > 0 for x in chat["story"]),
        "story_support_truncated_rate": _rate(x["support_truncated"] for x in chat["story"]),
        "memn2n_accuracy": _rate(r["memn2n"]["correct"] for r in rows),
        "memn2n_hit_rate": round(float(hops[:, -1].mean()), 4),
        "memn2n_hit_rate_per_hop": [round(float(h), 4) for h in hops.mean(0)],
        "examples": [
            {
                "question": s.question,
                "expected": s.answer,
                **{m: r["chat"][m]["answer"] for m in modes},
            }
            for s, r in list(zip(samples, rows, strict=True))[:5]
        ],
        "timings": {
            "retrieve_ms_median": round(statistics.median(r["retrieve_ms"] for r in rows), 2),
            "answer_ms_median": {
                m: round(statistics.median(x["ms"] for x in chat[m]), 1) for m in modes
            },
        },
    }


def score_task(chat, emb, reader, task, n, k, seed, max_new_tokens, log) -> dict:
    samples, generator_seed = eval_samples(task, n, seed)
    rows, t0 = [], time.perf_counter()
    for i, s in enumerate(samples):
        rows.append(score_sample(chat, emb, reader, s, k, max_new_tokens))
        if (i + 1) % 10 == 0:
            log(f"task {task}: {i + 1}/{len(samples)} ({time.perf_counter() - t0:.0f} s)")
    out = summarise(samples, rows)
    out["timings"]["task_s"] = round(time.perf_counter() - t0, 1)
    return {"generator_seed": generator_seed, "memn2n_model": reader.name, **out}


def _models() -> tuple:
    torch.set_num_threads(1)
    return registry.chat().load(), retrieval.embedder()


def run_task(task, n, k, seed, max_new_tokens, directory=None, models=None) -> dict:
    """One task's scores (a process of its own when ``--jobs`` > 1: it loads the models)."""
    chat, emb = models or _models()
    reader = registry.for_babi_task(task, directory).load()

    def log(line: str) -> None:
        print(line, flush=True)

    return score_task(chat, emb, reader, task, n, k, seed, max_new_tokens, log)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m engine.evaluate retrieval",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--n", type=int, default=100, help="questions per task")
    ap.add_argument("--k", type=int, default=3, help=f"passages retrieved (1..{retrieval.MAX_K})")
    ap.add_argument("--seed", type=int, default=0, help="chooses the generated stories")
    ap.add_argument("--max-new-tokens", type=int, default=12)
    ap.add_argument("--tasks", default="1,2,3", help="comma-separated, from 1, 2, 3")
    ap.add_argument("--jobs", type=int, default=1, help="tasks scored in parallel processes")
    ap.add_argument("--checkpoints", default=None, help="MemN2N directory (assets/checkpoints)")
    ap.add_argument("--out", default=None, help="where the JSON goes (the --checkpoints one)")
    return ap


def _summary(args, tasks: tuple[int, ...], per_task: dict, argv: list[str]) -> dict:
    """The JSON: each task's rates with the rules and the conditions they were measured in."""
    return {
        "family": "retrieval",
        "tasks": per_task,
        "n": args.n,
        "k": args.k,
        "seed": args.seed,
        "max_new_tokens": args.max_new_tokens,
        "rule": (
            "accuracy: the first word of the reply that is a possible answer of the task (one "
            "of the six bAbI places) equals the bAbI answer, case-insensitive, as MemN2N picks "
            "among its candidates; accuracy_first_content_word: the first word that is not an "
            "article, preposition, pronoun, form of 'be' or 'answer', nor a word of the "
            "question, equals it ('Mary journeyed to the bathroom.' counts as wrong there); "
            "accuracy_contains: the answer word anywhere in the reply"
        ),
        "retrieval": (
            f"all-MiniLM-L6-v2, mean pooling + L2 norm, cosine; top {args.k} placed in the "
            "prompt in story order; recall@k: all supporting facts in the top k"
        ),
        "attention_rule": (
            "most-read passage: argmax over passages of the attention mass (sum over the "
            "passage's tokens), mean over layers and heads, averaged over the steps that "
            "wrote the answer; a hit when it is a supporting fact. attention_hit_rate: the "
            "whole story in the prompt (as MemN2N reads it); attention_hit_rate_retrieved: the "
            "top-k prompt; attention_chance_rate: a uniformly random passage of the prompt; "
            "attention_first_passage_rate: how often the most-read passage is [1]"
        ),
        "memn2n_rule": "argmax of the last hop's p_i (every hop in memn2n_hit_rate_per_hop)",
        "conditions": {
            "chat_model": chat_model.NAME,
            "embedder": MINILM,
            "dtype": "weights float16; decoder-step products float16, prompt products "
            "float32; attention weights float32 (engine.models.precision)",
            "decoding": "greedy",
            "max_prompt_tokens": chat_model.MAX_PROMPT_TOKENS,
            "threads": "1 per process",
            "processes": min(args.jobs, len(tasks)),
            "device": "cpu",
            "machine": f"{platform.machine()} {os.cpu_count()} cores (shared)",
            "torch": torch.__version__,
        },
        "command": recorded_command("engine.evaluate retrieval", argv, "--out"),
    }


def _score(args, tasks: tuple[int, ...]) -> dict:
    """Every task's results, saved after each task (``"partial": true`` until the last)."""
    options = (args.n, args.k, args.seed, args.max_new_tokens, args.checkpoints)
    per_task = {}

    def done(task: int, r: dict) -> None:
        per_task[str(task)] = r
        partial = {"partial": True, "tasks": dict(sorted(per_task.items()))}
        checkpoints.save_result(RESULT, partial, args.out or args.checkpoints)
        print(
            f"task {task}: accuracy {r['accuracy']}  recall@k {r['recall_at_k']}  "
            f"attention hit {r['attention_hit_rate']}  MemN2N hit {r['memn2n_hit_rate']} "
            f"accuracy {r['memn2n_accuracy']}",
            flush=True,
        )

    if args.jobs == 1:
        models = _models()
        for task in tasks:
            done(task, run_task(task, *options, models=models))
    else:  # one process per task, one thread each: the tasks share nothing
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(min(args.jobs, len(tasks)), mp_context=spawn) as pool:
            futures = {pool.submit(run_task, task, *options): task for task in tasks}
            for future in as_completed(futures):
                done(futures[future], future.result())
    return {str(t): per_task[str(t)] for t in tasks}


def main(argv: list[str]) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    tasks = tuple(int(t) for t in args.tasks.split(","))
    if (
        args.n < 1
        or args.jobs < 1
        or not 1 <= args.k <= retrieval.MAX_K
        or not set(tasks) <= set(TASKS)
    ):
        ap.error(f"--n ≥ 1, --jobs ≥ 1, --k in 1..{retrieval.MAX_K}, --tasks from {TASKS}")
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    summary = _summary(args, tasks, _score(args, tasks), argv)
    summary["timings"] = {"total_s": round(time.perf_counter() - t0, 1)}
    checkpoints.save_result(RESULT, summary, args.out or args.checkpoints)
    print(json.dumps(summary))
    return 0
