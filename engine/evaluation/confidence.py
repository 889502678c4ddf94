"""``python -m engine.evaluate confidence``: how sure each translation model is on its own data.

A model trained on a small grammar still answers anything; what tells a reader that
an answer is not worth trusting is the model's own confidence compared with how
confident it is on inputs like its training data. For every translation checkpoint
this measures the mean log-probability per output token of its greedy translation
over the grammar's validation sentences (never trained on) and stores the 1st
percentile as the model's *floor*. A page warns when an input's confidence falls
below it. Models trained with label smoothing sit lower on every input, which is why
each model gets its own floor rather than one threshold for all.

Last stdout line: one JSON object; ``--save`` writes the file every translation card
reads its floor from (``TranslationCard.confidence_result``: confidence-eval.json).
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import torch

from engine import checkpoints
from engine.data import dates, enfr
from engine.models import registry
from engine.models.cards.nmt import TranslationCard


def held_out(task: str, n: int) -> list[str]:
    """The first ``n`` validation inputs of the task's grammar (seed 0, as in training)."""
    if task == "dates":
        return ["".join(p.src) for p in dates.splits(seed=0)["valid"][:n]]
    return [enfr.detokenize_en(p.src) for p in enfr.splits(seed=0)["valid"][:n]]


def measure(card, inputs: list[str]) -> dict:
    model = card.load()
    # greedy where the card has a beam: beam search only raises confidence, so the floor
    # measured greedily never flags a grammar sentence that a page decodes with a beam
    greedy = {"beam": 1} if any(p.name == "beam" for p in card.options) else {}
    scores = [
        card.trace(text, model=model, **greedy).outputs["log_prob_per_token"] for text in inputs
    ]
    return {
        "floor": round(float(np.percentile(scores, 1)), 4),
        "median": round(float(np.median(scores)), 4),
        "n": len(scores),
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m engine.evaluate confidence",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--n", type=int, default=200, help="validation inputs per model")
    ap.add_argument(
        "--save",
        action="store_true",
        help=f"write {TranslationCard.confidence_result}.json, which the cards read",
    )
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    cards = [c for c in registry.cards() if isinstance(c, TranslationCard)]
    inputs = {task: held_out(task, args.n) for task in {c.task for c in cards}}
    result = {}
    for card in cards:
        result[card.name] = measure(card, inputs[card.task])
        print(f"{card.name}: {result[card.name]}", file=sys.stderr)
    if args.save:
        checkpoints.save_result(TranslationCard.confidence_result, result)
    print(json.dumps(result))
    return 0
