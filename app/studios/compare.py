"""Compare: one input through every model of a task, from the registry alone: alignments
on the same axes with their AER against gold links, and the difference between any two."""

import streamlit as st
from kit import (
    controls,
    data_table,
    engine_text,
    fragment,
    friendly_errors,
    html_chart,
    page_bottom,
    page_top,
    t,
)
from kit.i18n import md_escape, param_help, param_label, variant_title
from kit.knobs import Knobs
from kit.presenter import palette
from kit.textbox import card_limits, char_ends, word_ends
from kit.url import example_and_text, url_choice
from state import compare as state
from state import models
from views.alignment import alignment_grid, difference_figure
from views.alignment_html import alignment_grid_html

page_top("compare")
st.title(t("compare.title"))
st.caption(t("compare.caption"))

tasks = state.tasks()
named = {k: t(f"alignment.task_{k}") if k in ("en-fr", "dates") else k for k in tasks}
with controls():
    kw = dict(key="cmp-task", required=True, resets="*", format_func=named.get)
    task = url_choice(st.segmented_control, "task", t("compare.task"), tasks, **kw)
    cards = state.aligners(task)
    titles = {c.name: engine_text(c.title) for c in cards}


def short(title: str) -> str:
    """A card's title without its task, which every panel here shares."""
    return " · ".join(title.split(" · ")[:2])


def caption(p) -> str:
    aer = f"AER **{p.scored.aer:.3f}** · " if p.scored else ""
    return f"{aer}{p.label} · {p.reading} · {t('compare.output')}: {md_escape(p.translation)}"


def options(params, key: str, knobs: Knobs, variant=None) -> dict:
    """A widget per parameter a card or a variant states (beam width, window, …), each
    labelled as ``variant`` (a variant's own, else a model option's) names it; a link's
    values (``knobs``: ``?a_hp=beam:4,longformer.window:2``) seed them."""
    chosen = {}
    for p in params:
        k, label = f"{key}-{p.name}", param_label(p, variant)
        name = f"{variant.name}.{p.name}" if variant else p.name
        if p.choices:  # a variant's choice parameter
            chosen[p.name] = knobs.choice(name, p, label, key=k)
        elif isinstance(p.default, int | float):
            lo, hi = type(p.default)(p.low), type(p.default)(p.high)
            label = t(f"compare.{p.name}") if p.name in ("beam", "max_new_tokens") else label
            first = knobs.first(name, p, p.default, k)
            chosen[p.name] = st.slider(label, lo, hi, first, key=k, help=param_help(p, variant))
            knobs.chose(name, chosen[p.name], p.default)
    return chosen


def way_title(way: str) -> str:
    """``exact``, or a variant's title, in the reader's language."""
    return t("compare.attend_exact") if way == "exact" else variant_title(state.variant(way))


def attention(card, key: str, side: str, knobs: Knobs) -> dict:
    """A swappable model runs any attention variant of the registry in every layer (the
    choice in the link: ``?b_attend=longformer``)."""
    if not card.swappable:
        return {}
    ways = ["exact", *state.variants()]
    kw = dict(key=f"{key}-attend", format_func=way_title)
    attend = url_choice(st.selectbox, f"{side}_attend", t("compare.attend"), ways, **kw)
    if attend == "exact":
        return {}
    variant = state.variant(attend)
    hp = options(variant.params, f"{key}-{attend}", knobs, variant)
    return {"attend": attend, "attend_hp": hp}


def warn(found: list[dict]) -> None:
    """Said once above the maps, as the Alignment and Transformer pages say it above theirs:
    words outside the models' vocabulary, else which models are unsure of their output (a
    confidence below the floor measured on inputs like their training data)."""
    firsts = (next(iter(f.values())) for f in found if f)  # a model's panels share its trace
    traces = {p.name: p.trace for p in firsts}
    said = (tr.outputs.get("unknown", []) for tr in traces.values())
    if unknown := list(dict.fromkeys(w for words in said for w in words)):
        st.warning(t("compare.unknown", words=", ".join(f"“{md_escape(w)}”" for w in unknown)))
    elif unsure := [md_escape(titles[n]) for n, tr in traces.items() if tr.outputs.get("warning")]:
        st.warning(t("compare.unsure", models="; ".join(unsure)))


def every(text: str):
    """Every model of the task on the same axes, one head each, and the AER table."""
    with friendly_errors(t("compare.what")):
        found = {c.name: state.panels(c.name, text) for c in cards}
    warn(list(found.values()))
    if without := [engine_text(c.title) for c in state.without_alignment(task or tasks[0])]:
        st.caption(t("compare.no_attention", models="; ".join(without)))
    gold = any(p.scored for f in found.values() for p in f.values())
    heads = sorted({lab for f in found.values() for lab in f if len(f) > 1})
    choices = (["lowest AER"] if gold else []) + heads
    pick = url_choice(
        st.selectbox,
        "head",
        t("compare.head_shown"),
        choices,
        key="cmp-head",
        format_func=lambda h: t("compare.lowest_aer") if h == "lowest AER" else h,
    )
    shown = {n: f.get(pick) or state.best(f) for n, f in found.items()}
    drawn = [p.drawn([short(titles[n]), p.label]) for n, p in shown.items()]
    html_chart(alignment_grid_html(drawn), "cmp-all", lambda: alignment_grid(drawn))
    for n, p in shown.items():
        st.caption(f"{caption(p)} · {titles[n]}")
    data_table(  # AER per model (rows) and head (columns); "–" where there is no AER
        [
            {
                t("compare.col_model"): titles[n],
                t("compare.col_from"): next(iter(f.values())).reading,
            }
            | {p.label: p.scored.aer if p.scored else None for p in f.values()}
            for n, f in found.items()
        ],
    )
    st.caption(t("compare.aer_gold" if gold else "compare.aer_no_gold"))
    return {n: p.trace for n, p in shown.items()}


def two(text: str):
    """Two models (or one with two attentions) on the same axes, and their difference."""
    names = list(titles)
    picked = []
    for col, side, default in zip(st.columns(2), "AB", (0, len(names) - 1), strict=True):
        with col:
            which = t("compare.model", side=side)
            kw = dict(default=default, format_func=titles.get, key=f"cmp-{side}")
            # The attention and knobs of this model, not the next.
            own = (f"{side.lower()}_attend", f"{side.lower()}_hp", f"{side.lower()}_head")
            name = url_choice(st.selectbox, side.lower(), which, names, resets=own, **kw)
            card, key, knobs = models.card(name), f"cmp-{side}-{name}", Knobs(own[1])
            chosen = options(card.options, key, knobs) | attention(card, key, side.lower(), knobs)
            knobs.sync()
            picked.append((name, chosen))
    (name_a, options_a), (name_b, options_b) = picked
    with friendly_errors(t("compare.what")):
        a_all = state.panels(name_a, text, options_a)
        axes = next(iter(a_all.values())).alignment.target
        b_all = state.panels(name_b, text, options_b, target=axes)
    warn([a_all, b_all])
    shown = []
    for col, side, found in zip(st.columns(2), "AB", (a_all, b_all), strict=True):
        heads, label = list(found), t("compare.head_of", side=side)
        start = heads.index(state.best(found).label)  # the link's, else the lowest AER
        kw = dict(key=f"cmp-head-{side}", default=start)
        pick = url_choice(col.selectbox, f"{side.lower()}_head", label, heads, **kw)
        shown.append(found[pick])
    drawn = [p.drawn([f"{s}: {titles[p.name]}", p.label]) for s, p in zip("AB", shown, strict=True)]
    both = alignment_grid_html(drawn, columns=2)
    html_chart(both, "cmp-two", lambda: alignment_grid(drawn, columns=2))
    for col, side, p in zip(st.columns(2), "AB", shown, strict=True):
        col.caption(f"{side}: {caption(p)}")
    a, b = (p.alignment for p in shown)
    exported = {f"{side}-{p.name}": p.trace for side, p in zip("AB", shown, strict=True)}
    if a.source != b.source or a.target != b.target:
        st.info(t("compare.different_tokens"))
        return exported
    delta, title = a.weights - b.weights, "α_A − α_B"
    diff = [dict(weights=delta, src=a.source, tgt=a.target, title=[title])]
    grid = alignment_grid_html(diff, scale=palette("diverging"), columns=2, zmin=-1, value="Δα")
    html_chart(grid, "cmp-diff", lambda: difference_figure(delta, a.source, a.target, title=title))
    st.caption(t("compare.difference_caption"))
    return exported


SECTIONS = {"every": every, "two": two}


@fragment
def body():
    """Input, view, figures, link and downloads: an edit here reruns this part only."""
    with controls("input"):
        examples = [e.input for e in cards[0].examples]
        label = t("compare.input", limits=engine_text(cards[0].limits.describe()))
        gate = dict(
            limits=card_limits(*(c.limits for c in cards)),
            unit=engine_text(cards[0].limits.token_unit),
            ends=char_ends if task == "dates" else word_ends,
        )
        args = (examples, f"cmp-{task}", t("compare.example"), label, st.text_area)
        text = example_and_text(*args, **gate)
    if text is None:
        return  # over a limit: the box has said so; nothing runs on it
    shown = url_choice(
        st.segmented_control,
        "mode",
        t("compare.show"),
        list(SECTIONS),
        key="cmp-mode",
        required=True,
        format_func=lambda m: t(f"compare.section_{m}"),
    )
    drawn = SECTIONS[shown](text)  # every model's Trace on screen, exported side by side
    page_bottom(f"compare-{task}", drawn)  # here, so the link and the bundle follow every edit


body()
