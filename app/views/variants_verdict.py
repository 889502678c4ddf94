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
from urllib.parse import urlencode

import streamlit as st
from kit import chart, data_table, t, table_exports
from kit.url import url_choice
from plotly.colors import sample_colorscale

from engine.analysis import recall_state
from engine.variants import REGISTRY
from views.heatmap import FONT, figure, legend_below
from views.variants import variant_name
from views.variants_quality import recall_state_figure, width_figure

CURVES_ANCHOR = "verdict-curves"  # where a sentence's link lands (the page scrolls there)
# A link opens the page at its top; once per visit that arrived by one, this brings the
# curves into view when they are drawn (a few tries: the heading mounts after the script
# may). Constant text: nothing of the user's enters it.
_SCROLL = """<script>
(() => {{
  let tries = 0;
  const go = () => {{
    const el = document.getElementById("{anchor}");
    if (el) el.scrollIntoView({{block: "start"}});
    else if (tries++ < 20) setTimeout(go, 100);
  }};
  go();
}})();
</script>"""
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


def curves_link(variant: str) -> str:
    """This section with the variant's curves picked, in the reader's language."""
    query = {"section": "quality", "curves": variant}
    lang = st.query_params.get("lang")
    return "?" + urlencode(query | ({"lang": lang} if lang else {})) + "#" + CURVES_ANCHOR


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
                t("variants_quality.col_variant"): v["variant"],
                t("variants_verdict.col_outcome"): t(f"variants_verdict.outcome_{v['outcome']}"),
                t("variants_quality.col_task"): v["task"],
                t("variants_quality.col_width"): v["width"],
                t("variants_quality.col_seeds"): " / ".join(f"{a:.3f}" for a in v["accuracy"]),
                t("variants_quality.col_mean"): v["mean"],
                t("variants_verdict.col_smallest"): smallest["state_bytes"] if smallest else None,
                t("variants_verdict.col_smallest_at"): (
                    f"{smallest['task']}, d = {smallest['width']}" if smallest else None
                ),
                t("variants_quality.col_source"): v["formula"],
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


def draw_curves(runs: list[dict], variants: list[str]) -> None:
    """The picked variant's curves (``?curves=`` is where a sentence's link lands)."""
    st.subheader(t("variants_verdict.curves_heading"), anchor=CURVES_ANCHOR)
    if st.session_state.setdefault("verdict-landed", "curves" in st.query_params):
        st.session_state["verdict-landed"] = False  # this visit's first view only
        st.html(_SCROLL.format(anchor=CURVES_ANCHOR), unsafe_allow_javascript=True)
    kw = dict(key="verdict-curves", format_func=variant_name)
    picked = url_choice(st.selectbox, "curves", t("variants_verdict.curves_pick"), variants, **kw)
    chart(curves_figure(runs, picked), key="verdict-curves-chart")
    st.caption(t("variants_verdict.curves_caption"))


def draw(plans: dict[str, dict], tuning: list[dict], recipe: str) -> None:
    """The verdict of ``recipe``'s folder, its recall charts, the ablation's state, curves."""
    st.subheader(t("variants_verdict.title"))
    data = plans.get(recipe)
    if data is None:
        st.info(t("variants_verdict.missing"))
        return
    runs = [r for r in tuning if r["recipe"] == recipe]
    found = [
        v for v in recall_state.verdict(data["recall_state"], runs) if v["variant"] in REGISTRY
    ]
    st.markdown(t("variants_verdict.intro", recipe=recipe, bar=recall_state.RECALLS))
    for v in found:
        link = f"[{t('variants_verdict.curves_link')}]({curves_link(v['variant'])})"
        st.markdown(f"- {sentence(v)} {link}")
    others = recall_state.ablations(plans, recipe)
    rows = verdict_rows(found, others)
    data_table(rows)
    table_exports(rows, "variants-verdict")
    key = "ablation_trained" if others else "ablation_missing"
    st.caption(t(f"variants_verdict.{key}", recipes=", ".join(others)))
    title = t("variants_verdict.recall_chart_title", recipe=recipe)
    chart(recall_state_figure(data["recall_state"], 1 / CHANCE_VALUES, title), "verdict-recall")
    title = t("variants_verdict.width_chart_title", recipe=recipe)
    chart(width_figure(data["recall_state"], title), key="verdict-width")
    st.caption(t("variants_verdict.charts_caption", recipe=recipe))
    if runs:
        draw_curves(runs, [v["variant"] for v in found])
