"""``python -m engine.train induction [--layers 2|1] [--seed 0] [--live]``: the induction-head
phase change (Olsson et al. 2022, arXiv 2209.11895) on one CPU core.

The data are sequences [BOS, r, r, r, …] cut to ``max_len`` tokens: a block r of
n ∈ [4, 20] random tokens repeated. The block length changes from sequence to
sequence, so no position-only rule predicts the repeats; the only general way to use the
context is "find the earlier copy of the current token and predict what followed it" —
an induction head, which takes two layers (a previous-token head in layer 0 whose output
a layer-1 head's keys read: K-composition). The one-layer control can only learn which
tokens occur in the context.

At log-spaced steps the run saves a snapshot (:func:`engine.analysis.induction.snapshot`)
through the common recorder and training harness: held-out loss, in-context-learning
score, the probe's attention maps, the head scores and the K-composition. The timeline
(the common format, :mod:`engine.timeline`) and the final weights go to
``assets/checkpoints/induction/`` — their own folder, beside the checkpoints the model
registry serves, since the toy is studied through its timeline rather than run on text.
``--live`` is the Learning page's "train it now" run (LIVE_STEPS steps), written to a
temporary folder unless ``--out-dir`` is given, never over the shipped toy.
Single-threaded and seeded: the same seed gives the same numbers.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from engine import checkpoints, timeline
from engine._cli import recorded_command
from engine.analysis import induction as analysis
from engine.models.induction import BOS, AttentionOnlyTransformer, InductionConfig, build
from engine.run import NOTHING, Run
from engine.timeline import Timeline
from engine.training import fit as harness

OUT_DIR = analysis.TIMELINE_DIR
STEPS = 3000
BATCH = 32
LR = 1e-3
N_HEADS = 2
BLOCK = (4, 20)  # the shortest and longest repeated block
N_SNAPSHOTS = 20
HELD_OUT = 256  # sequences for the held-out loss and ICL score
QUICK_STEPS = 40
# Train it now: in 800 steps (about 12 s of one core) seed 0 forms its induction head
# (best score 0.78 at step 800, the loss 2 nats down since step 385); the shipped 3,000-step
# run's phase change spans steps 326–845.
LIVE_STEPS = 800


def repeated_blocks(gen: torch.Generator, batch: int, cfg: InductionConfig) -> torch.Tensor:
    """``[batch, max_len]``: BOS then a random block of n ∈ BLOCK tokens repeated (tokens
    drawn with replacement from the content vocabulary, so a block may hold a token twice)."""
    lo, hi = BLOCK
    n = torch.randint(lo, hi + 1, (batch, 1), generator=gen)
    r = torch.randint(1, cfg.vocab_size, (batch, hi), generator=gen)
    body = torch.gather(r, 1, torch.arange(cfg.max_len - 1)[None, :] % n)  # r[i mod n]
    return torch.cat([torch.full((batch, 1), BOS), body], dim=1)


def snapshot_steps(steps: int, n: int = N_SNAPSHOTS) -> list[int]:
    """Step 0 and ``n − 1`` log-spaced steps from 10 to ``steps`` (the common recorder's
    schedule): a phase change is sudden, and a log axis keeps its neighbourhood and the
    early plateau equally visible."""
    return timeline.snapshot_steps(steps, n)


def train(
    n_layers: int = 2,
    *,
    seed: int = 0,
    steps: int = STEPS,
    run: Run | None = None,
    log=print,
) -> tuple[AttentionOnlyTransformer, Timeline]:
    """Train one model through the one harness (:func:`engine.training.fit.fit`); returns
    (model, timeline) and writes nothing.

    ``run.on_snapshot`` sees each snapshot as it is taken (a live view), ``run.on_step``
    each optimizer step with its batch loss (a progress bar); ``run.should_stop()`` is
    asked before every step (a cancel button): a stopped run's timeline ends with a
    snapshot of the step it stopped at. Bit-for-bit reproducible at one thread
    (``torch.set_num_threads(1)``, as :func:`main` sets); with more, reductions split
    differently and the last bits of a map may differ."""
    cfg = InductionConfig(n_layers=n_layers, n_heads=N_HEADS)
    model = build(cfg, seed)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
    data = torch.Generator().manual_seed(seed)
    held_out = repeated_blocks(torch.Generator().manual_seed(10_000 + seed), HELD_OUT, cfg)
    probe = analysis.probe_tokens(cfg.vocab_size, seed)
    recorder = timeline.Recorder(analysis.checkpoint_name(n_layers), steps, n=N_SNAPSHOTS)
    t0 = time.perf_counter()

    def step(_k: int) -> float:
        x = repeated_blocks(data, BATCH, cfg)
        logits, _ = model(x[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, cfg.vocab_size), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()

    def shown(k: int, metrics: dict, traces: list) -> None:
        best = max(
            v for name, v in metrics.items() if name.startswith(f"induction.L{n_layers - 1}.")
        )
        log(
            f"step {k:5d}  loss {metrics['loss']:.3f}  icl {metrics['icl']:+.2f}  "
            f"induction {best:.2f}  {time.perf_counter() - t0:5.1f} s"
        )
        (run or NOTHING).snapshot(k, metrics, traces)

    listening = Run((run or NOTHING).should_stop, (run or NOTHING).on_step, shown)
    done = harness.fit(
        step,
        steps,
        recorder,
        listening,
        snapshot=lambda _k: analysis.snapshot(model, probe, held_out),
    )
    tl = recorder.timeline(
        family="induction",
        paper="Olsson et al. 2022, In-context learning and induction heads (arXiv 2209.11895)",
        config=cfg.to_dict(),
        seed=seed,
        batch=BATCH,
        lr=LR,
        block=list(BLOCK),
        probe=probe,
        train_seconds=round(done.wall_s, 1),
        train_cpu_seconds=round(done.thread_cpu_s, 1),  # this thread alone
    )
    return model, tl


def live(n_layers: int, seed: int, *, steps: int | None = None, run: Run | None = None) -> Timeline:
    """Train it now: a fresh toy from ``seed``, writing and printing nothing; the same run
    as its ``meta["command"]`` (``--live``), snapshot for snapshot at one thread. The meta
    also holds ``wall_s`` and ``cpu_s``."""
    steps = steps or LIVE_STEPS
    _, tl = train(n_layers, seed=seed, steps=steps, run=run, log=lambda *_: None)
    tl.meta.update(
        command=command(n_layers, seed, steps, live=True),  # the steps said: a film to match
        wall_s=tl.meta["train_seconds"],
        cpu_s=tl.meta["train_cpu_seconds"],
    )
    return tl


def command(n_layers: int, seed: int, steps: int | None = None, live: bool = False) -> str:
    """The command line that trains the toy again (``--live``: into a temporary folder)."""
    extra = (" --live" if live else "") + (f" --steps {steps}" if steps else "")
    return f"python -m engine.train induction --layers {n_layers} --seed {seed}{extra}"


def save(model, tl: Timeline, command: str, out_dir: Path | None = None) -> dict:
    """Weights (``induction-<L>l``) and timeline (``…-timeline``) as safetensors + JSON,
    the timeline in the common format (:func:`engine.timeline.save`: maps as float16, a
    map being drawn, not computed with); its JSON also holds the headline curves and the
    phase change."""
    out_dir = Path(out_dir) if out_dir is not None else OUT_DIR
    per_step = analysis.arrays(tl)
    curves = analysis.headline(per_step)
    tl.meta.update(
        command=command,
        phase_change=analysis.phase_change(tl.steps, per_step["loss"], curves["induction"]),
        final_loss=round(float(per_step["loss"][-1]), 4),
        max_induction=round(float(curves["induction"].max()), 4),
    )
    name = analysis.checkpoint_name(tl.meta["config"]["n_layers"])
    meta = dict(tl.meta, steps=tl.steps[-1])
    checkpoints.save(name, model.state_dict(), meta, out_dir)
    tl.meta["curves"] = {k: [round(float(x), 4) for x in v] for k, v in curves.items()}
    timeline.save(tl, name, out_dir)
    return meta


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m engine.train induction",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--layers", type=int, choices=(1, 2), default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=None, help=f"default {STEPS} ({LIVE_STEPS} live)")
    ap.add_argument("--live", action="store_true", help="the Learning page's train-it-now run")
    ap.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_STEPS} steps into --out-dir or a temporary directory",
    )
    ap.add_argument("--out-dir", help="where to write (default assets/checkpoints/induction)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    steps = QUICK_STEPS if args.quick else args.steps or (LIVE_STEPS if args.live else STEPS)
    model, tl = train(args.layers, seed=args.seed, steps=steps)
    out_dir = args.out_dir
    if out_dir is None and (args.quick or args.live):  # a lesson or a test, not the shipped toy
        out_dir = tempfile.mkdtemp(prefix="induction-live-" if args.live else "induction-quick-")
        print(f"writing to {out_dir}")
    command = recorded_command("engine.train induction", argv, "--out-dir")
    meta = save(model, tl, command, out_dir)
    print(
        f"final loss {meta['final_loss']}  max induction score {meta['max_induction']}  "
        f"phase change {meta['phase_change']}  {meta['train_seconds']} s "
        f"({meta['train_cpu_seconds']} CPU s)"
    )
    return 0
