"""Variants lab: every efficient attention variant on the same input, side by side."""

import json

import streamlit as st
from kit import (
    chart,
    controls,
    data_table,
    fragment,
    friendly_errors,
    html_chart,
    notes,
    page_bottom,
    page_top,
    t,
    table_exports,
    url_choice,
    url_number,
)
from kit.errors import halt
from kit.i18n import engine_text, variant_title
from kit.knobs import Knobs
from kit.textbox import subword_gate
from kit.url import names as url_names
from kit.url import url_text
from sections import claims as claims_section
from sections import variants as var_sections
from sections.variants import profile  # the Cost profile section, whole
from sections.variants_quality import quality  # the Quality section, whole
from state import variants as state
from studios.variants_inputs import EXAMPLE, param_widgets, pick_variants, source_widgets
from views import variants as figs
from views.heatmap import map_figure, map_grid
from views.variants_html import map_grid_html

from engine import kernels
from engine.models import in_pretrained
from engine.variants import REGISTRY
from engine.variants import int8 as int8_lib

DEFAULT_PICK = ["linformer", "performer", "longformer", "reformer", "bigbird", "mamba"]
VIEWS = ["maps", "difference", "overlay"]  # the Compare maps: as they are, Δ, what is seen


def without_full(raw: str) -> list[str]:
    """``?variants=`` without "full", which Compare always draws as the reference."""
    return [v for v in url_names(raw) if v != "full"]


def compare() -> None:

    with controls():
        chosen = source_widgets()
        picked = pick_variants(list(REGISTRY), DEFAULT_PICK, without_full, "var-picked")
    if chosen is None:  # an upload is awaited
        return
    n, defaults = chosen.pop("n_for_defaults"), chosen.pop("defaults", {})
    params, knobs = {}, Knobs("hp")
    with st.expander(t("variants.hyper"), expanded=bool(knobs.linked)):  # a link's: shown
        for name in picked:
            if REGISTRY[name].params:
                # Budgets sized for n: a new length starts from its own defaults.
                where = chosen["source"] + (str(n) if defaults else "")
                params[name] = param_widgets(REGISTRY[name], n, where, knobs, defaults.get(name))
    knobs.sync()
    with st.spinner(t("variants.running")):
        traces, rows = state.compare(
            names=tuple(picked), params_json=json.dumps(params, sort_keys=True), **chosen
        )
    compare_maps(traces, picked)
    st.subheader(t("variants.error_header"))
    st.caption(t("variants.error_caption"))
    data_table(figs.error_rows(rows))
    table_exports(rows, "variants-errors")


# Head and view rerun only the maps: the variants have run and the table stays.
@fragment
def compare_maps(traces: dict, picked: list[str]) -> None:

    n_heads = traces[state.FULL].maps["attention"].shape[1]
    with controls("maps"):
        head = var_sections.pick(st.number_input, "head", n_heads, 0, key="var-head")
        view = url_choice(
            st.radio,
            "view",
            t("variants.show"),
            VIEWS,
            key="var-view",
            horizontal=True,
            format_func=lambda v: t(f"variants.view_{v}"),
        )
    shown = [n for n in ([state.FULL, *picked] if view == "maps" else picked) if n in traces]
    panels, no_pattern = state.compare_panels(traces, shown, view, head)
    for name in no_pattern:
        st.info(t("variants.no_pattern", name=variant_title(REGISTRY[name])))
    if refused := [variant_title(REGISTRY[n]) for n in picked if n not in traces]:
        st.info(t("variants.not_drawn", names=t("variants_verdict.diff_join").join(refused)))
    if panels:  # overlay: hidden cells are blank, so the grey behind them shows
        var_sections.draw_maps(panels, "maps", view)
    said = dict.fromkeys(traces[name].maps["attention"].note for name in shown)
    st.caption(" · ".join(figs.data_text(engine_text(n)) for n in said if n))


def swap() -> None:
    notes("swap-intro").markdown(t("variants.swap_intro"))
    with controls():
        label = t("variants.swap_text", n=state.SWAP_MAX_TOKENS)
        gate = subword_gate(state.minilm().tokenizer, state.SWAP_MAX_TOKENS)
        text = url_text(st.text_area, label, EXAMPLE, key="swap-text", **gate)
        names = list(in_pretrained.SWAPPABLE)
        picked = pick_variants(names, names, url_names, "swap-picked")
    if text is None:
        return  # over the limit: the box has said so; the picker above stays
    if not picked:  # a cleared picker: nothing to swap in, nor a view to link (no link)
        st.info(t("variants.swap_none"))
        halt()
    n = state.swap_tokens(text)
    defaults = in_pretrained.default_budgets(max(n, 1))
    budgets, knobs = {}, Knobs("hp")
    with st.expander(t("variants.swap_budgets"), expanded=bool(knobs.linked)):
        st.caption(t("variants.swap_budgets_caption", n=n))
        for name in picked:
            if (spec := REGISTRY[name]).params:
                budgets[name] = param_widgets(spec, n, f"swap-{n}", knobs, defaults.get(name))
    knobs.sync()
    with st.spinner(t("variants.swap_running")):
        res = state.swap(text, tuple(picked), json.dumps(budgets, sort_keys=True))
    results = res["results"]
    exact = [variant_title(REGISTRY[v]) for v, r in results.items() if r.exact]
    with notes("swap-table"):  # presenting: after the charts and maps
        st.markdown(t("variants.swap_exact", names=", ".join(exact) or "—", n=res["n"]))
        rows = state.swap_rows(results)
        data_table(rows)
        st.caption(t("variants.swap_caption"))
        table_exports(rows, "variants-minilm-swap")
    c1, c2 = st.columns(2)
    cosine = figs.cosine_figure({n: r.cosine for n, r in results.items()})
    chart(cosine, "swap-cosine", c1, share=0.5)
    errors = {name: r.layer_errors for name, r in results.items()}
    chart(figs.layer_error_figure(errors), key="swap-errors", where=c2, share=0.5)
    swap_maps(res)


@fragment
def swap_maps(res: dict) -> None:
    original = res["original_maps"]
    n_layers, n_heads = original.shape[:2]
    with controls("swap-maps"):
        c1, c2 = st.columns(2)
        layer = var_sections.pick(c1.number_input, "layer", n_layers, 0, key="swap-layer")
        head = var_sections.pick(c2.number_input, "head", n_heads, 0, key="swap-head")
    panels = state.swap_panels(res, int(layer), int(head))
    html_chart(map_grid_html(panels), "swap-maps", lambda: map_grid(panels))


def long() -> None:
    st.markdown(t("variants.long_intro"))
    c1, c2, c3 = st.columns(3)
    n = url_choice(
        c1.select_slider,
        "n",
        t("variants.long_n", lo=state.LONG_LENGTHS[0], hi=state.LONG_LENGTHS[-1]),
        state.LONG_LENGTHS,
        default=5,
        key="long-n",
    )
    structure = url_choice(
        c2.selectbox,
        "structure",
        t("variants.long_structure"),
        ["local", "random"],
        format_func=lambda s: t(f"variants.structure_{s}"),
        key="long-structure",
    )
    reduce = url_choice(
        c3.selectbox,
        "pool",
        t("variants.long_pool"),
        ["mean", "max"],
        format_func=lambda r: t(f"variants.pool_{r}"),
        key="long-reduce",
    )
    with st.spinner(t("variants.long_running")):
        amap, stats = state.long_map(int(n), structure, reduce)
    st.markdown(t("variants.long_stats", **stats))
    title = t("variants.long_title", n=n)
    chart(map_figure(amap, 0, title=title, value_name=f"{reduce} p"), key="pooled")


def kv() -> None:
    limit = state.kv_length_limit()
    st.markdown(t("variants.kv_intro", **state.kv_layer()))
    n = url_number(st.slider, "n", t("variants.kv_tokens", n=limit), 16, limit, 256, key="kv-n")
    with st.spinner(t("variants.kv_running")):
        res, rows = state.kv_compare(int(n))
    c1, c2, c3 = st.columns(3)
    c1.metric(t("variants.kv_speedup"), f"{res['speedup']:.1f}×")
    c2.metric(t("variants.kv_with"), f"{res['total_cache_s']:.3f} s")
    c3.metric(t("variants.kv_without"), f"{res['total_no_cache_s']:.3f} s")
    diffs = (res["max_abs_diff_cache_vs_full"], res["max_abs_diff_no_cache_vs_full"])
    st.caption(t("variants.kv_diff", cache=f"{diffs[0]:.1e}", no_cache=f"{diffs[1]:.1e}"))
    chart(figs.per_token_figure(res), key="kv-chart")
    table_exports(rows, "variants-kv-cache")


def int8() -> None:
    notes("int8-intro").markdown(t("variants.int8_intro"))
    with controls("int8"):
        c1, c2, c3, c4 = st.columns(4)
        n_, d_, bias = int8_lib.LENGTH, int8_lib.HEAD_SIZE, int8_lib.BIAS
        label = t("variants.int8_n", lo=n_.low, hi=n_.high)
        kw = dict(key="int8-n", step=16)
        n = url_number(c1.number_input, "n", label, n_.low, n_.high, n_.default, **kw)
        sizes, label = list(int8_lib.HEAD_SIZES), t("variants.head_size_d")
        kw = dict(default=sizes.index(d_.default), key="int8-d")
        d = url_choice(c2.selectbox, "d", label, sizes, **kw)
        label = t("variants.int8_bias", lo=bias.low, hi=bias.high)
        kw = dict(key="int8-bias", cast=float)
        outlier = url_number(c3.slider, "bias", label, bias.low, bias.high, bias.default, **kw)
        b = int8_lib.BLOCK
        label = t("variants.int8_block", lo=b.low, hi=b.high)
        kw = dict(key="int8-block")
        block = url_number(c4.number_input, "block", label, b.low, b.high, b.default, **kw)
    sweep = state.int8_sweep(int(n), int(d), int(block), 0)
    chart(figs.int8_figure(sweep, float(outlier)), key="int8-chart")
    rows = state.int8_rows(int(n), int(d), float(outlier), int(block), 0)
    data_table(rows)
    table_exports(rows, "variants-int8")
    claims_section.show("int8")  # the seed's "+30 % speed, < 1 % accuracy loss", measured


# Section id (widget value = URL value = locale key suffix) → the function that draws it.
SECTIONS = {
    "compare": compare,
    "quality": quality,
    "swap": swap,
    "profile": profile,
    "long": long,
    "kv": kv,
    "int8": int8,
}


def draw(section: str) -> None:
    with friendly_errors(t(f"variants.what_{section}")):
        SECTIONS[section]()
    page_bottom(f"variants-{section}")


# Input, figures, link and downloads: an edit in a section reruns this part only. A click
# inside a fragment cannot interrupt a run in progress, so the two sections whose runs
# take seconds to minutes (the sweep's Stop, the long map's Cancel) run as the page.
in_place = fragment(draw)
PREEMPTIBLE = (profile, long)

page_top("variants")
st.title(t("variants.title"))
st.caption(t("variants.caption"))
st.caption(t("variants.kernel_path", path=kernels.active_path(kernels.default_device())))
# One section at a time, so a page load computes only what is on screen.
section = url_choice(
    st.segmented_control,
    "section",
    t("variants.section"),
    list(SECTIONS),
    key="variants-section",
    resets="*",  # a link's values belong to the section it was copied on
    format_func=lambda s: t(f"variants.section_{s}"),
)
(draw if SECTIONS[section] in PREEMPTIBLE else in_place)(section)
