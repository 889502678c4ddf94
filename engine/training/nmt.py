"""``python -m engine.train nmt --task dates|en-fr [--scoring …] [--no-attention] [--quick]``

Reproduces the shipped RNNsearch / RNNencdec checkpoints from a seed: the data are
generated (engine/data), the vocabularies built from the training split only, and a
fixed number of Adam steps taken over length-bucketed batches, one thread.
"""

from __future__ import annotations

import argparse
import functools
import math
import random
import sys
import time
from pathlib import Path

import torch
from torch import nn

from engine import checkpoints
from engine.data import dates, enfr
from engine.data.vocab import PAD_ID, Vocab
from engine.models.bahdanau import SCORINGS, NMTConfig, RNNSearch

# Steps sized so each shipped model trains in under 15 minutes on one core of this CPU.
PRESETS = {
    "dates": dict(
        n_train=30000,
        steps=1200,
        batch=64,
        lr=2e-3,
        model=dict(emb=32, enc_hidden=64, dec_hidden=128, attn=64, maxout=64),
    ),
    "en-fr": dict(
        n_train=60000,
        steps=2400,
        batch=64,
        lr=2e-3,
        model=dict(emb=64, enc_hidden=64, dec_hidden=128, attn=64, maxout=64),
    ),
}
QUICK = dict(n_train=300, n_test=50, steps=30, batch=16)


def checkpoint_name(task: str, scoring: str) -> str:
    return "nmt-dates" if task == "dates" else f"nmt-enfr-{scoring}"


@functools.lru_cache(maxsize=4)
def load_splits(task: str, seed: int, n_train: int, n_test: int = 2000):
    """The task's splits; a smaller ``n_test`` gives a prefix of each length bucket of the
    full test split (the generator's stream does not depend on the split sizes)."""
    if task == "dates":
        return dates.splits(seed, n_train=n_train, n_test=n_test)
    return enfr.splits(seed, n_train=n_train, n_test=n_test)


def batches(pairs, src_vocab: Vocab, tgt_vocab: Vocab, batch: int, rng: random.Random):
    """Endless shuffled batches of similar source length (little padding, same order per seed)."""
    order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i].src), rng.random()))
    chunks = [order[k : k + batch] for k in range(0, len(order), batch)]
    while True:
        rng.shuffle(chunks)
        for chunk in chunks:
            yield collate([pairs[i] for i in chunk], src_vocab, tgt_vocab)


def collate(pairs, src_vocab: Vocab, tgt_vocab: Vocab):
    """(src (B, K), src_len (B,), tgt_in (B, T) = <s> y, tgt_out (B, T) = y </s>)."""
    src = [src_vocab.encode(p.src) for p in pairs]
    tgt = [tgt_vocab.encode(p.tgt, add_bos=True, add_eos=True) for p in pairs]
    K, T = max(map(len, src)), max(map(len, tgt)) - 1
    s = torch.full((len(pairs), K), PAD_ID, dtype=torch.long)
    y = torch.full((len(pairs), T + 1), PAD_ID, dtype=torch.long)
    for b, (a, t) in enumerate(zip(src, tgt, strict=True)):
        s[b, : len(a)] = torch.tensor(a)
        y[b, : len(t)] = torch.tensor(t)
    return s, torch.tensor([len(a) for a in src]), y[:, :-1], y[:, 1:]


def command(task: str, scoring: str, seed: int, quick: bool, steps: int | None) -> str:
    """The command line that reproduces a checkpoint (stored in its JSON)."""
    which = "--no-attention" if scoring == "none" else f"--scoring {scoring}"
    extra = (f" --steps {steps}" if steps else "") + (" --quick" if quick else "")
    return f"python -m engine.train nmt --task {task} {which} --seed {seed}{extra}"


def train(
    task: str,
    scoring: str,
    *,
    seed: int = 0,
    quick: bool = False,
    directory: Path | None = None,
    steps: int | None = None,
    log=sys.stderr,
) -> dict:
    """Train one model, save it as a checkpoint, return its training record."""
    from tqdm import tqdm

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    preset = dict(PRESETS[task])
    if quick:
        preset.update(QUICK)
    steps = steps or preset["steps"]
    data = load_splits(task, seed, preset["n_train"], preset.get("n_test", 2000))
    train_pairs = data["train"]
    src_vocab = Vocab.build(p.src for p in train_pairs)
    tgt_vocab = Vocab.build(p.tgt for p in train_pairs)
    cfg = NMTConfig(len(src_vocab), len(tgt_vocab), scoring=scoring, **preset["model"])
    model = RNNSearch(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=preset["lr"])
    # Cosine decay to 10 %: large steps early, fine convergence at the end.
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda k: 0.1 + 0.45 * (1 + math.cos(math.pi * min(k / steps, 1.0)))
    )
    loss_fn = nn.CrossEntropyLoss(ignore_index=PAD_ID)
    stream = batches(train_pairs, src_vocab, tgt_vocab, preset["batch"], random.Random(seed))
    tokens, t0, cpu0 = 0, time.perf_counter(), time.process_time()
    bar = tqdm(range(steps), desc=f"{task} {scoring}", file=log, mininterval=5)
    model.train()
    for _ in bar:
        src, src_len, tgt_in, tgt_out = next(stream)
        logits, _ = model(src, src_len, tgt_in)
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        tokens += int((tgt_out != PAD_ID).sum())
        bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
    wall = time.perf_counter() - t0
    record = {
        "steps": steps,
        "batch": preset["batch"],
        "seed": seed,
        "wall_s": round(wall, 1),
        "cpu_s": round(time.process_time() - cpu0, 1),
        "target_tokens": tokens,
        "tokens_per_s": round(tokens / wall, 1),
        "final_loss": round(loss.item(), 4),
        "n_train": len(train_pairs),
        "quick": quick,
    }
    name = checkpoint_name(task, scoring)
    meta = {
        "family": "nmt",
        "task": task,
        "config": cfg.to_json(),
        "src_vocab": src_vocab.to_json(),
        "tgt_vocab": tgt_vocab.to_json(),
        "train": record,
        "command": command(task, scoring, seed, quick, steps if steps != preset["steps"] else None),
    }
    checkpoints.save(name, model.state_dict(), meta, directory)
    print(f"saved {name}: {record}", file=log)
    return record


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.train nmt", description=__doc__)
    p.add_argument("--task", choices=("dates", "en-fr"), required=True)
    p.add_argument("--scoring", choices=SCORINGS[:-1], default="additive")
    p.add_argument("--no-attention", action="store_true", help="the RNNencdec baseline")
    p.add_argument("--quick", action="store_true", help="a few seconds on a tiny split (tests)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=None, help="override the preset step count")
    p.add_argument("--out-dir", type=Path, default=None, help="default: assets/checkpoints")
    a = p.parse_args(argv)
    scoring = "none" if a.no_attention else a.scoring
    train(a.task, scoring, seed=a.seed, quick=a.quick, directory=a.out_dir, steps=a.steps)
    return 0
