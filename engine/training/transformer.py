"""``python -m engine.train transformer --task dates|en-fr [--pe …] [--quick]``.

Training follows the paper where it matters at this size (§5.3–5.4): Adam with
β = (0.9, 0.98), ε = 1e-9, the warm-up schedule lrate = d_model^-0.5 · min(step^-0.5,
step · warmup^-1.5), residual and attention dropout, label smoothing ε_ls = 0.1.
Single-threaded and seeded, so a run reproduces its checkpoint (CPU shared by others).

The run also saves its training timeline (:mod:`engine.timeline`) beside the checkpoint:
at 16 log-spaced steps, the Traces of the probe set (a few of the card's example sentences,
every layer's self- and cross-attention per head, as the page traces them: greedy output)
and the metrics on a fixed held-out slice of the validation split — loss, token accuracy,
exact match (dates) or BLEU and the AER of each layer's head-averaged cross-attention
against the gold links (en-fr). Probes run under :func:`engine.timeline.quiet` in eval mode,
so a run that records trains the same weights as one that does not.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

from engine import checkpoints, timeline
from engine._cli import recorded_command
from engine.data import enfr
from engine.data.vocab import Vocab
from engine.models.cards.nmt import DATE_EXAMPLES
from engine.models.transformer import (
    PAD,
    PE_KINDS,
    TASKS,
    Transformer,
    TransformerConfig,
    build,
    checkpoint_name,
    task_module,
)
from engine.models.transformer import trace as trace_translation
from engine.run import Run
from engine.trace import Trace
from engine.training import fit as harness
from engine.translation_quality import aer, argmax_links, bleu, exact_match

# Steps, not minutes, so a run reproduces its checkpoint on any machine. en-fr: 4,800
# steps of 32 pairs ≈ 2.5 passes over the 60k training pairs, ≈ 9 CPU-minutes on one
# thread (1,200 steps, under one pass, left BLEU at 69 and valid token accuracy at 0.92).
# dates: 3,200 steps of 64 ≈ 4.5 CPU-minutes (800 steps left exact match at 0.84).
DEFAULTS = {"dates": dict(steps=3200, batch=64), "en-fr": dict(steps=4800, batch=32)}
QUICK = dict(steps=30, batch=16, n_valid=64)
LR_FACTOR = 0.5  # peak lrate ≈ 2.2e-3 at d_model = 128, warm-up 400
# The timeline's held-out slice: the first pairs of the validation split (never the test
# split, whose numbers the evaluation reports). 200 pairs: every snapshot ≈ 1–2 s.
HELD_OUT = 200
N_DATE_PROBES = 3  # three date formats: spelt out with a weekday, numeric, ordinal
EN_FR_PROBES = ("Figure 3(a)", "negation")


def batch_tensors(pairs, src_vocab, tgt_vocab):
    """Pad a batch: src (B, S); tgt_in (B, T) = <s> y; tgt_out (B, T) = y </s>."""
    src = [src_vocab.encode(p.src) for p in pairs]
    tgt = [tgt_vocab.encode(p.tgt, add_bos=True, add_eos=True) for p in pairs]

    def pad(rows):
        n = max(len(r) for r in rows)
        return torch.tensor([r + [PAD] * (n - len(r)) for r in rows])

    t = pad(tgt)
    return pad(src), t[:, :-1], t[:, 1:]


def length_batches(pairs, size: int, rng: random.Random):
    """Endless batches of similar-length pairs (little padding), in a seeded random order."""
    order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i].src), len(pairs[i].tgt)))
    chunks = [order[i : i + size] for i in range(0, len(order), size)]
    while True:
        rng.shuffle(chunks)
        for c in chunks:
            yield [pairs[i] for i in c]


def noam(step: int, d_model: int, warmup: int) -> float:
    step = max(step, 1)
    return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


@torch.no_grad()
def token_accuracy(model: Transformer, pairs, src_vocab, tgt_vocab, batch: int = 256) -> float:
    """Teacher-forced next-token accuracy on non-pad positions (a cheap progress signal)."""
    model.eval()
    right = total = 0
    for i in range(0, len(pairs), batch):
        src, tgt_in, tgt_out = batch_tensors(pairs[i : i + batch], src_vocab, tgt_vocab)
        pred = model(src, tgt_in)[0].argmax(-1)
        keep = tgt_out != PAD
        right += int((pred == tgt_out)[keep].sum())
        total += int(keep.sum())
    model.train()
    return right / max(total, 1)


def probe_texts(task: str) -> list[str]:
    """The probe set: the card's examples (dates: the first three formats; en-fr: the
    lesson's Figure 3(a) sentence and the negation — the long sentence's maps alone would
    be three times the timeline's size)."""
    if task == "dates":
        return list(DATE_EXAMPLES[:N_DATE_PROBES])
    return [enfr.detokenize_en(enfr.EXAMPLES[k].src) for k in EN_FR_PROBES]


@torch.no_grad()
def held_out_metrics(tr: Transformer, pairs) -> dict[str, float]:
    """Teacher-forced loss (cross-entropy in nats per token, no label smoothing) and token
    accuracy, greedy exact match (dates) or BLEU (en-fr), and for en-fr the AER of each
    layer's head-averaged cross-attention: argmax link per target word, teacher-forced on
    the reference, against the gold sure/possible links (as ``engine.evaluate`` scores a head)."""
    src, tgt_in, tgt_out = batch_tensors(pairs, tr.src_vocab, tr.tgt_vocab)
    logits, inter = tr(src, tgt_in)
    keep = tgt_out != PAD
    out = {
        "loss": F.cross_entropy(logits[keep], tgt_out[keep]).item(),
        "token_accuracy": (logits.argmax(-1) == tgt_out)[keep].float().mean().item(),
    }
    gen = tr.greedy(src, tr.max_new)
    hyps = [tr.tgt_vocab.decode(row[1:].tolist()) for row in gen]
    refs = [list(p.tgt) for p in pairs]
    if tr.task == "dates":
        out["exact_match"] = exact_match(hyps, refs)
        return out
    out["bleu"] = bleu(hyps, refs)
    cross = inter.cross.mean(2).numpy()  # (B, L, T, S): the heads of each layer averaged
    for layer in range(cross.shape[1]):
        items = [
            (argmax_links(cross[b, layer, : len(p.tgt), : len(p.src)]), p.sure, p.possible)
            for b, p in enumerate(pairs)
        ]
        out[f"aer.L{layer}"] = aer(items)
    return out


@dataclass
class Probe:
    """What one timeline snapshot runs on the model being trained."""

    texts: list[str]
    held_out: list

    def __call__(self, model: Transformer) -> tuple[dict[str, float], list[Trace]]:
        """(held-out metrics, one Trace per probe text), in eval mode (no dropout) and
        back to train mode after; call it through :func:`engine.timeline.quiet`."""
        model.eval()
        try:
            # Queries, keys and timings are not kept: the timeline is maps and outputs.
            traces = [
                replace(trace_translation(model, text), vectors={}, timings={})
                for text in self.texts
            ]
            return held_out_metrics(model, self.held_out), traces
        finally:
            model.train()


def train(
    task: str,
    pe: str,
    *,
    steps: int,
    batch: int,
    seed: int = 0,
    warmup: int = 400,
    minutes: float | None = None,
    n_valid: int | None = None,
    record: bool = True,
    log=print,
):
    """Train one model; returns (model, meta, timeline) without writing anything (the
    timeline is None with ``record=False``; the weights are the same either way)."""
    torch.manual_seed(seed)
    data = task_module(task).splits(seed=seed)
    train_set, valid = data["train"], data["valid"][:n_valid]
    src_vocab = Vocab.build(p.src for p in train_set)
    tgt_vocab = Vocab.build(p.tgt for p in train_set)
    longest = max(max(len(p.src), len(p.tgt) + 1) for p in train_set + valid)
    cfg = TransformerConfig(
        len(src_vocab),
        len(tgt_vocab),
        d_model=128,
        n_heads=4,
        n_layers=2,
        d_ff=256,
        dropout=0.1,
        max_len=longest + 8,
        pe=pe,
    )
    max_tgt = max(len(p.tgt) for p in train_set) + 4
    name = checkpoint_name(task, pe)
    vocabs = dict(src_vocab=src_vocab, tgt_vocab=tgt_vocab)
    model = build(cfg, seed, **vocabs, meta={"task": task, "max_tgt": max_tgt}, name=name)
    opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: LR_FACTOR * noam(s + 1, cfg.d_model, warmup)
    )
    loss_fn = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.1)
    batches = length_batches(train_set, batch, random.Random(seed))
    probe = Probe(probe_texts(task), valid[:HELD_OUT])
    rec = timeline.Recorder(name, steps) if record else None
    t0 = time.perf_counter()

    def step(_k: int) -> float:
        src, tgt_in, tgt_out = batch_tensors(next(batches), src_vocab, tgt_vocab)
        logits, _ = model(src, tgt_in)
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        return loss.item()

    def out_of_time() -> bool:
        if minutes is None or time.perf_counter() - t0 <= 60 * minutes:
            return False
        log(f"stopping: the {minutes:g}-minute budget is spent")
        return True

    def logged(done: int, loss: float) -> None:
        if done % 250 == 0 or done == steps:
            log(f"step {done:5d}  loss {loss:.3f}  {time.perf_counter() - t0:6.0f} s")

    def shown(k: int, metrics: dict, _traces: list) -> None:
        values = "  ".join(f"{m} {v:.3f}" for m, v in sorted(metrics.items()) if v is not None)
        log(f"snapshot {len(rec.steps):2d} at step {k:5d}: {values}")

    model.train()
    done = harness.fit(
        step,
        steps,
        rec,
        Run(out_of_time, logged, shown),
        snapshot=lambda k: timeline.quiet(lambda: probe(model)),
        train_loss=True,  # the label-smoothed loss, as optimised, since the last snapshot
    )
    acc = token_accuracy(model, valid, src_vocab, tgt_vocab)
    log(f"valid token accuracy {acc:.4f}")
    meta = {
        "family": "transformer",
        "task": task,
        "config": cfg.to_dict(),
        "seed": seed,
        "steps": done.steps,
        "batch": batch,
        "warmup": warmup,
        "lr_factor": LR_FACTOR,
        "dtype": "float16",
        "train_seconds": round(done.wall_s, 1),
        "train_cpu_seconds": round(done.cpu_s, 1),
        "valid_token_accuracy": round(acc, 4),
        "max_tgt": max_tgt,
        "src_vocab": src_vocab.to_json(),
        "tgt_vocab": tgt_vocab.to_json(),
    }
    if rec is None:
        return model, meta, None
    tl = rec.timeline(
        family="transformer",
        task=task,
        pe=pe,
        seed=seed,
        probe_texts=probe.texts,
        held_out=len(probe.held_out),
        train_seconds=meta["train_seconds"],
    )
    return model, meta, tl


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine.train transformer")
    ap.add_argument("--task", choices=sorted(TASKS), required=True)
    ap.add_argument("--pe", choices=PE_KINDS, default="sinusoidal")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="a few seconds; writes to --out-dir or a temporary directory",
    )
    ap.add_argument("--steps", type=int, help="optimizer steps (default per task)")
    ap.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="stop early after this wall time (default: no limit; the checkpoint records "
        "the steps it made, so a stopped run does not reproduce the shipped one)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out-dir", help="checkpoint directory (default assets/checkpoints)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    opts = dict(QUICK if args.quick else DEFAULTS[args.task])
    if args.steps:
        opts["steps"] = args.steps
    model, meta, tl = train(args.task, args.pe, seed=args.seed, minutes=args.minutes, **opts)
    meta["command"] = recorded_command("engine.train transformer", argv, "--out-dir")
    out_dir = args.out_dir or (
        tempfile.mkdtemp(prefix="transformer-quick-") if args.quick else None
    )
    name = checkpoint_name(args.task, args.pe)
    # Stored as float16 (half the bytes; the model computes in float32 after loading).
    half = {k: v.half() for k, v in model.state_dict().items()}
    w, _ = checkpoints.save(name, half, meta, out_dir)
    print(f"saved {w} ({w.stat().st_size / 1e6:.2f} MB) after {meta['train_seconds']} s")
    tl.meta["command"] = meta["command"]
    timeline.save(tl, name, w.parent)
    tw, tj = timeline.paths(name, w.parent)
    size = (tw.stat().st_size + tj.stat().st_size) / 1e3
    print(f"saved its timeline {tw.name} + .json ({size:.0f} kB, {len(tl.steps)} steps)")
    return 0
