"""``python -m engine.evaluate induction [--save]``: the induction toy measured from its
shipped weights and timeline, not copied from the training log.

For each model (two layers, and the one-layer control): the held-out loss and
in-context-learning score of the final weights on a fresh set of repeated blocks (a seed
the training never drew), the best previous-token head of layer 0 and the best induction
head of the last layer on the probe (:func:`engine.analysis.induction.snapshot`), and the
phase change read off the shipped timeline (:func:`engine.analysis.induction.phase_change`:
None for the control, whose induction score never crosses 0.5). The last stdout line is
the JSON; ``--save`` writes ``assets/checkpoints/induction-eval.json``, which the toy's
cards read.
"""

from __future__ import annotations

import argparse
import json

import torch

from engine import checkpoints
from engine._cli import recorded_command
from engine.analysis import induction as analysis
from engine.models import induction as toy
from engine.training.induction import HELD_OUT, repeated_blocks

RESULT = checkpoints.result_name("induction")
FRESH_SEED = 20_000  # the training's held-out set is drawn from 10_000 + seed


def measure(n_layers: int, directory=None) -> dict:
    """One model's numbers (see the module docstring)."""
    folder = directory or analysis.TIMELINE_DIR
    name = toy.checkpoint_name(n_layers)
    model = toy.load(name, folder)
    meta = checkpoints.load_meta(name, folder)
    fresh = repeated_blocks(torch.Generator().manual_seed(FRESH_SEED), HELD_OUT, model.cfg)
    metrics, _ = analysis.snapshot(model, meta["probe"], fresh)
    tl = analysis.load_timeline(n_layers, folder)
    curves = analysis.headline(tl)
    last = n_layers - 1
    return {
        "held_out_loss": round(metrics["loss"], 4),
        "icl": round(metrics["icl"], 4),
        "best_previous_token_head": round(
            max(v for k, v in metrics.items() if k.startswith("previous.L0.")), 4
        ),
        "best_induction_head": round(
            max(v for k, v in metrics.items() if k.startswith(f"induction.L{last}.")), 4
        ),
        "phase_change": analysis.phase_change(tl["steps"], tl["loss"], curves["induction"]),
        "steps": int(tl["steps"][-1]),
        "held_out": {"sequences": HELD_OUT, "seed": FRESH_SEED},
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.evaluate induction", description=__doc__)
    p.add_argument("--save", action="store_true", help=f"write {RESULT}.json")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    result = {
        "family": "induction",
        "paper": "Olsson et al. 2022, In-context learning and induction heads (arXiv 2209.11895)",
        "command": recorded_command("engine.evaluate induction", argv, "--out"),
        "models": {toy.checkpoint_name(n): measure(n) for n in (2, 1)},
    }
    if a.save:
        checkpoints.save_result(RESULT, result)
    print(json.dumps(result))
    return 0
