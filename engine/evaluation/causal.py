"""``python -m engine.evaluate causal``: which heads of SmolLM2 carry indirect-object
identification, by activation patching, and how long a head-ablation sweep takes.

**IOI pairs** (Wang et al. 2022). ``--n`` prompts from ``--seed``: a template of the IOI
paper × two names × a place and an object, e.g. clean "When Mary and John went to the
store, John gave a drink to" (the indirect object IO = Mary, the subject S = John); the
corrupted prompt repeats the other name in the second clause ("…, Mary gave a drink to"),
so the answer flips while every token but one stays. Names, places and objects are those
that are one token for this tokenizer (checked here), so each pair has one length. Every
generated pair counts, whether the model gets it right or not.

**Head patching.** For every pair, head h of layer l's output (every position) is patched
from the clean run into the corrupted one (:func:`engine.analysis.patching.heads`) and the
logit difference LD = logit(IO) − logit(S) read at the last position. Per head:

- ``pooled``: Σ_pairs (LD_patched − LD_corrupted) / Σ_pairs (LD_clean − LD_corrupted), the
  normalised metric of TransformerLens over the whole set (1: restores the clean
  behaviour alone, 0: nothing);
- ``ci95``: a 95% bootstrap interval of ``pooled`` (1,000 resamples of the pairs);
- ``mean`` and ``sem``: the per-pair normalised metric's mean and standard error (a pair
  whose clean and corrupted runs barely differ makes its ratio large: read ``pooled``);
- ``per_template``: ``pooled`` within each template's pairs.

The residual stream per layer × position is patched too, on the first ``--residual-pairs``
pairs of the first template (one length, so positions line up).

**Sweep timing.** A zero-ablation sweep of all 30 × 9 heads on a 30-token prompt
(:func:`engine.analysis.ablation.ablate`), at the thread count of the run (``--threads``):
wall and CPU seconds, and the machine's load average before it (on a shared machine the
wall time is several times the CPU time).
``--sweep-only`` measures only that and adds it to the saved file's timings.

The last stdout line is the JSON, also written to ``assets/checkpoints/causal-eval.json``
(``--out`` for another directory).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time

import numpy as np
import torch

from engine import checkpoints
from engine._cli import recorded_command
from engine.analysis import ablation, causal, patching
from engine.models import precision, registry

RESULT = checkpoints.result_name("causal")
# The IOI paper's templates (BABA and ABBA orders); {A} is the IO, {B} the subject.
TEMPLATES = (
    "When {A} and {B} went to the {place}, {B} gave a {object} to",
    "Then, {B} and {A} went to the {place}. {B} gave a {object} to",
    "After {A} and {B} went to the {place}, {B} gave a {object} to",
    "While {B} and {A} were working at the {place}, {B} gave a {object} to",
    "Friends {A} and {B} found a {object} at the {place}. {B} gave it to",
    "When {B} and {A} got a {object} at the {place}, {B} decided to give it to",
)
NAMES = (
    "Mary John Alice Bob Tom James Sarah Michael David Emma Anna Paul Lisa Mark Kate Peter "
    "Jane Susan Robert Linda Daniel Laura Kevin Rachel Adam Amy Brian Chris Eric Grace Henry "
    "Jack Julia Karen Lucy Martin Nancy Oliver Ryan Sam Steve Thomas William Helen George"
).split()
PLACES = "store park school garden office hospital station restaurant house beach library".split()
OBJECTS = "drink book ball bag ring letter computer necklace basketball snack".split()
SWEEP_PROMPT = (
    "The quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat near "
    "the old red barn, and the farmer's wife sings a quiet song"
)
SWEEP_TOKENS = 30


def one_token(chat, words: list[str]) -> list[str]:
    """The words that are a single token after a space for this tokenizer."""
    tok = chat.tokenizer
    return [w for w in words if len(tok(" " + w, add_special_tokens=False)["input_ids"]) == 1]


def ioi_pairs(chat, n: int, seed: int) -> list[dict]:
    """``n`` clean/corrupted pairs, templates in turn, names, place and object drawn."""
    rng = random.Random(seed)
    names, places, objects = (one_token(chat, w) for w in (NAMES, PLACES, OBJECTS))
    pairs = []
    for i in range(n):
        template = i % len(TEMPLATES)
        io, s = rng.sample(names, 2)
        fill = {"place": rng.choice(places), "object": rng.choice(objects)}
        clean = TEMPLATES[template].format(A=io, B=s, **fill)
        # the second clause's subject, now the IO: the last "{B}" of the template
        head, _, tail = TEMPLATES[template].rpartition("{B}")
        corrupted = (head.format(A=io, B=s, **fill) + io + tail.format(**fill)).rstrip()
        pairs.append(
            {"template": template, "clean": clean, "corrupted": corrupted, "io": io, "s": s}
        )
    return pairs


def measure_pairs(chat, pairs: list[dict], residual_pairs: int, arith: str, seed: int) -> dict:
    moved, gaps, per_pair = [], [], []  # per pair: LD_patched − LD_corrupted, its gap, metric
    clean_ld, corrupted_ld, resid = [], [], []
    started = time.perf_counter()
    for i, p in enumerate(pairs):
        ids = [causal.encode(chat, p[k]) for k in ("clean", "corrupted")]
        pair = patching.prepare(chat, *ids, " " + p["io"], " " + p["s"], arith=arith)
        res = patching.heads(chat, pair)
        moved.append((res.logit_diff - pair.corrupted_diff).numpy())
        gaps.append(pair.clean_diff - pair.corrupted_diff)
        per_pair.append(res.metric.numpy())
        clean_ld.append(pair.clean_diff)
        corrupted_ld.append(pair.corrupted_diff)
        if p["template"] == 0 and len(resid) < residual_pairs:
            resid.append(patching.residual(chat, pair).metric.numpy())
        print(f"pair {i + 1}/{len(pairs)}: LD clean {pair.clean_diff:+.2f}", file=sys.stderr)
    moved, gaps, stack = np.stack(moved), np.array(gaps), np.stack(per_pair)  # (n, L, H)
    pooled = moved.sum(0) / gaps.sum()
    templates = np.array([p["template"] for p in pairs])
    return {
        "n_pairs": len(pairs),
        "clean_logit_diff_mean": float(np.mean(clean_ld)),
        "corrupted_logit_diff_mean": float(np.mean(corrupted_ld)),
        "clean_correct_share": float(np.mean(np.array(clean_ld) > 0)),
        "corrupted_flipped_share": float(np.mean(np.array(corrupted_ld) < 0)),
        "heads_pooled": pooled.round(4).tolist(),
        "heads_mean": stack.mean(0).round(4).tolist(),
        "heads_sem": (stack.std(0, ddof=1) / np.sqrt(len(stack))).round(4).tolist(),
        "top_heads": _top(pooled, stack, _bootstrap(moved, gaps, seed), moved, gaps, templates),
        "residual_template": TEMPLATES[0],
        "residual_pairs": len(resid),
        "residual_mean": np.stack(resid).mean(0).round(4).tolist() if resid else None,
        "seconds": round(time.perf_counter() - started, 1),
    }


def _bootstrap(moved: np.ndarray, gaps: np.ndarray, seed: int, draws: int = 1_000):
    """The pooled metric of ``draws`` resamples of the pairs (with replacement): (draws, L, H)."""
    rng = np.random.default_rng(seed)
    n = len(gaps)
    picks = rng.integers(0, n, size=(draws, n))
    return np.stack([moved[i].sum(0) / gaps[i].sum() for i in picks])


def _top(pooled, stack, boot, moved, gaps, templates, k: int = 12) -> list[dict]:
    """The ``k`` heads of largest |pooled| effect, with a 95% bootstrap interval, the
    per-pair metric's mean ± s.e.m., and the pooled effect within each template."""
    H = pooled.shape[1]
    order = np.argsort(-np.abs(pooled), axis=None)[:k]
    sem = stack.std(0, ddof=1) / np.sqrt(len(stack))
    lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
    by_template = {
        int(t): moved[templates == t].sum(0) / gaps[templates == t].sum()
        for t in np.unique(templates)
    }
    return [
        {
            "layer": int(i // H),
            "head": int(i % H),
            "pooled": round(float(pooled.flat[i]), 4),
            "ci95": [round(float(lo.flat[i]), 4), round(float(hi.flat[i]), 4)],
            "mean": round(float(stack.mean(0).flat[i]), 4),
            "sem": round(float(sem.flat[i]), 4),
            "per_template": [round(float(v.flat[i]), 3) for v in by_template.values()],
        }
        for i in order
    ]


def concentration(pooled: np.ndarray) -> dict:
    """How much of the heads' total |effect| the largest few carry (a circuit is a few)."""
    mags = np.sort(np.abs(pooled).ravel())[::-1]
    total = float(mags.sum())
    return {
        "heads_over_0.05": int((mags > 0.05).sum()),
        "heads_over_0.10": int((mags > 0.10).sum()),
        "top5_share_of_abs_effect": round(float(mags[:5].sum()) / total, 4) if total else None,
        "top10_share_of_abs_effect": round(float(mags[:10].sum()) / total, 4) if total else None,
    }


def sweep_timing(chat, arith: str) -> dict:
    ids = causal.encode(chat, SWEEP_PROMPT)[:SWEEP_TOKENS]
    load = _load()  # other work on the machine slows the sweep
    started, cpu = time.perf_counter(), time.process_time()
    # as the Chat page runs it: Δ loss for its table's heads alone
    res = ablation.ablate(chat, ids, mode="zero", arith=arith, loss_for=ablation.TABLE_HEADS)
    cpu = time.process_time() - cpu  # this process's CPU time, all its threads
    ran = precision.resolve(causal.arithmetic(arith))  # bfloat16 only where native
    return {
        "tokens": len(ids),
        "heads": int((~res.delta_log_prob.isnan()).sum()),
        "loss_for": ablation.TABLE_HEADS,
        "seconds": round(time.perf_counter() - started, 2),
        "cpu_seconds": round(cpu, 2),
        "threads": torch.get_num_threads(),
        "arithmetic": str(ran).removeprefix("torch."),
        "load_before": load,
        "top_heads": res.top(5),
    }


def _load() -> str:
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return ""


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m engine.evaluate causal",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--n", type=int, default=60, help="IOI clean/corrupted pairs")
    ap.add_argument("--seed", type=int, default=0, help="chooses names, places, objects")
    ap.add_argument("--residual-pairs", type=int, default=10, help="pairs patched per position")
    ap.add_argument("--arith", default="bfloat16", choices=sorted(causal.ARITHMETIC))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--sweep-only", action="store_true", help="time the ablation sweep only")
    ap.add_argument("--out", default=None, help="where the JSON goes (assets/checkpoints)")
    return ap


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    torch.set_num_threads(args.threads)
    chat = registry.chat().load()
    timing = sweep_timing(chat, args.arith)
    saved = checkpoints.load_result(RESULT, args.out) or {}
    timings = {**saved.get("sweep_by_threads", {}), str(args.threads): timing}
    if args.sweep_only:
        if saved:
            saved["sweep_by_threads"] = timings
            checkpoints.save_result(RESULT, saved, args.out)
        print(json.dumps(timing))
        return 0
    pairs = ioi_pairs(chat, args.n, args.seed)
    ioi = measure_pairs(chat, pairs, args.residual_pairs, args.arith, args.seed)
    ioi["concentration"] = concentration(np.array(ioi["heads_pooled"]))
    summary = {
        "model": chat.display,
        "date": time.strftime("%Y-%m-%d"),
        "command": recorded_command("engine.evaluate causal", argv, "--out"),
        "host": platform.node(),
        "seed": args.seed,
        "arithmetic": args.arith,
        "templates": list(TEMPLATES),
        "ioi": ioi,
        "sweep_by_threads": timings,
    }
    checkpoints.save_result(RESULT, summary, args.out)
    print(json.dumps({k: v for k, v in summary.items() if k != "ioi"} | {"top": ioi["top_heads"]}))
    return 0
