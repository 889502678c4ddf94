"""Is the attention faithful? The meter a page draws beside its attention figure.

For one output and its inputs (source words, memory facts, passages): the attention on each
input beside what removing it does. ``state.faithfulness`` hands over the engine's results
and the engine's scores of them (Spearman's ρ, top-1); nothing is recomputed here.

- :func:`meter_figure`: the inputs as rows; on the left a column of attention per attention
  row (each MemN2N hop, the chat model's mass) on the map vocabulary's scale; on the right
  bars of Δ log p of the model's own answer when the input is removed (and gradient × input,
  its first-order estimate, in the same nats). Each column's and each bar series' top input
  is outlined, so "is the most attended input the one the answer needs?" reads off the figure.
- :func:`nmt_grid`: α and the attributions as alignment matrices side by side, each row
  scaled to 0–1 (its least → 0, its most → 1): the order ρ and top-1 compare is the colour.
- the rows, verdicts and measured lines that sections.faithfulness draws under the figure:
  one verdict line, a table of ρ and top-1, and what the shipped evaluation measured over a
  whole set.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from kit.i18n import engine_text, md_escape, t
from kit.presenter import OKABE_ITO, TICK_PX, presenting

from views.heatmap import (
    FONT,
    NARROW_PX,
    SEQUENTIAL,
    axes,
    category_ticks,
    cell_domains,
    drawn_px,
    figure,
    map_grid,
    map_scale,
    text_px,
    unique_labels,
    wrap_title,
)

TEXT_ROWS = 14  # bars carry their value as text up to this many inputs (the hover always)
YES, NO = "✓", "✗"
VALUE_PX = 13  # the values written in cells and beside bars; on a projector, its ticks' size


def value_px() -> int:
    return TICK_PX if presenting() else VALUE_PX


PALE = "#a6cee3"  # a bar whose input's removal leaves the answer as it is


# ---- figures ------------------------------------------------------------------------------


def meter_figure(
    labels: Sequence[str],
    attention: dict[str, np.ndarray],
    effects: dict[str, np.ndarray],
    *,
    title: str,
    value_name: str,
    attention_title: str,
    effect_title: str,
    notes_text: Sequence[str] = (),
    changed: Sequence[bool] = (),
):
    """Inputs (rows): attention columns (left) beside effect bars (right), tops outlined.

    ``attention``: column label → weights over the inputs; ``effects``: series name → its
    value per input (nats). For the first series, ``notes_text``: per input, text after its
    value in the hover; ``changed``: per input, whether its bar is drawn dark (else pale)."""
    ys = unique_labels(list(labels))
    z = np.stack([np.asarray(v, float) for v in attention.values()], axis=1)  # (n, A)
    s = map_scale(z, value_name=value_name)
    xs = unique_labels(list(attention))
    bars = [
        _effect_bars(n, np.asarray(v, float), ys, OKABE_ITO[k])
        for k, (n, v) in enumerate(effects.items())
    ]
    if notes_text:
        bars[0]["customdata"] = [
            a + b for a, b in zip(bars[0]["customdata"], notes_text, strict=True)
        ]
    if len(changed):
        bars[0]["marker"]["color"] = [OKABE_ITO[0] if c else PALE for c in changed]
    title = title + (f" · {s['note']}" if s["note"] else "")
    # The title's lines, then the columns' labels (and their axis title, when there is one).
    top = 28 + 24 * wrap_title(title)[1] + 36 + (20 if attention_title else 0)
    legend = 24 * len(effects) if len(effects) > 1 else 0  # under the bars' axis title
    rows_px = max(24, 8 + 14 * len(effects)) * len(ys)
    height = int(min(900, max(260, top + 72 + legend + rows_px)))
    margin = dict(l=int(min(300, text_px(ys, FONT["size"]) + 16)), r=20, t=top, b=72 + legend)
    plot_px = height - top - margin["b"]
    left, right = cell_domains([len(xs), 2 + 2 * len(effects)], 0.05)
    bars_px = drawn_px(NARROW_PX - margin["l"] - margin["r"]) * (right[1] - right[0])
    category = dict(type="category", autorange="reversed", automargin=False)
    heat_x = dict(type="category", side="top", title=dict(text=attention_title))
    layout = dict(
        title=dict(text=title),
        font=FONT,
        height=height,
        margin=margin,
        barmode="group",
        showlegend=legend > 0,
        legend=dict(x=right[0], xanchor="left", y=-70 / plot_px, yanchor="top"),
        shapes=[_top_box(c, int(z[:, c].argmax())) for c in range(len(xs))],
        **axes(1, left, (0, 1), x=heat_x, y=dict(category, **category_ticks(ys, plot_px))),
        **axes(2, right, (0, 1), x=_effect_axis(bars, bars_px, effect_title)),
    )
    layout["yaxis2"].update(category, showticklabels=False, matches="y")
    return figure([_attention_cells(z, xs, ys, s), *bars], layout)


def _effect_axis(bars: list[dict], px: float, title: str) -> dict:
    """The bars' axis, 0 included, with room beyond the bars for the values written there."""
    values = np.concatenate([b["x"] for b in bars])
    lo, hi = min(0.0, float(values.min())), max(0.0, float(values.max()))
    span = (hi - lo) or 1.0
    written = [x for b in bars for x in (b.get("text") or [])]
    room = min(0.5, text_px(written, value_px()) / max(px, 1.0)) if written else 0.0
    pad = span * room / (1 - room)
    reach = (lo - pad if lo < -0.005 else lo, hi + pad)  # a negative value's text: left
    return dict(title=dict(text=title), range=list(reach), zeroline=True, zerolinewidth=2)


def _attention_cells(z: np.ndarray, xs, ys, s: dict) -> dict:
    return dict(
        type="heatmap",
        z=np.round(z, 4).astype(np.float32),
        x=xs,
        y=ys,
        zmin=s["zmin"],
        zmax=s["zmax"],
        colorscale=SEQUENTIAL,
        showscale=False,
        texttemplate="%{z:.2f}" if len(ys) <= TEXT_ROWS else "",
        textfont=dict(size=value_px() - 1),
        hovertemplate="%{y}<br>%{x}: " + s["name"] + " = %{z:.4f}<extra></extra>",
    )


def _top_box(column: int, row: int) -> dict:
    """A red frame around a column's most attended input (a category's cell spans ±0.5)."""
    cell = dict(x0=column - 0.5, x1=column + 0.5, y0=row - 0.5, y1=row + 0.5)
    return dict(type="rect", xref="x", yref="y", line=dict(color="#d62728", width=3), **cell)


def _effect_bars(name: str, v: np.ndarray, ys, colour: str) -> dict:
    """One effect per input as horizontal bars, the largest outlined in red; each value
    written on its bar while the rows leave room (always in the hover)."""
    widths = [3 if i == int(v.argmax()) else 0 for i in range(len(v))]
    text = [f"{round(x, 2) + 0.0:+.2f}" for x in v]  # + 0.0: no "-0.00"
    return dict(
        type="bar",
        orientation="h",
        name=name,
        x=np.round(v, 4),
        y=ys,
        xaxis="x2",
        yaxis="y2",
        marker=dict(color=colour, line=dict(color="#d62728", width=widths)),
        text=text if len(ys) <= TEXT_ROWS else None,
        customdata=text,
        textposition="outside",
        textfont=dict(size=value_px()),
        cliponaxis=False,
        hovertemplate="%{y}<br>" + name + " = %{customdata}<extra></extra>",
    )


def row_scaled(m: np.ndarray) -> np.ndarray:
    """Each row mapped to 0–1 (least → 0, most → 1); a row of equal values is all 1 (every
    input ties for the top). Ranks and the top input stay: what ρ and top-1 compare."""
    m = np.asarray(m, float)
    lo = m.min(axis=1, keepdims=True)
    span = m.max(axis=1, keepdims=True) - lo
    return np.divide(m - lo, span, out=np.ones_like(m), where=span > 0)


def nmt_grid(found, src: Sequence[str], tgt: Sequence[str]):
    """α, occlusion and gradient × input as alignments (target words × source words)."""
    panels = [
        dict(z=row_scaled(m), x=list(src), y=list(tgt), title=name)
        for name, m in (
            (t("faithfulness.attention_alpha"), found.alpha),
            (t("faithfulness.occlusion"), found.occlusion),
            (t("faithfulness.grad_x_input"), found.grad_x_input),
        )
    ]
    value = t("faithfulness.value_row_scaled")
    title = t("faithfulness.fig_nmt")  # on a projector (956 px, not 535) the three in a row
    return map_grid(panels, columns=3, value_name=value, title=title)


# ---- text ----------------------------------------------------------------------------------


def mark(agrees: bool) -> str:
    return YES if agrees else NO


def rho(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def mean_text(mean: dict) -> str:
    """One example's mean ρ and how many of its rows share α's top input, as the engine's
    result gives them (``Saliency.mean``)."""
    shown = "–" if mean["spearman"] is None else f"{mean['spearman']:.2f}"
    hits = round(mean["top1"] * mean["n"]) if mean["top1"] is not None else 0
    return t("faithfulness.mean", rho=shown, top=hits, n=mean["n"])


def _rates(values) -> str:
    return " / ".join(f"{v:.2f}" for v in values)


# ---- the Alignment page ------------------------------------------------------------------


def nmt_rows(meter: dict) -> list[dict]:
    """Per target word: α's top source word, each attribution's, and ρ and top-1."""
    found, src = meter["found"], meter["src"]
    methods = {"occlusion": found.occlusion, "grad_x_input": found.grad_x_input}
    names = {m: t(f"faithfulness.{m}") for m in methods}
    rows = []
    for i, word in enumerate(meter["tgt"]):
        row = {t("faithfulness.col_target"): word}
        row[t("faithfulness.col_top_alpha")] = src[int(found.alpha[i].argmax())]
        for m, values in methods.items():
            a = meter["agreement"][m][i]
            row[t("faithfulness.col_top", method=names[m])] = src[int(values[i].argmax())]
            row[t("faithfulness.col_rho", method=names[m])] = rho(a.spearman)
            row[t("faithfulness.col_top1", method=names[m])] = mark(a.top1)
        rows.append(row)
    return rows


def nmt_measured(m: dict) -> str:
    aer, agree = m["aer"], m["agreement_with_attention"]
    occ, gxi = agree["occlusion"], agree["grad_x_input"]
    text = t(
        "faithfulness.nmt_measured",
        n=m["n_test"],
        rows=m["n_rows"],
        model=engine_text(m["title"]),
        aer_alpha=f"{aer['attention']:.3f}",
        aer_occlusion=f"{aer['occlusion']:.3f}",
        aer_gxi=f"{aer['grad_x_input']:.3f}",
        aer_ig=f"{aer['integrated_gradients']:.3f}",
        rho_occlusion=f"{occ['spearman']:.2f}",
        top_occlusion=f"{occ['top1']:.2f}",
        rho_gxi=f"{gxi['spearman']:.2f}",
        top_gxi=f"{gxi['top1']:.2f}",
    )
    return text if m["same"] else f"{text} {t('faithfulness.other_model')}"


# ---- the Memory page -----------------------------------------------------------------------


def memory_verdict(meter: dict, sentences: Sequence[str], candidates: Sequence[str]) -> str:
    """The last hop's most attended fact against the one the answer needs most."""
    found = meter["found"]
    top, need = int(found.hops[-1].argmax()), int(found.delta.argmax())
    facts = dict(fact=md_escape(sentences[top]), need=md_escape(sentences[need]))
    facts["delta"] = f"{found.delta[need]:.2f}"
    line = t(
        "faithfulness.top_is_needed" if top == need else "faithfulness.top_not_needed", **facts
    )
    answer = candidates[found.answer]
    if meter["changes"][top]:
        then = t("faithfulness.removal_changes", new=candidates[found.answer_without[top]])
    else:
        then = t("faithfulness.removal_keeps", answer=answer)
    return f"{line} {then}"


def memory_rows(meter: dict, hops, sentences, candidates) -> list[dict]:
    """Per hop: its most attended fact, ρ(p, Δ), top-1, and the answer without that fact."""
    found, rows = meter["found"], []
    for hop, p, a in zip(hops, found.hops, meter["agreement"], strict=True):
        top = int(p.argmax())
        without = candidates[found.answer_without[top]] if meter["changes"][top] else NO
        rows.append(
            {
                t("faithfulness.col_hop"): hop,
                t("faithfulness.col_top_fact"): f"{top + 1}. {sentences[top]}",
                t("faithfulness.col_rho_delta"): rho(a.spearman),
                t("faithfulness.col_top1_delta"): mark(a.top1),
                t("faithfulness.col_without"): without,
            }
        )
    return rows


def memory_measured(m: dict) -> str:
    means = dict(
        top=f"{m['mean_last_hop_top_is_most_needed']:.2f}",
        changes=f"{m['mean_last_hop_removal_changes_answer']:.2f}",
        tasks=len(m["tasks"]),
    )
    text = t("faithfulness.memory_measured_all", **means)
    task = m["task"]
    if not task:
        return text
    line = t(
        "faithfulness.memory_measured_task",
        n=task["n"],
        model=engine_text(m["title"]),
        top=_rates(task["top_attended_is_most_needed"]),
        changes=_rates(task["removing_top_attended_changes_answer"]),
        any=f"{task['some_removal_changes_answer']:.2f}",
        chance=f"{task['chance']:.2f}",
    )
    return f"{line} {text}" if m["same"] else f"{line} {t('faithfulness.other_model')} {text}"


# ---- the Retrieval page --------------------------------------------------------------------


def retrieval_rows(meter: dict, passages: Sequence[dict]) -> list[dict]:
    """Per attribution: its top passage beside the most read one, ρ and top-1."""
    found = meter["found"]
    values = {"occlusion": found.delta, "grad_x_input": found.grad_x_input}
    read = int(found.attention.argmax())
    rows = []
    for m, a in meter["agreement"].items():
        top = int(values[m].argmax())
        rows.append(
            {
                t("faithfulness.col_method"): t(f"faithfulness.{m}"),
                t("faithfulness.col_top_passage"): f"[{top + 1}] {passages[top]['text']}",
                t("faithfulness.col_most_read"): f"[{read + 1}] {passages[read]['text']}",
                t("faithfulness.col_rho_mass"): rho(a.spearman),
                t("faithfulness.col_top1_mass"): mark(a.top1),
            }
        )
    return rows


def retrieval_measured(task: str, r: dict) -> str:
    right = r.get("correct_answers") or {}
    occ = r["agreement_with_attention"]["occlusion"]
    return t(
        "faithfulness.retrieval_measured",
        task=task,
        n=r["n"],
        drop=f"{r['occlusion_hit_rate']:.2f}",
        attention=f"{r['attention_hit_rate']:.2f}",
        gxi=f"{r['grad_x_input_hit_rate']:.2f}",
        chance=f"{r['chance_rate']:.2f}",
        right=right.get("n", 0),
        right_drop=f"{right.get('occlusion_hit_rate') or 0:.2f}",
        right_attention=f"{right.get('attention_hit_rate') or 0:.2f}",
        rho=f"{occ['spearman']:.2f}",
        top=f"{occ['top1']:.2f}",
    )
