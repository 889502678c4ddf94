"""``python -m engine.evaluate sinks``: how many attention sinks SmolLM2 needs — StreamingLLM's
Table 2 (Xiao et al. 2023, arXiv 2309.17453) on this model.

The book's first ``--n`` tokens are read teacher-forced under a cache of ``--budgets``
tokens: the last B tokens alone (0 sinks: a sliding window), or the first s tokens kept as
sinks with the last B − s (s = 1, 2, 4, 8), keys rotated at their slot in the cache as
StreamingLLM's code does (:mod:`engine.analysis.cache_eval`). Then the paper's control:
the text's first four tokens replaced by four "\\n" tokens, kept as the 4 sinks — if the
sink is the *first positions*, whatever their content, this does as well as the real
first tokens. Perplexity for each, with the full cache's beside it.

The last stdout line is the JSON, also written to ``assets/checkpoints/sinks-eval.json``
with ``--save`` (``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from engine import checkpoints
from engine._cli import recorded_command
from engine.analysis import cache_eval
from engine.models import registry
from engine.models.cache_policy import CachePolicy

RESULT = checkpoints.result_name("sinks")
TEXT = Path(__file__).resolve().parents[2] / "assets" / "text" / "pride-and-prejudice.txt"
SINKS = (0, 1, 2, 4, 8)
NEWLINES = 4  # StreamingLLM's control: four "\n" in place of the first four tokens


def policy(budget: int, sinks: int) -> CachePolicy:
    if sinks == 0:
        return CachePolicy("window", window=budget)
    return CachePolicy("sinks", window=budget - sinks, sinks=sinks)


def row(found: dict) -> dict:
    return {
        "ppl": round(found["ppl"], 3),
        "ppl_full": round(found["ppl_full"], 3),
        "ppl_evicted": round(found["ppl_evicted"], 3),
        "kl_evicted": round(found["kl_evicted"], 4),
        "agreement_evicted": round(found["agreement_evicted"], 4),
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.evaluate sinks")
    p.add_argument("--n", type=int, default=1024, help="tokens of the book read")
    p.add_argument("--budgets", default="64,256", help="cache sizes, comma-separated")
    p.add_argument("--save", action="store_true", help="write the result beside the checkpoints")
    p.add_argument("--out", help="directory for --save (default: assets/checkpoints)")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    chat = registry.chat().load()
    budgets = [int(b) for b in a.budgets.split(",")]
    ids = chat.tokenizer.encode(TEXT.read_text(encoding="utf-8")[:40_000])[: a.n]
    started = time.perf_counter()
    policies = [policy(b, s) for b in budgets for s in SINKS]
    found = cache_eval.evaluate_policies(chat, ids, policies, n_eval=a.n)
    table = {str(b): {} for b in budgets}
    for pol, f in zip(policies, found, strict=True):
        budget = pol.window + pol.sinks
        table[str(budget)][str(pol.sinks)] = row(f)
    print(f"sinks: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    newline = chat.tokenizer.encode("\n")[0]
    swapped = [newline] * NEWLINES + ids[NEWLINES:]
    controls = [policy(b, NEWLINES) for b in budgets]
    for pol, f in zip(controls, cache_eval.evaluate_policies(chat, swapped, controls), strict=True):
        table[str(pol.window + pol.sinks)]["4 newlines"] = row(f)
    result = {
        "command": recorded_command("engine.evaluate sinks", argv, "--out"),
        "paper": "Xiao et al. 2023, Efficient Streaming Language Models with Attention Sinks, "
        "Table 2",
        "text": "Pride and Prejudice (assets/text), from its first token",
        "n": len(ids),
        "budgets": budgets,
        "sinks": list(SINKS),
        "table": table,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    if a.save:
        checkpoints.save_result(RESULT, result, a.out)
    print(json.dumps(result))
    return 0
