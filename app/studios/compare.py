"""Compare: one input through every model of a task, from the registry alone: alignments
on the same axes with their AER against gold links, and the difference between any two."""

import streamlit as st
from kit import chart, controls, friendly_errors, page_bottom, page_top
from kit.url import example_and_text, url_choice
from state import compare as state
from state import models
from studios.alignment.common import md
from views.alignment import alignment_figure, alignment_grid, difference_figure

page_top()
st.title("Compare models")
st.caption(
    "The same sentence through every model trained on the same task: RNNsearch with each "
    "scoring function, the Transformer's cross-attention heads with each positional "
    "encoding. Rows are target words, columns source words, so the maps line up."
)

tasks = state.tasks()
with controls():
    task = url_choice(
        st.segmented_control, "task", "Task", tasks, key="cmp-task", required=True, resets="*"
    )
    cards = state.aligners(task)
    titles = {c.name: c.title for c in cards}
    examples, label = [e.input for e in cards[0].examples], f"Input ({cards[0].limits.describe()})"
    text = example_and_text(examples, f"cmp-{task}", "Example", label, st.text_area)


def options(params, key: str) -> dict:
    """A widget per parameter a card or a variant states (beam width, window, …)."""
    chosen = {}
    for p in params:
        k = f"{key}-{p.name}"
        if p.choices:  # a variant's choice parameter
            chosen[p.name] = st.selectbox(p.label, p.choices, p.choices.index(p.default), key=k)
        elif isinstance(p.default, int | float):
            lo, hi = type(p.default)(p.low), type(p.default)(p.high)
            chosen[p.name] = st.slider(p.label, lo, hi, p.default, key=k, help=p.help)
    return chosen


def attention(card, key: str) -> dict:
    """A swappable model runs any attention variant of the registry in every layer."""
    ways = ["exact", *state.variants()] if card.swappable else []
    attend = st.selectbox("Attention in every layer", ways, key=f"{key}-attend") if ways else None
    if attend in (None, "exact"):
        return {}
    return {"attend": attend, "attend_hp": options(state.variant_params(attend), f"{key}-{attend}")}


def short(title: str) -> str:
    """A card's title without its task, which every panel here shares."""
    return " · ".join(title.split(" · ")[:2])


def caption(p) -> str:
    aer = f"AER **{p.scored.aer:.3f}** · " if p.scored else ""
    return f"{aer}{p.label} · {p.reading} · output: {md(p.translation)}"


@st.fragment
def every_model():
    with friendly_errors("the comparison"):
        found = {c.name: state.panels(c.name, text) for c in cards}
    if without := [c.title for c in state.without_alignment(task or tasks[0])]:
        st.caption("No attention, so no alignment: " + "; ".join(without) + ".")
    gold = any(p.scored for f in found.values() for p in f.values())
    heads = sorted({lab for f in found.values() for lab in f if len(f) > 1})
    choices = (["lowest AER"] if gold else []) + heads
    pick = url_choice(
        st.selectbox, "head", "Head shown for models with several", choices, key="cmp-head"
    )
    shown = {n: f.get(pick) or state.best(f) for n, f in found.items()}
    chart(
        alignment_grid([p.drawn(f"{short(titles[n])}<br>{p.label}") for n, p in shown.items()]),
        key="cmp-all",
    )
    for n, p in shown.items():
        st.caption(f"{caption(p)} · {titles[n]}")
    st.dataframe(  # AER per model (rows) and head (columns)
        [
            {"model": titles[n], "alignment from": next(iter(f.values())).reading}
            | {p.label: p.scored.aer if p.scored else None for p in f.values()}
            for n, f in found.items()
        ],
        hide_index=True,
    )
    st.caption(
        r"AER (Och & Ney): $1 - \frac{|A \cap S| + |A \cap P|}{|A| + |S|}$, $A$ = argmax "
        "of each row. "
        + (
            "Each model is shown on the gold translation; where its own differs, its "
            "attention is read with the gold translation fed in (forced alignment)."
            if gold
            else "This sentence has no gold links: pick an example from the grammar for AER."
        )
    )


@st.fragment
def two_models():
    names = list(titles)
    picked = []
    for col, side, default in zip(st.columns(2), "AB", (0, len(names) - 1), strict=True):
        with col:
            kw = dict(default=default, format_func=titles.get, key=f"cmp-{side}")
            name = url_choice(st.selectbox, side.lower(), f"Model {side}", names, **kw)
            card, key = models.card(name), f"cmp-{side}-{name}"
            chosen = options(card.options, key) | attention(card, key)
            picked.append((name, chosen))
    (name_a, options_a), (name_b, options_b) = picked
    with friendly_errors("the comparison"):
        a_all = state.panels(name_a, text, options_a)
        axes = next(iter(a_all.values())).alignment.target
        b_all = state.panels(name_b, text, options_b, target=axes)
    shown = []
    for col, side, found in zip(st.columns(2), "AB", (a_all, b_all), strict=True):
        with col:
            heads = list(found)
            start = heads.index(state.best(found).label)
            p = found[st.selectbox(f"Head of {side}", heads, start, key=f"cmp-head-{side}")]
            fig = alignment_figure(**p.drawn(f"{side}: {titles[p.name]}"))
            chart(fig, key=f"cmp-two-{side}")
            st.caption(caption(p))
            shown.append(p)
    a, b = (p.alignment for p in shown)
    if a.source != b.source or a.target != b.target:
        st.info("The two models read different tokens, so their maps do not share axes.")
        return
    chart(
        difference_figure(a.weights - b.weights, a.source, a.target, title="α_A − α_B"),
        key="cmp-diff",
    )
    st.caption(
        "Positive: A attends more to that source word than B when producing that target "
        "word; negative: B does. Both maps are on A's translation (or the gold one)."
    )


modes = ["Every model", "Two models"]
mode = url_choice(
    st.segmented_control, "mode", "Show", modes, ids=["every", "two"], key="cmp-mode", required=True
)
if mode == "Two models":
    two_models()
else:
    every_model()
page_bottom(f"compare-{task}")
