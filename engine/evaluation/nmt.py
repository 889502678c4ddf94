"""``python -m engine.evaluate nmt --task dates|en-fr [--model NAME]``

Measures the shipped checkpoints on the test split (never trained on): exact match,
sacreBLEU, BLEU by source-length bucket (Bahdanau et al. Figure 2) and, for en-fr,
Och & Ney's AER of the argmax of α against the grammar's gold links (sure + possible),
plus the argmax against sure links only. Translations are greedy; α for AER is read
with the gold target fed in (forced alignment), so every test sentence counts.

For en-fr, every other available ``nmt-enfr-*`` model is measured too, so the
attention and no-attention curves come from one run. The last stdout line is one JSON
object; ``--save`` also writes it to ``assets/checkpoints/nmt-eval-<task>.json``, which
the Alignment page draws.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from engine import checkpoints
from engine import translation_quality as metrics
from engine.data import enfr
from engine.models import registry
from engine.models.bahdanau import RNNSearch
from engine.training.nmt import collate, load_splits

DATE_BUCKETS = ((1, 10), (11, 20), (21, 40))  # dates are at most 40 characters


def buckets(task: str) -> tuple[tuple[int, int], ...]:
    return enfr.LENGTH_BUCKETS if task == "en-fr" else DATE_BUCKETS


def _bucket_of(n: int, spans) -> int:
    return next((k for k, (lo, hi) in enumerate(spans) if lo <= n <= hi), len(spans) - 1)


@torch.no_grad()
def evaluate(tr: RNNSearch, pairs, beam: int = 1, batch: int = 64) -> dict:
    """All metrics for one model on ``pairs`` (see the module docstring); beam 1 is
    batched greedy decoding, a wider beam decodes sentence by sentence."""
    torch.set_num_threads(1)
    hyps, alphas = [], []
    for k in range(0, len(pairs), batch):
        chunk = pairs[k : k + batch]
        src, src_len, tgt_in, _ = collate(chunk, tr.src_vocab, tr.tgt_vocab)
        max_len = max(len(p.tgt) for p in chunk) + 10
        if beam == 1:
            out = tr.greedy_batch(src, src_len, max_len)
        else:
            out = [tr.beam_search(tr.src_vocab.encode(p.src), beam, max_len).ids for p in chunk]
        hyps += [tr.tgt_vocab.decode(ids) for ids in out]
        if tr.attention is not None:
            _, a = tr(src, src_len, tgt_in)  # forced alignment on the gold target
            alphas += [a[b, : len(p.tgt), : len(p.src)].numpy() for b, p in enumerate(chunk)]
    refs = [list(p.tgt) for p in pairs]
    spans = buckets(tr.task.name)
    by_length = {}
    for k, (lo, hi) in enumerate(spans):
        idx = [i for i, p in enumerate(pairs) if _bucket_of(len(p.src), spans) == k]
        score = metrics.bleu([hyps[i] for i in idx], [refs[i] for i in idx]) if idx else None
        by_length[f"{lo}-{hi}"] = {
            "bleu": None if score is None else round(score, 2),
            "n": len(idx),
        }
    out = {
        "model": tr.name,
        "task": tr.task.name,
        "n_test": len(pairs),
        "exact_match": round(metrics.exact_match(hyps, refs), 4),
        "bleu": round(metrics.bleu(hyps, refs), 2),
        "bleu_by_length": by_length,
        "decoding": "greedy" if beam == 1 else f"beam {beam}",
        "scoring": tr.cfg.scoring,
        "train_steps": tr.meta.get("train", {}).get("steps"),
    }
    if alphas and any(p.sure for p in pairs):
        pred = [metrics.argmax_links(a) for a in alphas]
        out["aer"] = round(
            metrics.aer((a, p.sure, p.possible) for a, p in zip(pred, pairs, strict=True)), 4
        )
        out["aer_argmax_vs_sure"] = round(
            metrics.aer((a, p.sure, p.sure) for a, p in zip(pred, pairs, strict=True)), 4
        )
    return out


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="python -m engine.evaluate nmt",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--task", choices=("dates", "en-fr"), required=True)
    p.add_argument("--model", default=None, help="checkpoint name (default: the shipped one)")
    p.add_argument("--seed", type=int, default=0, help="the data seed the models were trained on")
    p.add_argument("--limit", type=int, default=None, help="a smaller test split of N pairs")
    p.add_argument("--dir", type=Path, default=None, help="checkpoint directory")
    p.add_argument("--beam", type=int, default=1, help="beam width (1 = batched greedy)")
    p.add_argument("--save", action="store_true", help="write nmt-eval-<task>.json for the page")
    a = p.parse_args(argv)
    name = a.model or registry.default(a.task, family="nmt", directory=a.dir).name
    # --limit N measures the first N/buckets test pairs of every length bucket.
    test = load_splits(a.task, a.seed, 0, a.limit or 2000)["test"]
    card = registry.get(name, a.dir)
    tr = card.load()
    result = evaluate(tr, test, a.beam)
    if a.beam > 1:  # the batched greedy numbers too, for comparison
        greedy = evaluate(tr, test, 1)
        result["greedy"] = {k: greedy[k] for k in ("exact_match", "bleu", "bleu_by_length")}
    if a.task == "en-fr":
        others = [
            c for c in registry.by_family("nmt", a.dir) if c.task == a.task and c.name != name
        ]
        result["models"] = {c.name: evaluate(c.load(), test, a.beam) for c in others}
        for n, r in result["models"].items():
            print(f"{n}: bleu {r['bleu']} by length {r['bleu_by_length']}", file=sys.stderr)
    line = json.dumps(result, ensure_ascii=False)
    if a.save:
        checkpoints.save_result(card.result_name, result, a.dir)
    print(line)
    return 0
