"""``python -m engine.evaluate transformer --task en-fr|dates [--pe …] [--every k]``.

Prints BLEU of greedy translations on the test split and, for en-fr, the alignment
error rate (Och & Ney 2003) of every cross-attention head against the gold links:

  AER = 1 − (|A ∩ S| + |A ∩ P|) / (|A| + |S|)

where A links each target word to the source word its head attends to most (teacher
forced on the reference, so every head is scored on the same words), S the sure and P
the possible gold links. Then the positional-encoding ablation: BLEU (and an
order-blind unigram F1) for every shipped en-fr checkpoint, so "without PE the model
knows the words but not their order" is a measured claim. Last stdout line: JSON.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

import numpy as np
import torch

from engine import checkpoints
from engine.models import registry
from engine.models.transformer import (
    PE_KINDS,
    TASKS,
    Transformer,
    checkpoint_name,
    task_module,
)
from engine.training.transformer import batch_tensors
from engine.translation_quality import aer, argmax_links, bleu, exact_match


@torch.no_grad()
def translate(tr: Transformer, pairs, batch: int = 250) -> list[list[str]]:
    out = []
    for i in range(0, len(pairs), batch):
        src = batch_tensors(pairs[i : i + batch], tr.src_vocab, tr.tgt_vocab)[0]
        gen = tr.greedy(src, tr.max_new)
        out.extend(tr.tgt_vocab.decode(row[1:].tolist()) for row in gen)
    return out


def unigram_f1(hyps: list[list[str]], refs: list[list[str]]) -> float:
    """Bag-of-words F1 (order ignored), pooled over the corpus."""
    overlap = sum(sum((Counter(h) & Counter(r)).values()) for h, r in zip(hyps, refs, strict=True))
    n_h, n_r = sum(map(len, hyps)), sum(map(len, refs))
    return 2 * overlap / max(n_h + n_r, 1)


def scores(tr: Transformer, pairs) -> dict:
    """BLEU on tokens (words for en-fr, characters for dates), exact match, unigram F1."""
    hyps = translate(tr, pairs)
    refs = [list(p.tgt) for p in pairs]
    return {
        "bleu": round(bleu(hyps, refs), 2),
        "exact_match": round(exact_match(hyps, refs), 4),
        "unigram_f1": round(unigram_f1(hyps, refs), 4),
    }


@torch.no_grad()
def head_aer(tr: Transformer, pairs, batch: int = 250) -> np.ndarray:
    """``[L, H]`` AER of each cross-attention head's argmax links on gold-target forcing."""
    cfg = tr.cfg
    items = [[[] for _ in range(cfg.n_heads)] for _ in range(cfg.n_layers)]
    for i in range(0, len(pairs), batch):
        chunk = pairs[i : i + batch]
        src, tgt_in, _ = batch_tensors(chunk, tr.src_vocab, tr.tgt_vocab)
        cross = tr(src, tgt_in)[1].cross.numpy()  # (B, L, h, T, S); row t predicts word t
        for b, p in enumerate(chunk):
            for layer in range(cfg.n_layers):
                for h in range(cfg.n_heads):
                    alpha = cross[b, layer, h, : len(p.tgt), : len(p.src)]
                    items[layer][h].append((argmax_links(alpha), p.sure, p.possible))
    return np.array(
        [[aer(items[layer][h]) for h in range(cfg.n_heads)] for layer in range(cfg.n_layers)]
    )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine.evaluate transformer")
    ap.add_argument("--task", choices=sorted(TASKS), default="en-fr")
    ap.add_argument("--pe", choices=PE_KINDS, default="sinusoidal")
    ap.add_argument(
        "--every",
        type=int,
        default=4,
        help="use every k-th test pair (the split is stratified by length, so this "
        "keeps every length bucket; 1 = all 2,000)",
    )
    ap.add_argument("--seed", type=int, default=0, help="data seed (as in training)")
    ap.add_argument(
        "--save",
        action="store_true",
        help="also write the JSON to assets/checkpoints/transformer-eval-<task>.json "
        "(the card's result_name), where the studio page reads it",
    )
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    test = task_module(args.task).splits(seed=args.seed)["test"][:: max(1, args.every)]
    name = checkpoint_name(args.task, args.pe)
    card = registry.get(name)
    tr = card.load()
    result = {
        "task": args.task,
        "pe": args.pe,
        "checkpoint": name,
        "n_test": len(test),
        **scores(tr, test),
    }
    print(f"{name}: BLEU {result['bleu']}  exact {result['exact_match']}")
    if args.task == "en-fr":
        table = head_aer(tr, test)
        result["aer"] = {
            f"L{layer}": {f"H{h}": round(float(table[layer, h]), 4) for h in range(table.shape[1])}
            for layer in range(table.shape[0])
        }
        layer, h = np.unravel_index(table.argmin(), table.shape)
        result["best_head"] = {
            "layer": int(layer),
            "head": int(h),
            "aer": round(float(table.min()), 4),
        }
        for row, label in zip(table, result["aer"], strict=True):
            print(f"AER {label}: " + "  ".join(f"{v:.3f}" for v in row))
        ablation = {}
        for pe in PE_KINDS:
            other = checkpoint_name(args.task, pe)
            if other in registry.names():
                ablation[pe] = result if pe == args.pe else scores(registry.get(other).load(), test)
                ablation[pe] = {k: ablation[pe][k] for k in ("bleu", "exact_match", "unigram_f1")}
        result["pe_ablation"] = ablation
        for pe, s in ablation.items():
            print(f"PE {pe:10s}: BLEU {s['bleu']:6.2f}  unigram F1 {s['unigram_f1']:.3f}")
    result["command"] = "python -m engine.evaluate transformer " + " ".join(argv)
    if args.save:
        checkpoints.save_result(card.result_name, result)
    print(json.dumps(result))
    return 0
