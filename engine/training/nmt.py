"""``python -m engine.train nmt --task dates|en-fr [--scoring …] [--no-attention] [--quick|--live]``

Reproduces the shipped RNNsearch / RNNencdec checkpoints from a seed: the data are
generated (engine/data), the vocabularies built from the training split only, and a
fixed number of Adam steps taken over length-bucketed batches, one thread.

The same run records the checkpoint's training timeline (:mod:`engine.timeline`): at ≈ 16
log-spaced steps, the probe sentences' alignment α (the card's examples, with their
reference translation fed in, so every snapshot has the same rows and columns), the
probes' greedy translations, and the step's metrics on a fixed held-out slice of the test
split — teacher-forced loss, exact-match accuracy and, for en→fr with attention, Och &
Ney's AER against the grammar's gold links. Probes run under :func:`engine.timeline.quiet`,
so a run that records trains the same weights as one that does not.

``--live`` is "train it now" (the Alignment page's button, ≤ 60 s of one core): a tiny
model on the dates task or on a small slice of the en→fr grammar (a few nouns, adjectives
and verbs, one clause of at most ten words), written to a temporary directory unless
``--out-dir`` says where; the page shows this command, and its last map equals the page's.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import math
import random
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from engine import checkpoints, timeline
from engine import translation_quality as metrics
from engine.data import dates, enfr
from engine.data.vocab import PAD_ID, Vocab
from engine.messages import Message
from engine.models.bahdanau import SCORINGS, NMTConfig, RNNSearch
from engine.run import Run
from engine.trace import AttentionMap, Trace
from engine.training import fit as harness

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
# Train it now: a model small enough to learn its task in well under a minute of one core.
LIVE = {
    "dates": dict(
        n_train=4000,
        n_test=200,
        steps=400,
        batch=32,
        lr=4e-3,
        model=dict(emb=16, enc_hidden=32, dec_hidden=64, attn=32, maxout=32),
    ),
    "en-fr": dict(
        n_train=3000,
        n_test=200,
        steps=400,
        batch=32,
        lr=4e-3,
        model=dict(emb=32, enc_hidden=32, dec_hidden=64, attn=32, maxout=32),
    ),
}
LIVE_DATA_SEED = 0  # a live run's data are fixed: its seed picks the weights and batch order
HELD_OUT = 200  # test pairs the timeline's metrics are measured on (every k-th, all lengths)
# The card's date examples that the generator's formats spell (the probes need a reference).
DATE_PROBES = (
    (dt.date(1979, 5, 3), "dd/mm/yy"),
    (dt.date(1979, 5, 3), "month dth yyyy"),
    (dt.date(1979, 5, 3), "d mois yyyy"),
    (dt.date(2012, 12, 21), "the dth of month, yyyy"),
)
# The en→fr slice a live model learns: the words of the negation lesson sentence and a few more.
SLICE = dict(
    things=("agreement", "bank", "book", "law", "report", "treaty"),
    people=("judge", "minister", "student", "teacher"),
    adjs=("big", "european", "young"),
    verbs=("accept", "approve", "refuse", "sign"),
)
SLICE_MAX_LEN = 10


def checkpoint_name(task: str, scoring: str, live: bool = False) -> str:
    if live:
        return f"nmt-live-{'dates' if task == 'dates' else 'enfr'}"
    return "nmt-dates" if task == "dates" else f"nmt-enfr-{scoring}"


@functools.lru_cache(maxsize=4)
def load_splits(task: str, seed: int, n_train: int, n_test: int = 2000):
    """The task's splits; a smaller ``n_test`` gives a prefix of each length bucket of the
    full test split (the generator's stream does not depend on the split sizes)."""
    if task == "dates":
        return dates.splits(seed, n_train=n_train, n_test=n_test)
    return enfr.splits(seed, n_train=n_train, n_test=n_test)


class _SliceSampler(enfr.Sampler):
    """The grammar restricted to :data:`SLICE`'s words, one clause per sentence."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.things, self.people = list(SLICE["things"]), list(SLICE["people"])
        self.adjs, self.verbs = list(SLICE["adjs"]), list(SLICE["verbs"])

    def sentence(self) -> enfr.Pair:
        return enfr.to_pair(self.clause())


@functools.lru_cache(maxsize=2)
def slice_splits(seed: int, n_train: int, n_test: int) -> dict[str, list[enfr.Pair]]:
    """Unique slice sentences of at most SLICE_MAX_LEN words without names or cities;
    the lesson examples never in train."""
    sampler, proper = _SliceSampler(seed), set(enfr.NAMES) | set(enfr.CITIES)
    seen = {p.src for p in enfr.EXAMPLES.values()}
    out: list[enfr.Pair] = []
    while len(out) < n_train + n_test:
        p = sampler.sentence()
        if len(p.src) <= SLICE_MAX_LEN and p.src not in seen and not proper & set(p.src):
            seen.add(p.src)
            out.append(p)
    return {"test": out[:n_test], "train": out[n_test:]}


def probes(task: str, live: bool = False) -> list[enfr.Pair]:
    """The probe set: the card's lesson examples with their references (and gold links)."""
    if task == "dates":
        return [dates.pair(d, fmt) for d, fmt in DATE_PROBES]
    if live:  # the slice holds the negation sentence's words, not the longer examples'
        return [enfr.EXAMPLES["negation"]]
    return list(enfr.EXAMPLES.values())


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


def command(
    task: str, scoring: str, seed: int, quick: bool, steps: int | None, live: bool = False
) -> str:
    """The command line that reproduces a checkpoint and its timeline (stored in its JSON)."""
    which = "--no-attention" if scoring == "none" else f"--scoring {scoring}"
    if live:
        which = "--live"
    extra = (f" --steps {steps}" if steps else "") + (" --quick" if quick else "")
    return f"python -m engine.train nmt --task {task} {which} --seed {seed}{extra}"


# -- what a snapshot measures -------------------------------------------------------------


@dataclass
class Setup:
    """Everything a run needs besides its weights: data, vocabularies, probes, held-out set."""

    task: str
    name: str
    preset: dict
    train_pairs: list
    held_out: list
    probes: list
    src_vocab: Vocab
    tgt_vocab: Vocab


def setup(task: str, seed: int, *, quick: bool = False, live: bool = False) -> Setup:
    preset = dict(LIVE[task] if live else PRESETS[task])
    if quick:
        preset.update(QUICK)
    n_test = preset.get("n_test", 2000)
    if live and task == "en-fr":
        data = slice_splits(LIVE_DATA_SEED, preset["n_train"], n_test)
    else:
        data = load_splits(task, LIVE_DATA_SEED if live else seed, preset["n_train"], n_test)
    test = data["test"]
    held_out = test[:: max(1, len(test) // HELD_OUT)][:HELD_OUT]  # every length bucket
    train_pairs = data["train"]
    return Setup(
        task=task,
        name="",
        preset=preset,
        train_pairs=train_pairs,
        held_out=held_out,
        probes=probes(task, live),
        src_vocab=Vocab.build(p.src for p in train_pairs),
        tgt_vocab=Vocab.build(p.tgt for p in train_pairs),
    )


def measure(model: RNNSearch, s: Setup, batch: int = 64) -> dict[str, float]:
    """Held-out teacher-forced loss, greedy exact match and (with gold links and α) AER —
    the evaluation's measures (engine.translation_quality), on the fixed held-out slice."""
    loss_sum, n_tokens, hyps, links = 0.0, 0, [], []
    for k in range(0, len(s.held_out), batch):
        chunk = s.held_out[k : k + batch]
        src, src_len, tgt_in, tgt_out = collate(chunk, s.src_vocab, s.tgt_vocab)
        logits, alpha = model(src, src_len, tgt_in)
        loss_sum += float(
            nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]),
                tgt_out.reshape(-1),
                ignore_index=PAD_ID,
                reduction="sum",
            )
        )
        n_tokens += int((tgt_out != PAD_ID).sum())
        out = model.greedy_batch(src, src_len, max(len(p.tgt) for p in chunk) + 10)
        hyps += [s.tgt_vocab.decode(ids) for ids in out]
        if alpha is not None:
            for b, p in enumerate(chunk):
                a = alpha[b, : len(p.tgt), : len(p.src)].numpy()
                links.append((metrics.argmax_links(a), p.sure, p.possible))
    out = {
        "loss": loss_sum / max(1, n_tokens),
        "accuracy": metrics.exact_match(hyps, [list(p.tgt) for p in s.held_out]),
    }
    if links and any(p.sure for p in s.held_out):
        out["aer"] = metrics.aer(links)
    return out


def probe_trace(model: RNNSearch, s: Setup, pair, step: int) -> Trace:
    """One probe at one step: α with the reference fed in, and the greedy translation."""
    detok_src = "".join if s.task == "dates" else enfr.detokenize_en
    detok_tgt = "".join if s.task == "dates" else enfr.detokenize_fr
    src, src_len, tgt_in, _ = collate([pair], s.src_vocab, s.tgt_vocab)
    _, alpha = model(src, src_len, tgt_in)
    hyp = s.tgt_vocab.decode(model.greedy_batch(src, src_len, len(pair.tgt) + 10)[0])
    outputs = {
        "translation": detok_tgt(hyp),
        "tokens": hyp,
        "reference": list(pair.tgt),
        "correct": hyp == list(pair.tgt),
    }
    maps = {}
    if alpha is not None:
        a = alpha[0, : len(pair.tgt), : len(pair.src)].numpy()
        maps["alignment"] = AttentionMap(
            weights=a[None, None],
            query_labels=pair.tgt,
            key_labels=pair.src,
            kind="alignment",
            layer_labels=("decoder steps",),
            head_labels=(model.cfg.scoring,),
            note=Message("note.training_alignment", step=step),
        )
        if pair.sure:
            links = [(metrics.argmax_links(a), pair.sure, pair.possible)]
            outputs["aer"] = round(metrics.aer(links), 4)
    return Trace(
        model=s.name,
        task=s.task,
        inputs={"text": detok_src(pair.src), "tokens": list(pair.src), "step": step},
        outputs=outputs,
        maps=maps,
    )


def snapshot(model: RNNSearch, s: Setup, step: int) -> tuple[dict, list[Trace]]:
    """(metrics, probe Traces) at ``step``, in eval mode, without gradients and with the
    random state restored (:func:`engine.timeline.quiet`)."""

    def run():
        model.eval()
        try:
            return measure(model, s), [probe_trace(model, s, p, step) for p in s.probes]
        finally:
            model.train()

    return timeline.quiet(run)


# -- the training loop --------------------------------------------------------------------


@dataclass
class Trained:
    model: RNNSearch
    cfg: NMTConfig
    record: dict
    timeline: timeline.Timeline | None


def fit(
    s: Setup,
    scoring: str,
    *,
    seed: int,
    steps: int,
    record: bool = True,
    run: Run | None = None,
    log=sys.stderr,
) -> Trained:
    """Train one model from ``seed`` for ``steps`` Adam steps through the one harness
    (:func:`engine.training.fit.fit`); writes nothing.

    With ``record`` the timeline's snapshots are taken at log-spaced steps (and handed to
    ``run.on_snapshot`` as they come, for a live view); ``run.on_step`` sees each step's
    batch loss; ``run.should_stop()`` is asked before every step, and a stopped run ends on
    a snapshot of the step it stopped at. Bit for bit reproducible at one thread (the
    callers set ``torch.set_num_threads(1)``); ``log=None`` is silent."""
    from tqdm import tqdm

    torch.manual_seed(seed)
    cfg = NMTConfig(len(s.src_vocab), len(s.tgt_vocab), scoring=scoring, **s.preset["model"])
    model = RNNSearch(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=s.preset["lr"])
    # Cosine decay to 10 %: large steps early, fine convergence at the end.
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda k: 0.1 + 0.45 * (1 + math.cos(math.pi * min(k / steps, 1.0)))
    )
    loss_fn = nn.CrossEntropyLoss(ignore_index=PAD_ID)
    stream = batches(
        s.train_pairs, s.src_vocab, s.tgt_vocab, s.preset["batch"], random.Random(seed)
    )
    recorder = timeline.Recorder(s.name, steps) if record else None
    tokens = [0]
    bar = tqdm(
        total=steps, desc=f"{s.task} {scoring}", file=log, mininterval=5, disable=log is None
    )
    model.train()

    def step(_k: int) -> float:
        src, src_len, tgt_in, tgt_out = next(stream)
        logits, _ = model(src, src_len, tgt_in)
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        tokens[0] += int((tgt_out != PAD_ID).sum())
        bar.update()
        bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
        return loss.item()

    done = harness.fit(
        step,
        steps,
        recorder,
        run,
        snapshot=lambda k: snapshot(model, s, k),
        train_loss=True,  # the training loss: the mean batch loss since the previous snapshot
    )
    bar.close()
    rec = {
        "steps": done.steps,
        "batch": s.preset["batch"],
        "seed": seed,
        "wall_s": round(done.wall_s, 1),
        "cpu_s": round(done.thread_cpu_s, 1),  # this thread alone
        "target_tokens": tokens[0],
        "tokens_per_s": round(tokens[0] / done.wall_s, 1),
        "final_loss": round(done.loss, 4),
        "n_train": len(s.train_pairs),
    }
    if recorder is not None:
        rec["timeline_s"] = round(done.record_s, 1)
    tl = recorder.timeline(held_out=len(s.held_out)) if recorder is not None else None
    return Trained(model, cfg, rec, tl)


def train(
    task: str,
    scoring: str,
    *,
    seed: int = 0,
    quick: bool = False,
    live: bool = False,
    directory: Path | None = None,
    steps: int | None = None,
    record: bool = True,
    log=sys.stderr,
) -> dict:
    """Train one model, save it as a checkpoint with its timeline, return its record."""
    torch.set_num_threads(1)
    s = setup(task, seed, quick=quick, live=live)
    s.name = checkpoint_name(task, scoring, live)
    preset_steps = s.preset["steps"]
    steps = steps or preset_steps
    run = fit(s, scoring, seed=seed, steps=steps, record=record, log=log)
    run.record["quick"] = quick
    cmd = command(task, scoring, seed, quick, steps if steps != preset_steps else None, live)
    meta = {
        "family": "nmt",
        "task": task,
        "config": run.cfg.to_json(),
        "src_vocab": s.src_vocab.to_json(),
        "tgt_vocab": s.tgt_vocab.to_json(),
        "train": run.record,
        "command": cmd,
    }
    checkpoints.save(s.name, run.model.state_dict(), meta, directory)
    if run.timeline is not None:
        run.timeline.meta.update(command=cmd, task=task, scoring=scoring, seed=seed)
        timeline.save(run.timeline, s.name, Path(directory or checkpoints.CHECKPOINT_DIR))
    print(f"saved {s.name}: {run.record}", file=log)
    return run.record


def live(task: str, seed: int, *, steps: int | None = None, run: Run | None = None) -> Trained:
    """Train it now: the ``--live`` model of ``task`` from ``seed``, writing nothing and
    printing nothing; the same run as its timeline's ``meta["command"]``, snapshot for
    snapshot (at one thread). The meta also holds ``wall_s`` and ``cpu_s``."""
    s = setup(task, seed, live=True)
    s.name = checkpoint_name(task, "additive", live=True)
    steps = steps or s.preset["steps"]
    trained = fit(s, "additive", seed=seed, steps=steps, run=run, log=None)
    trained.timeline.meta.update(
        task=task,
        scoring="additive",
        seed=seed,
        command=command(task, "additive", seed, False, steps, live=True),  # steps said: a film
        wall_s=trained.record["wall_s"],
        cpu_s=trained.record["cpu_s"],
    )
    return trained


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.train nmt", description=__doc__)
    p.add_argument("--task", choices=("dates", "en-fr"), required=True)
    p.add_argument("--scoring", choices=SCORINGS[:-1], default="additive")
    p.add_argument("--no-attention", action="store_true", help="the RNNencdec baseline")
    p.add_argument("--quick", action="store_true", help="a few seconds on a tiny split (tests)")
    p.add_argument("--live", action="store_true", help="the Alignment page's train-it-now run")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=None, help="override the preset step count")
    p.add_argument("--out-dir", type=Path, default=None, help="default: assets/checkpoints")
    p.add_argument("--no-timeline", action="store_true", help="train without recording")
    a = p.parse_args(argv)
    scoring = "none" if a.no_attention else a.scoring
    out_dir = a.out_dir
    if a.live and out_dir is None:  # a live run is a lesson, not a shipped checkpoint
        out_dir = Path(tempfile.mkdtemp(prefix="nmt-live-"))
        print(f"writing to {out_dir}", file=sys.stderr)
    train(
        a.task,
        scoring,
        seed=a.seed,
        quick=a.quick,
        live=a.live,
        directory=out_dir,
        steps=a.steps,
        record=not a.no_timeline,
    )
    return 0
