"""The README's numbers: a marked block written from the evaluation files the app reads.

The pages read ``assets/checkpoints/*-eval*.json`` through the model cards; the README
says the same numbers by reading the same files, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.analysis.recall_state import VERDICT_TASK
from engine.models.variant_lm import plan_result_name
from engine.training._grid_plan import Recipe

ZOOLOGY_RESULT = plan_result_name("zoology", Recipe().tag)

START, END = "<!-- results:start -->", "<!-- results:end -->"
CHANCE = 0.02  # at or below this, a recall score is chance (1/64 ≈ 0.016)


def rewrite(text: str, block: str) -> str:
    """``text`` with everything between the markers replaced by ``block``."""
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{block}{END}{tail}"


def nmt(en: dict, dates: dict) -> str:
    by_len = en["bleu_by_length"]
    none = en["models"]["nmt-enfr-none"]["bleu_by_length"]
    first, last = next(iter(by_len)), list(by_len)[-1]
    return (
        f"- **Bahdanau NMT**, English→French, {en['n_test']:,} test sentences: BLEU "
        f"{en['bleu']} with {en['decoding']} ({en['greedy']['bleu']} greedy), alignment error "
        f"rate {en['aer']} against the gold links; without attention {none[first]['bleu']} → "
        f"{none[last]['bleu']} BLEU from {first} to {last} words, with attention "
        f"{by_len[first]['bleu']} → {by_len[last]['bleu']}. Dates: exact "
        f"{dates['exact_match']:.3f}.\n"
    )


def acc(tasks: dict, n: str, key: str = "accuracy") -> str:
    return f"{tasks[n][key]:.3f}"


def memn2n(m: dict) -> str:
    t = m["tasks"]
    restarts = max(r["restarts"]["n"] for r in t.values())
    hard = ("2", "6", "10")
    return (
        f"- **MemN2N**, {len(t)} generated bAbI tasks, {m['training_size']} training questions, "
        f"{t['1']['n_test']:,} test questions each, every model the best of {restarts} "
        f"restarts by validation error (as the paper): mean accuracy {m['mean_accuracy']:.3f} "
        f"(the paper's PE LS RN on the same tasks: {m['paper_mean_accuracy']:.3f}); task 1 "
        f"{acc(t, '1')}, task 4 {acc(t, '4')}, task 15 {acc(t, '15')}, task 16 (basic "
        f"induction) {acc(t, '16')}; tasks 2 / 6 / 10: {' / '.join(acc(t, n) for n in hard)} "
        f"against the paper's {' / '.join(acc(t, n, 'paper_accuracy') for n in hard)}. On "
        f"2–4-sentence stories: {m['mean_short_accuracy']:.3f}.\n"
    )


def transformer(en: dict, dates: dict, config: dict) -> str:
    pe, best = en["pe_ablation"], en["best_head"]
    return (
        f"- **Transformer** ({config['n_layers']} layers × {config['n_heads']} heads, "
        f"d = {config['d_model']}), English→French: BLEU {pe['sinusoidal']['bleu']} with "
        f"sinusoidal PE, {pe['learned']['bleu']} with learned PE, {pe['none']['bleu']} without "
        f"PE (word order lost); the best cross-attention head (layer {best['layer']}, head "
        f"{best['head']}) aligns with AER {best['aer']}. Dates: exact "
        f"{dates['exact_match']:.3f}.\n"
    )


def ranked(table: dict, task: str) -> tuple[str, list[str]]:
    """``name score`` for the variants above chance, best first, and the names at chance."""
    scores = sorted(((r[task]["mean"], v) for v, r in table.items() if task in r), reverse=True)
    above = ", ".join(f"{v} {s:.3f}" for s, v in scores if s > CHANCE)
    return above, [v for s, v in scores if s <= CHANCE]


def variants(v: dict) -> str:
    table, tasks = v["table"], v["tasks"]
    steps = {c["task"]: c["steps"] for c in v["cells"]}
    recall, at_chance = ranked(table, "mqar-256")
    copy, _ = ranked(table, "copy-128")
    control = min(r["control-128"]["mean"] for r in table.values() if "control-128" in r)
    return (
        f"- **Variant quality**, one 2-layer model per attention variant ({len(table)}), seeds "
        f"0 and 1: {tasks['mqar-256']} ({steps['mqar-256']} steps): {recall}; at chance "
        f"(≤ {CHANCE}): {', '.join(at_chance)}. {tasks['copy-128'].capitalize()} "
        f"({steps['copy-128']} steps): {copy}. The short-range control: every variant ≥ "
        f"{control:.3f}. Table, costs and caveats in bench/RESULTS.md.\n"
    )


def recipe(found: dict | None) -> str:
    """The Zoology plan with the field's recipe, at its tuning point (issue 31's verdict)."""
    if found is None:
        return ""
    rows = [r for r in found["recall_state"] if r["task"] == VERDICT_TASK and r["width"] == 64]
    rows.sort(key=lambda r: -r["mean"])
    scores = ", ".join(
        f"{r['variant']} {' / '.join(f'{a:.3f}' for a in r['accuracy'])}" for r in rows
    )
    return (
        f"- **Variants with the field's recipe** (a width-4 short convolution before each mixer, "
        f"the best of four learning rates by validation), Zoology's {VERDICT_TASK} at d = 64, "
        f"2,000 steps, per seed: {scores}. The verdict table is on the Variants page.\n"
    )


def induction(found: dict) -> str:
    two, one = found["models"]["induction-2l"], found["models"]["induction-1l"]
    change = two["phase_change"]
    return (
        f"- **Induction toy** (Olsson et al. 2022), attention-only, {two['steps']:,} steps: two "
        f"layers form an induction head (best score {two['best_induction_head']}) at a phase "
        f"change between steps {change['start']} and {change['end']}, where the held-out loss "
        f"falls {change['loss_drop']:.2f} nats; held-out loss {two['held_out_loss']}, ICL score "
        f"{two['icl']}. The one-layer control: best induction score "
        f"{one['best_induction_head']}, no phase change, loss {one['held_out_loss']}.\n"
    )


def block(evals: Callable[[str], dict | None]) -> str:
    """The README's bullets, from the files the studio's pages read."""
    transformer_config = evals("transformer-enfr-sinusoidal")["config"]  # the checkpoint
    return "".join(
        [
            nmt(evals("nmt-eval-en-fr"), evals("nmt-eval-dates")),
            memn2n(evals("memn2n-eval")),
            transformer(
                evals("transformer-eval-en-fr"), evals("transformer-eval-dates"), transformer_config
            ),
            variants(evals("variants-eval")),
            recipe(evals(ZOOLOGY_RESULT)),  # the plan's file, as bench.renderers names it
            induction(evals("induction-eval")),
        ]
    )
