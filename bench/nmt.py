"""Benchmark the Alignment studio's model: translate + capture a 30-word sentence with
beam 5 (median ms, Trace with alignment and internals included) and training tokens/s.

    python bench/nmt.py [--runs 20] [--model nmt-enfr-additive]

The last stdout line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time

import torch
from _save import save
from torch import nn

from engine.data import enfr
from engine.data.vocab import PAD_ID
from engine.models import registry
from engine.models.bahdanau import RNNSearch
from engine.training.nmt import batches


def sentence_of(n_words: int, vocab) -> str:
    """A grammar sentence of exactly n_words tokens, all in the model's vocabulary."""
    for seed in range(100_000):
        p = enfr.sample(seed)
        if len(p.src) == n_words and not vocab.unknown(p.src):
            return enfr.detokenize_en(p.src)
    raise RuntimeError(f"no {n_words}-token sentence found")


def time_translate(card, tr: RNNSearch, text: str, beam: int, runs: int):
    """Median wall ms and median CPU ms of this process (the CPU time is what the call
    costs when the two shared cores are busy with other work)."""
    card.trace(text, model=tr, beam=beam)  # warm-up
    wall, cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        card.trace(text, model=tr, beam=beam)
        wall.append(1000 * (time.perf_counter() - t0))
        cpu.append(1000 * (time.process_time() - c0))
    return statistics.median(wall), statistics.median(cpu)


def training_tokens_per_s(tr: RNNSearch, steps: int) -> float:
    pairs = [enfr.sample(seed) for seed in range(2000)]
    model = RNNSearch(tr.cfg).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    stream = batches(pairs, tr.src_vocab, tr.tgt_vocab, 64, random.Random(0))
    next(stream)
    tokens, t0 = 0, time.perf_counter()
    for _ in range(steps):
        src, src_len, tgt_in, tgt_out = next(stream)
        logits, _ = model(src, src_len, tgt_in)
        loss = nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD_ID
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
        tokens += int((tgt_out != PAD_ID).sum())
    return tokens / (time.perf_counter() - t0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", default="nmt-enfr-additive")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--train-steps", type=int, default=10)
    a = p.parse_args()
    torch.set_num_threads(1)
    card = registry.get(a.model)
    tr = card.load()
    text = sentence_of(30, tr.src_vocab)
    beam5, beam5_cpu = time_translate(card, tr, text, 5, a.runs)
    greedy, greedy_cpu = time_translate(card, tr, text, 1, a.runs)
    result = {
        "model": a.model,
        "sentence_words": 30,
        "threads": 1,
        "runs": a.runs,
        "translate_beam5_median_ms": round(beam5, 2),
        "translate_beam5_median_cpu_ms": round(beam5_cpu, 2),
        "translate_greedy_median_ms": round(greedy, 2),
        "translate_greedy_median_cpu_ms": round(greedy_cpu, 2),
        "beam5_over_greedy": round(beam5 / greedy, 2),
        "training_tokens_per_s": round(training_tokens_per_s(tr, a.train_steps), 1),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "target_ms": 50,
    }
    print(f"sentence: {text}")
    print(json.dumps(save(result)))


if __name__ == "__main__":
    main()
