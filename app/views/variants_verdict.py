"""The verdict on Zoology's grid trained with the field's recipe, where researchers read it:
which variant recalls, at what state, with which recipe, one plain sentence each with a
link to its learning curves at every rate it was tuned at.

Reads the plan's evaluation (``python -m engine.evaluate variants --plan zoology --save``,
one file per recipe folder) and its tuning runs; the rows are
engine.analysis.recall_state.verdict's. The same table goes to RESULTS through the
evaluation's JSON.
"""

from __future__ import annotations

import math

import numpy as np
from kit.i18n import t
from plotly.colors import sample_colorscale

from engine.analysis import recall_state
from views.heatmap import figure, heatmap
from views.style import FONT, legend_below
from views.variants import data_text, variant_name

ROW_PX = 24  # a row of the ablation's chart: presenter type (18 px) with air, unthinned
CHANCE_VALUES = 64  # MQAR's values: a guess is right 1/64 of the time, its loss ln 64


def sentence(v: dict) -> str:
    """One plain sentence: the outcome, where, at what state, with which recipe."""
    smallest = v["smallest_state"] or {}
    state = f"{smallest.get('state_bytes', 0):,}"
    at = f"{smallest.get('task', '')}, d = {smallest.get('width', '')}"
    # Under the bar on the verdict's task, yet recalling on a shorter one: said, so the
    # sentence agrees with the table's smallest-state column.
    shorter = smallest and v["outcome"] != "recalls"
    return t(
        f"variants_verdict.sentence_{v['outcome']}",
        elsewhere=t("variants_verdict.elsewhere", state=state, at=at) if shorter else "",
        name=variant_name(v["variant"]),
        mean=f"{v['mean']:.3f}",
        task=v["task"],
        width=v["width"],
        state=state,
        at=at,
        conv=v["conv"] if v["conv"] is not None else "–",
        lr=f"{v['lr']:g}" if v["lr"] is not None else "–",
        rates=len(v["validation_by_lr"]),
    )


def differences(recipe: dict | None, main: dict | None) -> list[str]:
    """How an ablation folder's recipe differs from the recipe's, part by part: what it
    takes away ("without the convolution", "with one rate (0.003)", "in 360 steps")."""
    if recipe is None or main is None:
        return []
    words = []
    if recipe["conv"] != main["conv"]:
        conv = recipe["conv"]
        words.append(
            t("variants_verdict.diff_conv", k=conv) if conv else t("variants_verdict.diff_no_conv")
        )
    if recipe["lrs"] != main["lrs"]:
        lrs = recipe["lrs"]
        one = t("variants_verdict.diff_one_rate", lr=f"{lrs[0]:g}") if len(lrs) == 1 else None
        words.append(one or t("variants_verdict.diff_best_of", n=len(lrs)))
    if recipe["steps"] != main["steps"]:
        words.append(t("variants_verdict.diff_steps", steps=f"{recipe['steps']:,}"))
    return words


def ablated(variant: str, others: dict, said: dict, mean, common: str = "") -> str:
    """The variant's score in each ablation folder, named by the part of the recipe that
    folder takes away, so its sentence says which part matters (``said``: folder → its
    difference in words; ``mean``: the recipe's own at the same point, or None;
    ``common``: the part every folder takes away, said once)."""
    parts = [
        t(
            "variants_verdict.ablated_part",
            what=said[folder],
            mean=f"{means[variant]:.3f}",
            outcome=t(f"variants_verdict.outcome_{recall_state.outcome_of(means[variant])}"),
        )
        for folder, means in others.items()
        if variant in means
    ]
    if not parts:
        return ""
    recipe = f"{mean:.3f}" if mean is not None else "–"
    task, width = recall_state.VERDICT_TASK, recall_state.VERDICT_WIDTH
    parts = t("variants_verdict.parts_join").join(parts)
    return t(
        "variants_verdict.ablated", task=task, width=width, common=common, mean=recipe, parts=parts
    )


def verdict_rows(found: list[dict], ablations: dict[str, dict[str, float]]) -> list[dict]:
    """The verdict as a table (and its CSV): a row per variant; ``ablations`` adds each
    other recipe folder's best mean on the verdict's task (recipe → variant → mean)."""
    rows = []
    for v in found:
        smallest = v["smallest_state"]
        rates = " · ".join(
            f"{lr:g}: {acc:.3f}" for lr, acc in sorted(v["validation_by_lr"].items())
        )
        rows.append(
            {
                t("variants_quality.col_variant"): variant_name(v["variant"]),
                t("variants_verdict.col_outcome"): t(f"variants_verdict.outcome_{v['outcome']}"),
                t("variants_quality.col_task"): v["task"],
                t("variants_quality.col_width"): v["width"],
                t("variants_quality.col_seeds"): " / ".join(f"{a:.3f}" for a in v["accuracy"]),
                t("variants_quality.col_mean"): v["mean"],
                t("variants_verdict.col_smallest"): smallest["state_bytes"] if smallest else None,
                t("variants_verdict.col_smallest_at"): (
                    f"{smallest['task']}, d = {smallest['width']}" if smallest else None
                ),
                t("variants_quality.col_source"): data_text(v["formula"]),
                t("variants_verdict.col_conv"): v["conv"],
                t("variants_quality.col_kept"): v["lr"],
                t("variants_verdict.col_rates"): rates,
                t("variants_verdict.col_points"): v["points"],
                **{
                    t("variants_verdict.col_ablation", recipe=recipe): means.get(v["variant"])
                    for recipe, means in ablations.items()
                },
            }
        )
    return rows


def curves_figure(runs: list[dict], variant: str) -> dict:
    """The variant's training loss at every rate of its sweep, the guess's loss dotted:
    a flat line there for the whole run is the plateau, not a lack of steps."""
    mine = sorted((r for r in runs if r["variant"] == variant), key=lambda r: r["lr"])
    # Rates in one hue, light to dark as they grow: not the variants' colours of the charts
    # above, where green is full attention, not a rate.
    shade = sample_colorscale(
        "Blues", [0.35 + 0.65 * i / max(len(mine) - 1, 1) for i in range(len(mine))]
    )
    data = []
    for i, r in enumerate(mine):
        steps, losses = zip(*r["loss_curve"], strict=True) if r["loss_curve"] else ((), ())
        kept = t("variants_verdict.kept") if r["kept"] else ""
        data.append(
            dict(
                type="scatter",
                mode="lines",
                name=f"lr {r['lr']:g}{kept}",
                x=list(steps),
                y=list(losses),
                line=dict(color=shade[i], width=3 if r["kept"] else 1.5),
                hovertemplate=f"lr {r['lr']:g}: " + "%{y:.3f} · %{x}<extra></extra>",
            )
        )
    last = max((s for r in mine for s, _ in r["loss_curve"]), default=1)
    data.append(
        dict(
            type="scatter",
            mode="lines",
            name=t("variants_verdict.guess_loss"),
            x=[0, last],
            y=[math.log(CHANCE_VALUES)] * 2,
            line=dict(dash="dot", color="grey"),
            hoverinfo="skip",
        )
    )
    layout = dict(
        title=dict(text=t("variants_verdict.curves_title", name=variant_name(variant))),
        font=FONT,
        height=420,
        margin=dict(l=70, r=10, t=60, b=10),
        xaxis=dict(title=dict(text=t("variants_verdict.step_axis"))),
        yaxis=dict(title=dict(text=t("variants_verdict.loss_axis")), rangemode="tozero"),
        legend=legend_below(),
    )
    return figure(data, layout)


def ablation(plans: dict[str, dict], recipe: str) -> tuple[dict, dict, dict, str]:
    """The other recipe folders' best means (folder → variant → mean), ordered by how much
    of the recipe each takes away (one part first); each folder's difference in words,
    less the part every folder shares, which is said once (``common``); their recipes."""
    others = recall_state.ablations(plans, recipe)
    recipes = {o: recall_state.folder_recipe(plans[o]) for o in others}
    main = recall_state.folder_recipe(plans[recipe])
    parts = {o: differences(recipes[o], main) for o in others}
    others = dict(sorted(others.items(), key=lambda kv: (len(parts[kv[0]]), kv[0])))
    # Said once when several folders share it (each folder of one rate, say).
    first = next(iter(parts.values())) if len(parts) > 1 else []
    shared = [w for w in first if all(w in p for p in parts.values())]
    join = t("variants_verdict.diff_join")
    said = {
        o: join.join(w for w in parts[o] if w not in shared) or t("variants_verdict.diff_none")
        for o in others
    }
    common = t("variants_verdict.ablated_common", words=join.join(shared)) if shared else ""
    return others, said, recipes, common


def ablation_figure(
    found: list[dict], recall: list[dict], others: dict, said: dict, common: str
) -> dict:
    """Which part of the recipe each variant needs, at a glance: its seed-0 accuracy at the
    ablation's point with the recipe (first column) and in each ablation folder (a column
    each, named by what it takes away, ``said``; what they all take away, ``common``, in
    the axis title), variants in the verdict's order."""
    point = (recall_state.VERDICT_TASK, recall_state.VERDICT_WIDTH)
    seed0 = {
        r["variant"]: r["accuracy"][r["seeds"].index(0)]
        for r in recall
        if (r["task"], r.get("width")) == point and 0 in r.get("seeds", [])
    }
    columns = [t("variants_verdict.ablation_recipe_col")]
    columns += [said[o] for o in others]
    names = [v["variant"] for v in found]
    rows = [[seed0.get(v, np.nan)] + [m.get(v, np.nan) for m in others.values()] for v in names]
    z = np.array(rows, dtype=float)
    fig = heatmap(
        z,
        columns,
        [variant_name(v) for v in names],
        title=t("variants_verdict.ablation_chart_title", task=point[0], width=point[1]),
        x_title=t("variants_verdict.ablation_axis", common=common),
        y_title=t("variants_quality.col_variant"),
        value_name=t("variants_verdict.ablation_value"),
        zmin=0.0,
        zmax=1.0,
        annotate=True,
    )
    fig.data[0].text = [["" if np.isnan(a) else f"{a:.2f}" for a in row] for row in z]
    # Every variant named: rows tall enough for a label each in presenter type too (18 px
    # and a little air), which would otherwise thin the axis to every other variant.
    margin = fig.layout.margin
    fig.layout.height = max(fig.layout.height, (margin.t or 0) + (margin.b or 0) + ROW_PX * len(z))
    return fig
