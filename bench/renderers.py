"""Markdown for one result: a generic table for any JSON, and the tables the project has.

Where a table already exists (the variant grid, the needle probe, the claims), it is the
one its command prints with ``--markdown``; this module adds only what had none.
"""

from __future__ import annotations

from bench import claims, readme
from engine.analysis import press_eval
from engine.evaluation import variants as variant_eval


def cell(v) -> str:
    if v is None or v == [] or v == {}:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int | float):
        return f"{v:,}"
    if isinstance(v, list):
        return ", ".join(cell(x) for x in v) if all(not is_nested(x) for x in v) else str(v)
    if isinstance(v, dict):
        return " · ".join(f"{k} {cell(x)}" for k, x in v.items())
    return str(v).replace("|", "\\|").replace("\n", " ")


def is_nested(v) -> bool:
    return isinstance(v, dict | list)


def is_records(v) -> bool:
    """A list of mappings, or a mapping of mappings: rows of one table."""
    rows = v if isinstance(v, list) else list(v.values()) if isinstance(v, dict) else []
    return bool(rows) and all(isinstance(r, dict) for r in rows)


def table(head: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def records(key: str, v) -> str:
    if isinstance(v, dict):  # a mapping's keys become the first column, headed by its name
        v = [{key: k, **r} for k, r in v.items()]
    columns = list(dict.fromkeys(k for r in v for k in r))
    return table(columns, [[r.get(c) for c in columns] for r in v])


def generic(result: dict) -> str:
    """Top-level numbers in one table; each list or mapping of records in its own."""
    flat = [[k, v] for k, v in result.items() if not is_records(v)]
    parts = [table(["measure", "value"], flat)] if flat else []
    parts += [f"**{k}**\n\n{records(k, v)}" for k, v in result.items() if is_records(v)]
    return "\n\n".join(parts)


def variant_grid(saved: dict) -> str:
    return (
        variant_eval.markdown(saved)
        + "\n\nRecall against the state each variant keeps (width sweep included):\n\n"
        + variant_eval.recall_markdown(saved)
    )


def memn2n(saved: dict) -> str:
    """Per bAbI task: accuracy of the serving model against the paper, short stories,
    someone else's place, and which model serves it."""
    rows = []
    for task, r in saved["tasks"].items():
        rows.append(
            [task, r["accuracy"], r["paper_accuracy"], r["paper_miss"], r.get("short_accuracy")]
            + [r.get("elsewhere_accuracy"), r["model"], r["restarts"]["n"]]
        )
    rows.append(
        ["mean", saved["mean_accuracy"], saved["paper_mean_accuracy"], None]
        + [saved["mean_short_accuracy"], None, None, None]
    )
    head = ["task", "accuracy", "paper PE LS RN", "paper − ours", "short stories"]
    head += ["someone else's place", "served by", "restarts"]
    return table(head, rows) + f"\n\nPaper: {saved['paper']}."


def retrieval(saved: dict) -> str:
    """Per task: the chat model's accuracy with each context, retrieval recall, and where
    its attention and MemN2N's hops went."""
    rows = []
    for task, r in saved["tasks"].items():
        acc, rec = r["accuracy"], r["recall_at_k"]
        rows.append(
            [task, r["n"], acc["retrieved"], acc["story"], acc["none"]]
            + [rec.get("1"), rec.get("3"), rec.get("5"), r["attention_hit_rate"]]
            + [r["attention_first_passage_rate"]["story"], r["memn2n_accuracy"]]
            + [" / ".join(f"{h:.2f}" for h in r["memn2n_hit_rate_per_hop"])]
        )
    head = ["task", "questions", "chat: top-k", "chat: story", "chat: none", "recall@1"]
    head += ["recall@3", "recall@5", "attention hit (story)", "first passage most read"]
    head += ["MemN2N accuracy", "MemN2N hit per hop"]
    return table(head, rows)


def needle(saved: dict) -> str:
    skipped = ", ".join(f"{k} {v:.3f}" for k, v in saved.get("skipped", {}).items())
    note = f"Not probed (below {saved['probe_min']} on their own test set): {skipped}."
    return variant_eval.needle_markdown(saved) + f"\n\nChance: {saved['chance']:.4f}. {note}"


def sink_count(saved: dict) -> str:
    """StreamingLLM's Table 2 on this model: perplexity by number of sinks and budget."""
    cols = [str(s) for s in saved["sinks"]] + ["4 newlines"]
    rows = []
    for budget, by in saved["table"].items():
        full = next(iter(by.values()))["ppl_full"]
        rows.append([budget, full] + [by[c]["ppl"] for c in cols])
    head = ["cache (tokens)", "full cache"] + [f"sinks: {c}" if c.isdigit() else c for c in cols]
    note = (
        f"Perplexity on the first {saved['n']:,} tokens of {saved['text']}; a policy of B "
        "tokens keeps s sinks and the last B − s tokens (0 sinks: a sliding window). "
        "'4 newlines': the first four tokens replaced by newline tokens, kept as the sinks "
        "(its full-cache perplexity is that of the changed text)."
    )
    return table(head, rows) + f"\n\n{note} Paper: {saved['paper']}."


def presses(saved: dict) -> str:
    """kvpress's comparison on this model: the full cache's accuracy per task first, then
    per counted task each press's accuracy / perplexity at every ratio."""
    tasks = saved["tasks"]
    base = [
        [s["task"], s["length"], s["n"], s["full_accuracy"], s["full_ppl"], s["counts"]]
        for s in tasks.values()
    ]
    parts = [
        table(["task", "tokens", "examples", "full-cache accuracy", "perplexity", "counts"], base)
    ]
    for s in tasks.values():
        if not s["counts"]:
            continue
        ratios = sorted({r for p, by in s["presses"].items() if p != "full" for r in by}, key=float)
        rows = [
            [p]
            + [f"{by[r]['accuracy']:.2f} / {by[r]['ppl']:.1f}" if r in by else None for r in ratios]
            for p, by in s["presses"].items()
            if p != "full"
        ]
        hidden = press_eval.hidden_losses(s)
        parts.append(
            f"**{s['task']} at {s['length']} tokens, {s['n']} examples** (accuracy / perplexity; "
            f"full cache {s['full_accuracy']:.2f} / {s['full_ppl']:.1f}). Perplexity hides "
            f"{len(hidden)} of {len(rows) * len(ratios)} press × ratio points (accuracy "
            f"−{press_eval.HIDDEN_DROP} or more at ≤ {press_eval.HIDDEN_RISE:.0%} perplexity)."
        )
        parts.append(table(["press"] + [f"ratio {r}" for r in ratios], rows))
    note = (
        f"A task counts where the full cache reaches {saved['counts_from']} (RULER's rule). "
        f"Arithmetic: {saved.get('arithmetic', 'bfloat16')}; {saved['machine']}. Estimated "
        f"hours for 25 examples per point: {saved['estimate_hours_25']} (wall), "
        f"{saved['estimate_cpu_hours_25']} (CPU)."
    )
    return "\n\n".join(parts + [note])


def retrieval_heads(saved: dict) -> str:
    """Retrieval-head scores and the masking test with its random-head controls."""
    m = saved["masking"]
    top = ", ".join(f"L{h['layer']} H{h['head']} {h['score']:.2f}" for h in saved["top"])
    rows = [
        ["nothing masked", m["accuracy_none"]],
        [f"top {m['k']} retrieval heads masked", m["accuracy_top"]],
        [
            f"{m['k']} random heads masked ({len(m['accuracy_random'])} draws: mean, range)",
            f"{m['accuracy_random_mean']:.3f} ({m['accuracy_random_range'][0]:.2f}–"
            f"{m['accuracy_random_range'][1]:.2f})",
        ],
    ]
    note = (
        f"{m['n']} single-needle examples ({saved['task']}, ≤ {saved['length']} tokens, seed "
        f"{saved['seed']}); accuracy = greedy exact match (teacher-forced argmax). Heads "
        f"with a retrieval score over 0.1: {saved['heads_over_0.1']} of {saved['heads']}. "
        f"Top heads: {top}. Paper: {saved['paper']}."
    )
    return table(["condition", "needle accuracy"], rows) + f"\n\n{note}"


def causal(saved: dict) -> str:
    """IOI by head patching on SmolLM2, and the ablation sweep's time per thread count."""
    ioi = saved["ioi"]
    rows = [
        [f"L{h['layer']} H{h['head']}", h["pooled"], f"{h['ci95'][0]:.2f} – {h['ci95'][1]:.2f}"]
        + [h["mean"], h["sem"]]
        for h in ioi["top_heads"]
    ]
    head = ["head", "pooled effect", "95% interval", "per-pair mean", "s.e.m."]
    note = (
        f"{ioi['n_pairs']} IOI pairs ({len(saved['templates'])} templates, seed {saved['seed']}, "
        f"{saved['arithmetic']}): the model is right on {ioi['clean_correct_share']:.0%} of the "
        f"clean prompts; mean logit difference {ioi['clean_logit_diff_mean']:+.2f} clean, "
        f"{ioi['corrupted_logit_diff_mean']:+.2f} corrupted. Effect: TransformerLens's "
        "normalised logit difference, each head's output patched from the clean run."
    )
    sweeps = [
        [k, v["tokens"], v["heads"], v.get("loss_for", "all"), v.get("arithmetic")]
        + [v["seconds"], v.get("cpu_seconds"), v["load_before"]]
        for k, v in saved["sweep_by_threads"].items()
    ]
    columns = ["threads", "tokens", "heads", "Δ loss for", "arithmetic", "wall s", "CPU s"]
    sweep = table([*columns, "load before"], sweeps)
    return table(head, rows) + f"\n\n{note}\n\nThe every-head ablation sweep:\n\n{sweep}"


def faithfulness_nmt(saved: dict) -> str:
    """AER of each alignment (attention and the attributions) and α's agreement with each."""
    agree = saved["agreement_with_attention"]
    rows = [["attention α", saved["aer"]["attention"], None, None]]
    rows += [[m, saved["aer"][m], agree[m]["spearman"], agree[m]["top1"]] for m in agree]
    head = ["alignment from", "AER", "ρ with α (per target word)", "top-1 = α's"]
    return table(head, rows) + f"\n\n{saved['rule']}; {saved['n_test']} test sentences."


def faithfulness_memn2n(saved: dict) -> str:
    """Per task: each hop's most-attended fact against removing each fact."""
    rows = []
    for task, r in saved["tasks"].items():
        rows.append(
            [task, r["n"], r["accuracy"], r["top_attended_is_most_needed"]]
            + [r["removing_top_attended_changes_answer"], r["some_removal_changes_answer"]]
            + [r["most_needed_is_support"], r["chance"]]
        )
    head = ["task", "questions", "accuracy", "top-attended = most needed, per hop"]
    head += ["removing top-attended changes the answer, per hop", "some removal changes it"]
    head += ["most needed is a supporting fact", "random fact"]
    return table(head, rows) + f"\n\n{saved['rule']}."


def faithfulness_retrieval(saved: dict) -> str:
    """Per task: which passage the answer needs, beside the most-attended one and chance."""
    rows = []
    for task, r in saved["tasks"].items():
        right = r["correct_answers"]
        for label, x in ((task, r), (f"{task}, answered right", right)):
            rows.append(
                [label, x["n"], x["occlusion_hit_rate"], x["attention_hit_rate"]]
                + [x["grad_x_input_hit_rate"], x["chance_rate"]]
            )
        rows[-2].append(r["agreement_with_attention"]["occlusion"]["spearman"])
        rows[-1].append(None)
    head = ["task", "questions", "hit: most needed (drop)", "hit: most attended"]
    head += ["hit: gradient × input", "hit: random passage", "ρ attention vs drop"]
    return table(head, rows) + f"\n\n{saved['rule']}."


EVALS = {
    "causal-eval": causal,
    "sinks-eval": sink_count,
    "cache-eval-presses": presses,
    "retrieval_heads-eval": retrieval_heads,
    "variants-eval": variant_grid,
    "variants-eval-needle": needle,
    # The Zoology plan with the field's recipe: the Variants page's verdict (issue 31).
    readme.ZOOLOGY_RESULT: variant_eval.verdict_markdown,
    "memn2n-eval": memn2n,
    "retrieval-eval": retrieval,
    "faithfulness-eval-nmt": faithfulness_nmt,
    "faithfulness-eval-memn2n": faithfulness_memn2n,
    "faithfulness-eval-retrieval": faithfulness_retrieval,
}
BY_NAME = {"claims": claims.markdown}
