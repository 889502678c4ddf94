"""Benchmark the Alignment studio's model: translate + capture a 30-word sentence with
beam 5 (median ms, Trace with alignment and internals included) and training tokens/s.

    python bench/nmt.py [--runs 20] [--model nmt-enfr-additive]

The last stdout line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

import torch
from torch import nn

from engine.data import enfr
from engine.data.vocab import PAD_ID
from engine.models.bahdanau import RNNSearch, Translator
from engine.training.nmt import batches


def sentence_of(n_words: int, vocab) -> str:
    """A grammar sentence of exactly n_words tokens, all in the model's vocabulary."""
    for seed in range(100_000):
        p = enfr.sample(seed)
        if len(p.src) == n_words and not vocab.unknown(p.src):
            return enfr.detokenize_en(p.src)
    raise RuntimeError(f"no {n_words}-token sentence found")


def time_translate(tr: Translator, text: str, beam: int, runs: int) -> list[float]:
    tr.translate(text, beam=beam)  # warm-up
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        tr.translate(text, beam=beam)
        out.append(1000 * (time.perf_counter() - t0))
    return out


def training_tokens_per_s(tr: Translator, steps: int) -> float:
    pairs = [enfr.sample(seed) for seed in range(2000)]
    model = RNNSearch(tr.model.cfg).train()
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
    tr = Translator.load(a.model)
    text = sentence_of(30, tr.src_vocab)
    beam5 = time_translate(tr, text, 5, a.runs)
    greedy = time_translate(tr, text, 1, a.runs)
    result = {
        "model": a.model,
        "sentence_words": 30,
        "threads": 1,
        "runs": a.runs,
        "translate_beam5_median_ms": round(statistics.median(beam5), 2),
        "translate_greedy_median_ms": round(statistics.median(greedy), 2),
        "beam5_over_greedy": round(statistics.median(beam5) / statistics.median(greedy), 2),
        "training_tokens_per_s": round(training_tokens_per_s(tr, a.train_steps), 1),
        "target_ms": 50,
    }
    print(f"sentence: {text}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
