"""The verdict on Zoology's grid drawn: one sentence per variant with a link to its
learning curves, the table and its CSV, the recall charts and the curves the link opens.

views.variants_verdict builds the sentences, rows and figures; a link is made here, in the
reader's language, from the page's URL.
"""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st
from kit import chart, data_table, t, table_exports
from kit.url import url_choice
from views.variants import variant_name
from views.variants_quality import recall_state_figure, width_figure
from views.variants_verdict import (
    CHANCE_VALUES,
    ablated,
    ablation,
    ablation_figure,
    curves_figure,
    sentence,
    verdict_rows,
)

from engine.analysis import recall_state
from engine.variants import REGISTRY

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


def _say(key: str, **values) -> str:
    """A phrase of recall_state.RECIPE_PHRASES in the page's language."""
    return t(f"variants_verdict.{key}", **values)


def curves_link(variant: str) -> str:
    """This section with the variant's curves picked, in the reader's language."""
    query = {"section": "quality", "curves": variant}
    lang = st.query_params.get("lang")
    return "?" + urlencode(query | ({"lang": lang} if lang else {})) + "#" + CURVES_ANCHOR


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
    others, said, recipes, common = ablation(plans, recipe)
    tuning_point = {  # the ablation's point: the verdict's task at the grid's width
        r["variant"]: r["mean"]
        for r in data["recall_state"]
        if (r["task"], r.get("width")) == (recall_state.VERDICT_TASK, recall_state.VERDICT_WIDTH)
    }
    for v in found:
        name = v["variant"]
        link = f"[{t('variants_verdict.curves_link')}]({curves_link(name)})"
        clause = ablated(name, others, said, tuning_point.get(name), common)
        st.markdown(f"- {sentence(v)}{clause} {link}")
    missing = recall_state.not_on_grid(found)
    if missing:
        names = ", ".join(variant_name(name) for name in missing)
        st.caption(t("variants_verdict.not_on_grid", n=len(missing), names=names))
    rows = verdict_rows(found, others)
    data_table(rows)
    table_exports(rows, "variants-verdict")
    key = "ablation_trained" if others else "ablation_missing"
    words = [recall_state.recipe_words(o, recipes[o], _say) for o in others]
    st.caption(t(f"variants_verdict.{key}", recipes=t("variants_verdict.parts_join").join(words)))
    if others:  # the ablation's columns as one picture: which part each variant needs
        fig = ablation_figure(found, data["recall_state"], others, said, common)
        chart(fig, "verdict-ablation")
        st.caption(t("variants_verdict.ablation_caption"))
    # Lines along the floor crowd 23 variants' chart; they stay a legend click away.
    hidden = tuple(v["variant"] for v in found if v["outcome"] == "chance")
    title = t("variants_verdict.recall_chart_title")
    fig = recall_state_figure(data["recall_state"], 1 / CHANCE_VALUES, title, hidden)
    chart(fig, "verdict-recall")
    title = t("variants_verdict.width_chart_title")
    chart(width_figure(data["recall_state"], title), key="verdict-width")  # shorter n: all
    st.caption(t("variants_verdict.charts_caption", recipe=recipe))
    if hidden:
        names = ", ".join(variant_name(name) for name in hidden)
        st.caption(t("variants_verdict.charts_hidden", names=names))
    if runs:
        draw_curves(runs, [v["variant"] for v in found])
