"""``python -m engine.evaluate retrieval_heads``: SmolLM2's retrieval heads (Wu et al. 2024)
and what masking them costs next to masking as many random heads.

``--n`` single-needle examples of ``--length`` tokens from ``--seed``
(``engine.data.ruler``): each head's retrieval score over the copied answer tokens
(:func:`engine.analysis.retrieval_heads.scores`), then needle accuracy with nothing masked,
with the top ``--k`` heads masked, and with ``--k`` random heads masked (``--draws`` draws).
The last stdout line is the JSON, also written to
``assets/checkpoints/retrieval_heads-eval.json`` with ``--save`` (``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import torch

from engine import checkpoints
from engine._cli import recorded_command
from engine.analysis import retrieval_heads as rh
from engine.models import registry

RESULT = checkpoints.result_name("retrieval_heads")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.evaluate retrieval_heads")
    p.add_argument("--n", type=int, default=20, help="needle examples")
    p.add_argument("--length", type=int, default=rh.LENGTH, help="tokens of each prompt")
    p.add_argument("--k", type=int, default=10, help="heads masked (top, and random)")
    p.add_argument("--draws", type=int, default=4, help="random draws of k heads")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", action="store_true", help="write the result beside the checkpoints")
    p.add_argument("--out", help="directory for --save (default: assets/checkpoints)")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    chat = registry.chat().load()
    started, cpu = time.perf_counter(), time.process_time()
    examples = rh.needles(chat.tokenizer, a.n, seed=a.seed, length=a.length)
    print(f"scoring {len(examples)} needles of ≤ {a.length} tokens", file=sys.stderr, flush=True)
    score = rh.scores(chat, examples)
    print(f"scored in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    masked = rh.masking(
        chat,
        examples,
        score,
        a.k,
        draws=a.draws,
        seed=a.seed,
        progress=lambda d, t: print(f"masking {d}/{t}", file=sys.stderr, flush=True),
    )
    result = {
        "command": recorded_command("engine.evaluate retrieval_heads", argv, "--out"),
        "paper": "Wu et al. 2024, Retrieval Head Mechanistically Explains Long-Context "
        "Factuality (arXiv 2404.15574)",
        "task": rh.TASK,
        "length": a.length,
        "seed": a.seed,
        "score": score.round(4).tolist(),
        "heads_over_0.1": int((score > 0.1).sum()),
        "heads": int(score.size),
        "top": [
            {"layer": li, "head": h, "score": round(float(score[li, h]), 4)}
            for li, h in rh.top_heads(score, 10)
        ],
        "masking": masked,
        "wall_s": round(time.perf_counter() - started, 1),
        "cpu_s": round(time.process_time() - cpu, 1),
        "machine": platform.machine(),
    }
    if a.save:
        checkpoints.save_result(RESULT, result, a.out)
    print(json.dumps(result))
    return 0
