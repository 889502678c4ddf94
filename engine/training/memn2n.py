"""``python -m engine.train memn2n --task N|joint|all [--restarts R] [--ray ADDRESS] [--quick]``.

The recipe of Sukhbaatar et al. 2015 (§4.2) and of the authors' released MemN2N code:
10 % of the training questions held out for validation; SGD with batch 32 (loss summed
over the batch), gradient norm clipped at 40; *linear start* (softmax removed from the
memory layers, learning rate 0.005) for ``--ls-epochs`` epochs, then softmax back in at
0.01, halved every ``epochs/4`` epochs; *random noise*: up to 10 % empty memories
slipped into each story. The softmax epoch kept is the best on validation.

Why 60 linear-start epochs and not the released code's 20 (or "until the validation
loss stops falling"): on basic induction (task 16) the linear model sits on a plateau
(validation accuracy ≈ 0.4, the majority-colour guess) for 20–30 epochs before the
three-hop chain name → animal → example → colour forms; ending linear start at 20
epochs, or at the first epoch without progress, kept every run of ours on the plateau
(test 0.36–0.40), while 60 epochs solve it (test 0.999–1.000, supporting fact hit
on every hop).

*Short stories.* Every epoch a quarter of the training questions is told over a story of
2–4 sentences (its supporting facts and a few other facts, :func:`engine.data.babi.short_story`),
redrawn each epoch; the validation set holds each held-out question twice, as told and
over a short story. A model that only ever read stories of 5–50 sentences answered
"Daniel went back to the hallway. Sandra moved to the garden. Is Daniel in the garden?"
with "yes".

*Someone else's place.* Every short story's "no" question, and half of the other "no"
questions (``--elsewhere-rate``), are asked again about a place where another person in
the story is (:func:`engine.data.babi.elsewhere`); the validation set holds its short
stories' "no" questions asked so too. With short stories alone the task-6 model still
answered that story "yes": its first hop put 0.99 on "Sandra moved to the garden",
matching the asked place rather than the person, because the generators' random "no"
places seldom name another person's sentence. (Asking every "no" so cost task 6 3–8
points of test accuracy on two seeds: the test set's "no" places are random.)

*Best of R restarts* (the paper: best of 10): each target trains ``--restarts`` times
(seeds ``seed … seed+R−1``, one job each on the job grid: a local process pool of
``--jobs`` processes with one torch thread, or Ray with ``--ray local|ADDRESS``); the
restart with the lowest validation error is kept (the lower validation loss breaks a
tie), and its JSON lists every restart's validation error. The held-out 10 % is the same
for every restart, so their errors compare.

*Timeline.* Each restart records, at 16 log-spaced SGD steps (:class:`engine.timeline.Recorder`),
the kept model's probe stories (memory weights per hop), the training loss and the
validation loss and accuracy, and marks where linear start ends; the kept restart's
timeline is saved beside its checkpoint.

``--task N`` trains task N alone (d = 20, 60 linear-start + 100 epochs). ``--task joint``
trains one model on every task at once (d = 50, 60 + 60 epochs), as the paper's joint
runs. ``--task all`` does every task and then the joint model: the shipped set.
Single-threaded and seeded, so a run reproduces its checkpoint and timeline.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from engine import checkpoints, timeline
from engine import jobs as grid_jobs
from engine._cli import recorded_command
from engine.data.babi import TASK_IDS, Sample, dataset, elsewhere, short_story, words
from engine.data.babi_encode import Encoded, encode, noisy_times, times_and_mask
from engine.data.vocab import Vocab
from engine.models.memn2n import TYINGS, MemN2N, MemN2NConfig, answer, checkpoint_name
from engine.training import fit as harness

QUICK = dict(epochs=2, per_task=60, ls_epochs=1, restarts=2)
LS_EPOCHS = 60  # linear-start epochs (see the module docstring for why not 20)
RESTARTS = 10  # the paper's best of 10
NOISE_RATE = 0.1
SHORT_RATE = 0.25  # share of the training questions told over a 2–4-sentence story
ELSEWHERE_RATE = 0.5  # share of the "no" questions asked about someone else's place
CLIP = 40.0
BATCH = 32
SPLIT_SEED = 0  # one held-out 10 % for every restart
LINEAR_START_END = "linear_start_end"  # the timeline's marks
KEPT = "kept"
# Hand-written probe stories beside generated ones: the short story a class types.
DANIEL = Sample(
    ("Daniel went back to the hallway.", "Sandra moved to the garden."),
    "Is Daniel in the garden?",
    "no",
    (0,),
    6,
)
JOINT_PROBE_TASKS = (1, 2, 16)


def corpus(tasks, size: str, per_task: int | None = None):
    train = [s for t in tasks for s in dataset(t, "train", size)[:per_task]]
    vocab = Vocab.build(words(x) for s in train for x in (*s.story, s.question, s.answer))
    answers = tuple(sorted({s.answer for s in train}))
    return train, vocab, answers


def split(samples, seed: int = SPLIT_SEED):
    """The paper's 90/10 train/validation split, shuffled with ``seed``."""
    order = list(range(len(samples)))
    random.Random(seed).shuffle(order)
    cut = max(1, len(order) // 10)
    return [samples[i] for i in order[cut:]], [samples[i] for i in order[:cut]]


def with_short(
    samples: list[Sample], rate: float, rng: random.Random, elsewhere_rate: float = 0.0
) -> list[Sample]:
    """``samples`` with a share ``rate`` of them told over a short story instead (the ones
    whose support fits in 4 sentences), and a share ``elsewhere_rate`` of the "no"
    questions asked about a place someone else in the story is at
    (:func:`engine.data.babi.elsewhere`), in the same order."""
    out = []
    for s in samples:
        short = short_story(s, rng) if rng.random() < rate else None
        # A short story's "no" is always asked so: that is the story a class types.
        if (short or s).answer == "no" and (short or rng.random() < elsewhere_rate):
            short = elsewhere(short or s, rng) or short
        out.append(short or s)
    return out


def validation(val: list[Sample], seed: int = SPLIT_SEED) -> list[Sample]:
    """The held-out questions as told, then each over a short story (a fixed draw), then
    the short stories' "no" questions asked about someone else's place."""
    rng = random.Random(seed)
    short = [s for s in (short_story(x, rng) for x in val) if s is not None]
    return val + short + [s for s in (elsewhere(x, rng) for x in short) if s is not None]


def probes(tasks) -> list[Sample]:
    """The fixed probe stories a timeline shows: a test story per task (three tasks for
    the joint model) with the fewest sentences among its first 20, and the hand-written
    short story where the model knows task 6."""
    shown = tasks if len(tasks) == 1 else [t for t in JOINT_PROBE_TASKS if t in tasks]
    out = [min(dataset(t, "test")[:20], key=lambda s: (len(s.story), s.question)) for t in shown]
    if 6 in tasks:
        out.append(DANIEL)
    if len(tasks) == 1 and 6 not in tasks:  # a second story of the task, a longer one
        out.append(dataset(tasks[0], "test")[9])
    return out


def batches(n_facts: np.ndarray, rng: np.random.Generator, pool: int = 50):
    """Shuffled batches of similar story length: short stories are not padded to 50."""
    order = rng.permutation(len(n_facts))
    out = []
    for start in range(0, len(order), BATCH * pool):
        chunk = order[start : start + BATCH * pool]
        chunk = chunk[np.argsort(n_facts[chunk], kind="stable")]
        out += [chunk[i : i + BATCH] for i in range(0, len(chunk), BATCH)]
    return [out[i] for i in rng.permutation(len(out))]


def tensors(enc: Encoded, idx: np.ndarray):
    n_facts = torch.from_numpy(enc.n_facts[idx])
    M = max(1, int(n_facts.max()))
    story = torch.from_numpy(enc.story[idx, :M])
    return story, n_facts, torch.from_numpy(enc.query[idx]), torch.from_numpy(enc.answer[idx])


def evaluate_loss(model: MemN2N, enc: Encoded, *, linear: bool) -> tuple[float, float]:
    """Mean cross-entropy and accuracy on an encoded set (no noise)."""
    model.eval()
    loss, correct = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(enc), 256):
            idx = np.arange(start, min(start + 256, len(enc)))
            story, n_facts, query, ans = tensors(enc, idx)
            times, mask = times_and_mask(n_facts, story.shape[1])
            logits, _, _ = model(story, times, mask, query, linear=linear)
            loss += float(nn.functional.cross_entropy(logits, ans, reduction="sum"))
            correct += int((logits.argmax(-1) == ans).sum())
    model.train()
    return loss / len(enc), correct / len(enc)


@dataclass
class Snapshots:
    """What a snapshot measures at a due step: the probe stories' Traces (answered with
    softmax, as the app answers) and the validation metrics."""

    model: MemN2N
    samples: list[Sample]
    enc_val: Encoded

    def take(self, *, linear: bool) -> tuple[dict, list]:
        def run():
            val_loss, val_acc = evaluate_loss(self.model, self.enc_val, linear=linear)
            self.model.eval()
            # A timeline keeps maps, not vectors: the m_i of every step would outweigh them.
            traces = [replace(answer(self.model, s), vectors={}) for s in self.samples]
            self.model.train()
            return val_loss, val_acc, traces

        val_loss, val_acc, traces = timeline.quiet(run)
        return {"val_loss": val_loss, "val_accuracy": val_acc}, traces


def train(
    tasks,
    *,
    hops: int,
    d: int,
    epochs: int,
    size: str = "1k",
    seed: int = 0,
    tying: str = "adjacent",
    per_task: int | None = None,
    progress: bool = True,
    ls_epochs: int = LS_EPOCHS,
    short_rate: float = SHORT_RATE,
    elsewhere_rate: float = ELSEWHERE_RATE,
    record: str | None = None,
):
    """Linear start for ``ls_epochs`` epochs, then ``epochs`` epochs with softmax.

    Returns (model, vocab, answers, info); the model is the softmax epoch best on
    validation (accuracy, ties broken by the lower loss). With ``record`` (the checkpoint's
    name), ``info["timeline"]`` is the run's :class:`timeline.Timeline`; recording draws
    no random numbers and computes no gradients, so the weights are the same without it.
    """
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    samples, vocab, answers = corpus(tasks, size, per_task)
    train_set, val = split(samples)
    cfg = MemN2NConfig(
        vocab_size=len(vocab),
        answers=tuple(vocab.stoi[a] for a in answers),
        d=d,
        hops=hops,
        tying=tying,
    )
    model = MemN2N(cfg, vocab, answers, {"tasks": list(tasks)}, record or "")
    enc_val = encode(validation(val), vocab, answers, cfg.memory)
    rng, story_rng = np.random.default_rng(seed), random.Random(seed)
    best = ((-1.0, -math.inf), None, 0)
    anneal = max(1, epochs // 4)
    total = ls_epochs + epochs
    per_epoch = len(batches(np.zeros(len(train_set), dtype=np.int64), np.random.default_rng(0)))
    now = {"linear": ls_epochs > 0}  # the epoch of the step last taken: what a snapshot reads
    bar = tqdm(range(total), desc="memn2n", disable=not progress, file=sys.stderr)

    def epochs_of_batches():
        """Each epoch's batches, one by one; the epoch's end (validation, the best model
        kept) runs when the next batch is asked for, after that step's snapshot."""
        nonlocal best
        memo: dict = {}
        for epoch in bar:
            linear = now["linear"] = epoch < ls_epochs
            # Linear start: a constant 0.005. Then 0.01, halved every epochs/4 epochs.
            lr = 0.005 if linear else 0.01 * 0.5 ** ((epoch - ls_epochs + 1) // anneal)
            opt = torch.optim.SGD(model.parameters(), lr=lr)
            told = with_short(train_set, short_rate, story_rng, elsewhere_rate)
            enc_fit = encode(told, vocab, answers, cfg.memory, memo)
            for idx in batches(enc_fit.n_facts, rng):
                yield enc_fit, idx, opt, linear
            val_loss, val_acc = evaluate_loss(model, enc_val, linear=linear)
            # Ties in accuracy on a small validation set are common: the lower loss breaks them.
            if not linear and (val_acc, -val_loss) > best[0]:
                best = (
                    (val_acc, -val_loss),
                    {k: v.clone() for k, v in model.state_dict().items()},
                    epoch,
                )
            bar.set_postfix(loss=f"{val_loss:.3f}", val=f"{val_acc:.3f}", ls=linear)

    stream = epochs_of_batches()

    def step(_k: int) -> float:
        enc_fit, idx, opt, linear = next(stream)
        story, n_facts, query, ans = tensors(enc_fit, idx)
        times, mask = noisy_times(n_facts, story.shape[1], cfg.memory, NOISE_RATE, gen)
        logits, _, _ = model(story, times, mask, query, linear=linear)
        loss = nn.functional.cross_entropy(logits, ans, reduction="sum")  # as the paper
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        opt.step()
        for e in model.E:  # the null word stays the zero vector
            e.weight.data[0].zero_()
        return loss.item() / len(idx)

    recorder = timeline.Recorder(record, total * per_epoch) if record else None
    if recorder is not None and ls_epochs:
        recorder.mark(LINEAR_START_END, ls_epochs * per_epoch)
    shots = (
        Snapshots(
            model,
            probes(list(tasks)),
            enc_val,
        )
        if record
        else None
    )
    done = harness.fit(
        step,
        total * per_epoch,
        recorder,
        # The step that ends linear start is read as the model trained it.
        snapshot=shots and (lambda _k: shots.take(linear=now["linear"])),
        train_loss=True,
    )
    next(stream, None)  # the last epoch's end: its validation and the best model kept
    assert best[1] is not None, "at least one softmax epoch"
    model.load_state_dict(best[1])
    info = dict(
        val_accuracy=best[0][0],
        val_loss=-best[0][1],
        best_epoch=best[2],
        linear_start_epochs=ls_epochs,
        short_rate=short_rate,
        elsewhere_rate=elsewhere_rate,
        steps=done.steps,
    )
    if recorder is not None:
        recorder.mark(KEPT, (best[2] + 1) * per_epoch)
        info["timeline"] = recorder.timeline(seed=seed, best_epoch=best[2])
    return model, vocab, answers, info


@dataclass(frozen=True)
class Job:
    """One restart of one target: everything a worker needs, nothing it must share (every
    field but ``target`` is a keyword argument of :func:`train`)."""

    target: int | str
    seed: int
    hops: int
    d: int
    epochs: int
    ls_epochs: int
    size: str
    tying: str
    per_task: int | None
    short_rate: float
    elsewhere_rate: float = ELSEWHERE_RATE


def run_job(job: Job) -> dict:
    """Train one restart in this process (one torch thread); returns its weights as numpy
    arrays, its metadata and its timeline (plain data, so a pool or Ray can send it)."""
    torch.set_num_threads(1)
    tasks = TASK_IDS if job.target == "joint" else (int(job.target),)
    t0 = time.perf_counter()
    # A Job's fields other than its target are train()'s keyword arguments, by name.
    options = {k: v for k, v in asdict(job).items() if k != "target"}
    model, vocab, answers, info = train(
        tasks, **options, progress=False, record=checkpoint_name(job.target)
    )
    tl = info.pop("timeline")
    meta = {
        "family": "memn2n",
        "tasks": list(tasks),
        "size": job.size,
        "seed": job.seed,
        "epochs": job.epochs,
        "config": model.cfg.to_json(),
        "vocab": vocab.to_json(),
        "candidates": list(answers),
        "train_seconds": round(time.perf_counter() - t0, 1),
        **info,
    }
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    return {"job": job, "meta": meta, "state": state, "timeline": tl}


def run_grid(jobs: list[Job], *, workers: int = 2, ray_address: str | None = None):
    """Run every job, yielding results as they finish (engine.jobs: a process pool, a
    fresh process per job, as the variant grid runs; Ray with ``ray_address``; in this
    process with one worker)."""
    for _, result in grid_jobs.run(
        run_job, jobs, workers=workers, ray_address=ray_address, inline=workers == 1
    ):
        yield result


def keep_best(results: list[dict]) -> dict:
    """The restart with the lowest validation error (the lower validation loss breaks a
    tie: on 100 questions many restarts make no error)."""
    return min(results, key=lambda r: (1 - r["meta"]["val_accuracy"], r["meta"]["val_loss"]))


def save_best(results: list[dict], command: str, out) -> str:
    """The kept restart's checkpoint and timeline, with every restart's validation error."""
    best = keep_best(results)
    target = best["job"].target
    restarts = sorted(
        (
            {
                "seed": r["meta"]["seed"],
                "val_error": round(1 - r["meta"]["val_accuracy"], 4),
                "val_loss": round(r["meta"]["val_loss"], 4),
                "best_epoch": r["meta"]["best_epoch"],
                "train_seconds": r["meta"]["train_seconds"],
            }
            for r in results
        ),
        key=lambda r: r["seed"],
    )
    meta = {
        **best["meta"],
        "repeats": len(results),
        "restarts": restarts,
        "selection": "lowest validation error of the restarts (then validation loss)",
        "command": command,
    }
    name = checkpoint_name(target)
    state = {k: torch.from_numpy(v) for k, v in best["state"].items()}
    w, _ = checkpoints.save(name, state, meta, out)
    tl = best["timeline"]
    tl.meta |= {"command": command, "seed": meta["seed"], "restarts": len(results)}
    timeline.save(tl, name, w.parent)
    errors = " ".join(f"{r['val_error']:.3f}" for r in restarts)
    return f"saved {w}: seed {meta['seed']} of {len(results)} (validation errors {errors})"


def jobs_for(targets, args) -> list[Job]:
    out = []
    for target in targets:
        joint = target == "joint"
        epochs = args.epochs or (60 if joint else 100)
        per_task, ls_epochs = None, args.ls_epochs
        if args.quick:
            epochs, per_task, ls_epochs = QUICK["epochs"], QUICK["per_task"], QUICK["ls_epochs"]
        restarts = args.restarts or (QUICK["restarts"] if args.quick else RESTARTS)
        d = args.d or (50 if joint else 20)
        for seed in range(args.seed, args.seed + restarts):
            out.append(
                Job(
                    target,
                    seed,
                    args.hops,
                    d,
                    epochs,
                    ls_epochs,
                    args.size,
                    args.tying,
                    per_task,
                    args.short_rate,
                    args.elsewhere_rate,
                )
            )
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m engine.train memn2n",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--task",
        nargs="+",
        default=["all"],
        help=f"one or more of {TASK_IDS} and 'joint', or 'all' (every task, then joint)",
    )
    ap.add_argument("--hops", type=int, default=3)
    ap.add_argument("--d", type=int, default=None, help="embedding size (20 per task, 50 joint)")
    ap.add_argument("--epochs", type=int, default=None, help="100 per task, 60 joint")
    ap.add_argument(
        "--ls-epochs",
        type=int,
        default=LS_EPOCHS,
        help=f"linear-start epochs before the softmax schedule ({LS_EPOCHS}; 0 = no LS)",
    )
    ap.add_argument("--size", choices=("1k", "10k"), default="1k")
    ap.add_argument("--tying", choices=TYINGS, default="adjacent")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--restarts",
        type=int,
        default=None,
        help=f"train seeds seed … seed+R−1 and keep the lowest validation error "
        f"({RESTARTS}, the paper's best of 10; {QUICK['restarts']} with --quick)",
    )
    ap.add_argument(
        "--short-rate",
        type=float,
        default=SHORT_RATE,
        help=f"share of training questions told over a 2–4-sentence story ({SHORT_RATE})",
    )
    ap.add_argument(
        "--elsewhere-rate",
        type=float,
        default=ELSEWHERE_RATE,
        help=f"share of the 'no' questions asked about someone else's place ({ELSEWHERE_RATE})",
    )
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (one thread each)")
    ap.add_argument("--ray", default=None, help="'local' or a Ray cluster address")
    ap.add_argument("--quick", action="store_true", help="a few seconds; writes to a temp dir")
    ap.add_argument("--out", default=None, help="checkpoint directory (default assets/)")
    args = ap.parse_args(argv)
    targets: list[int | str] = []
    for task in args.task:
        if task == "all":
            targets += [*TASK_IDS, "joint"]
        elif task == "joint" or (task.isdigit() and int(task) in TASK_IDS):
            targets.append(task if task == "joint" else int(task))
        else:
            ap.error(f"--task must be one of {TASK_IDS}, 'joint' or 'all'")
    targets = list(dict.fromkeys(targets))
    if args.ls_epochs < 0 or (args.epochs is not None and args.epochs < 1):
        ap.error("--ls-epochs must be ≥ 0 and --epochs ≥ 1")
    if (args.restarts is not None and args.restarts < 1) or args.jobs < 1:
        ap.error("--restarts and --jobs must be ≥ 1")
    if not (0 <= args.short_rate <= 1 and 0 <= args.elsewhere_rate <= 1):
        ap.error("--short-rate and --elsewhere-rate must be between 0 and 1")
    if args.quick and args.out is None:
        args.out = tempfile.mkdtemp(prefix="memn2n-quick-")
    torch.set_num_threads(1)
    # Each checkpoint records the command that makes it alone; where the jobs run changes
    # nothing in the weights, so --jobs and --ray are not recorded.
    prefix = "engine.train memn2n --task"
    kept = drop(argv, ("--jobs", "--ray", "--task"))
    commands = {t: recorded_command(f"{prefix} {t}", kept, "--out").strip() for t in targets}
    jobs = jobs_for(targets, args)
    # The longest jobs first, so the pool does not end on one long run.
    jobs.sort(key=lambda j: (j.target != "joint", targets.index(j.target), j.seed))
    left = {t: sum(j.target == t for j in jobs) for t in targets}
    done: dict = {t: [] for t in targets}
    t0 = time.perf_counter()
    for result in run_grid(jobs, workers=args.jobs, ray_address=args.ray):
        job, meta = result["job"], result["meta"]
        print(
            f"[memn2n {job.target} seed {job.seed}] validation error "
            f"{1 - meta['val_accuracy']:.3f}  {meta['train_seconds']:.0f} s",
            flush=True,
        )
        done[job.target].append(result)
        if len(done[job.target]) == left[job.target]:  # a target's restarts are all in
            print(
                f"[memn2n {job.target}]",
                save_best(done.pop(job.target), commands[job.target], args.out),
            )
    print(f"{len(targets)} checkpoint(s) in {time.perf_counter() - t0:.0f} s")
    return 0


def drop(argv: list[str], options: tuple[str, ...]) -> list[str]:
    """argv without ``options`` and their values (every value up to the next option)."""
    out, skip = [], False
    for arg in argv:
        if arg.startswith("--"):
            skip = arg in options
            if skip or arg.startswith(tuple(o + "=" for o in options)):
                continue
        if not skip:
            out.append(arg)
    return out
