"""Transformer studio: our encoder–decoder trained here, and pretrained HuggingFace models.

Widgets → one cached Trace → the section on screen. Every map is [layer, head, query, key].
"""

from dataclasses import dataclass

import streamlit as st
import views.bertviz_view as bv
from kit import (
    chart,
    controls,
    engine_text,
    flag,
    fragment,
    friendly_errors,
    notes,
    page_bottom,
    page_top,
    t,
    url_choice,
    url_default,
    url_sync,
)
from kit.i18n import Lazy, md_escape
from kit.reveal import page_toggle
from sections.bertviz_view import render
from sections.causal import draw_faithful
from sections.transformer import draw_ablation
from state import transformer as state
from studios import transformer_models
from views.heatmap import map_figure
from views.qk_map import dot_distance_figure, qk_scatter
from views.timeline import curves_figure
from views.transformer import head_grid, neuron_figure

from engine.errors import InputError
from engine.models.attentionviz import allowed_keys

KINDS = ("encoder_self", "decoder_self", "cross")


def kind_name(kind: str) -> str:
    return t(f"transformer.kind_{kind}") if kind in KINDS else kind


def drawn(trace) -> dict:
    """The trace's encoder, decoder and cross maps (a chat trace also carries its own)."""
    return {k: m for k, m in trace.maps.items() if k in KINDS} or trace.maps


@dataclass(frozen=True)
class Shown:
    """What the page picked, handed to the section on screen."""

    trace: object
    kind: str
    title: str  # the map's name, e.g. "cross-attention (decoder → encoder)"
    amap: object  # the map as read (merged, averaged or rolled out, sinks hidden)
    reading: str
    merge: bool
    hide: bool
    sinks: tuple
    family: str
    name: str  # the model's card

    @property
    def raw(self):
        """The map as the model returned it."""
        return self.trace.maps[self.kind]

    def vectors(self):
        """This map's (queries, keys) [L, H, T, d_k], or (None, None) when not returned."""
        v = self.trace.vectors
        return v.get(f"queries.{self.kind}"), v.get(f"keys.{self.kind}")


def layer_head(raw, shown=None) -> tuple[int, int]:
    """The layer and head every section looks at (one pair of widgets, kept across sections).

    ``shown``: the map the section draws, when a reading made it (rollout names its layers
    R1 …; the mean over heads and rollout have one head): the layer slider names its
    layers, and the head slider stands disabled, saying why, instead of moving over heads
    the figure does not show."""
    n_layers, n_heads = raw.shape[:2]
    shown = raw if shown is None or shown.shape[0] != n_layers else shown
    combined = shown.shape[1] == 1 < n_heads
    s1, s2 = st.columns(2)
    layer = url_choice(
        s1.select_slider,
        "layer",
        t("transformer.layer"),
        range(n_layers),
        key=f"layer-{n_layers}",
        format_func=shown.layer_labels.__getitem__,
    )
    head = url_choice(
        s2.select_slider,
        "head",
        t("transformer.head"),
        range(n_heads),
        key=f"head-{n_heads}",
        format_func=raw.head_labels.__getitem__,
        disabled=combined,
        help=_combined(shown) if combined else None,
    )
    return layer, head


def _combined(shown) -> str:
    each = t("transformer.reading_heads")
    return t("transformer.head_combined", reading=shown.head_labels[0], each=each)


def grid(s: Shown) -> None:
    """Layers × heads: every head as a thumbnail, and the chosen one enlarged."""
    chart(head_grid(s.amap, s.title), width="stretch", key="tr-grid")
    enlarged(s)


# Layer and head rerun only the enlarged head: the grid above stays as drawn.
@fragment
def enlarged(s: Shown) -> None:
    layer, head = layer_head(s.raw, s.amap)
    shown_head = head if s.amap.shape[1] == s.raw.shape[1] else 0
    layer = min(layer, s.amap.shape[0] - 1)
    chart(map_figure(s.amap, layer, shown_head), width="stretch", key="tr-head")
    if s.amap.note:
        st.caption(engine_text(s.amap.note, markdown=True))


@st.cache_data(max_entries=16, show_spinner=Lazy("transformer.spinner_bertviz"))
def bertviz_html(view: str, arguments: dict, layer: int) -> str:
    """``arguments`` are bertviz_view's keyword arguments (numpy weights and token lists)."""
    if view == "head":
        return bv.head_view_html(**arguments, layer=layer)
    return bv.model_view_html(**arguments)


def bertviz(s: Shown) -> None:
    """bertviz's head and model views, drawn from vendored JavaScript (nothing fetched)."""
    layer, _ = layer_head(s.raw)
    view = url_choice(
        st.radio,
        "view",
        t("transformer.bertviz_view"),
        ["head", "model"],
        key="bertviz-view",
        horizontal=True,
        format_func=lambda v: t(f"transformer.bertviz_{v}"),
    )
    one_map = len(drawn(s.trace)) == 1
    maps = {
        k: state.read_heads(m, "heads", s.merge, s.hide, s.sinks) if one_map else m
        for k, m in drawn(s.trace).items()
    }
    if not one_map and (s.merge or s.hide):
        st.caption(t("transformer.bertviz_raw"))
    n_tok = max(max(m.shape[2:]) for m in maps.values())
    height = min(2400, 200 + 24 * n_tok) if view == "head" else 160 + 140 * s.raw.shape[0]
    with friendly_errors(t("transformer.bertviz_what")):
        render(bertviz_html(view, bv.trace_arguments(maps), layer), height=height)
    st.caption(t("transformer.bertviz_caption"))


def neuron(s: Shown) -> None:
    """bertviz's neuron view: how one query's scores and weights come out of q and k."""
    raw, (q_all, k_all) = s.raw, s.vectors()
    if q_all is None:
        st.info(t("transformer.no_vectors"))
        return
    layer, head = layer_head(raw)
    i = url_choice(
        st.selectbox,
        "query",
        t("transformer.query_token"),
        range(raw.shape[2]),
        key="neuron-query",
        format_func=lambda j: f"{j}: {raw.query_labels[j]}",
    )
    mask = allowed_keys(s.kind, raw.shape[2], raw.shape[3])
    nv = state.neuron(q_all[layer, head, i], k_all[layer, head], None if mask is None else mask[i])
    chart(neuron_figure(nv, raw.query_labels[i], raw.key_labels), width="stretch", key="tr-neuron")
    where = f"{raw.layer_labels[layer]} · {raw.head_labels[head]}"
    st.caption(t("transformer.neuron_caption", where=where))


def qk(s: Shown) -> None:
    """AttentionViz (Yeh et al. 2023): one head's queries and keys in one 2-D embedding."""
    raw, (q_all, k_all) = s.raw, s.vectors()
    if q_all is None:
        st.info(t("transformer.no_vectors"))
        return
    layer, head = layer_head(raw)
    colour = url_choice(
        st.radio,
        "colour",
        t("transformer.colour_by"),
        ["position", "token"],
        key="qk-colour",
        horizontal=True,
        format_func=lambda c: t(f"transformer.colour_{c}"),
    )
    mask = allowed_keys(s.kind, raw.shape[2], raw.shape[3])
    with friendly_errors(t("transformer.qk_what")):
        emb = state.joint_embedding(q_all[layer, head], k_all[layer, head], mask, 0)
    title = f"{raw.layer_labels[layer]} · {raw.head_labels[head]} ({emb.method.upper()})"
    scatter = qk_scatter(emb, raw.query_labels, raw.key_labels, colour_by=colour, title=title)
    chart(scatter, width="stretch", key="tr-qk")
    chart(dot_distance_figure(emb, mask), width="stretch", key="tr-qk-r")
    st.caption(t("transformer.qk_caption"))


def training(s: Shown) -> None:
    """How this model's attention came to be (its shipped timeline): a probe sentence's
    maps of the chosen kind, every layer and head, at a saved training step, read as the
    page reads the finished model's; beside them the metrics against step, that step marked.
    A missing or damaged timeline is the engine's message; the other sections still work."""
    name = s.trace.model
    try:
        tl = state.timeline(name)
    except InputError as exc:
        st.info(engine_text(exc, markdown=True))
        return
    texts = [probe.inputs["text"] for probe in tl.probes[0]]
    c1, c2 = st.columns([2, 3])
    j = url_choice(
        c1.selectbox,
        "probe",
        t("transformer.probe"),
        range(len(texts)),
        key=f"tr-probe-{name}",
        format_func=texts.__getitem__,
    )
    step = url_choice(
        c2.select_slider,
        "step",
        t("transformer.step"),
        tl.steps,
        key=f"tr-step-{name}",
        default=len(tl.steps) - 1,
        help=t("transformer.step_help", n=len(tl.steps)),
    )
    i = tl.at(step)
    probe = tl.probes[i][j]
    with friendly_errors(t("transformer.reading_what")):
        amap = state.read_heads(probe.maps[s.kind], s.reading, s.merge, s.hide, s.sinks)
    title = t("transformer.timeline_title", kind=s.title, step=tl.steps[i])
    left, right = st.columns([3, 2])
    chart(head_grid(amap, title), "tr-timeline-map", left, share=0.6, width="stretch")
    output = probe.outputs["translation"] or t("transformer.nothing")
    left.markdown(t("transformer.timeline_output", step=tl.steps[i], text=output))  # projected
    panels = state.curve_panels(tl)
    fig = curves_figure(panels, tl.steps[i], state.marks(name, tl), t("transformer.step"), 150)
    chart(fig, "tr-timeline-curves", right, share=0.4, width="stretch")
    facts = dict(n=tl.meta.get("held_out", 0), command=tl.meta.get("command", ""))
    right.caption(t("transformer.timeline_caption", metrics=state.metrics_at(tl, i), **facts))
    if any(m.startswith("aer.") for m in tl.metrics):
        right.caption(t("transformer.timeline_caption_aer"))


def causal(s: Shown) -> None:
    """Does it matter? Each head removed alone (zero or mean ablation) on this input; for
    MiniLM, whether its attention ranks the input tokens as removing them does."""
    if not state.ablatable(s.name):
        st.info(t("transformer.causal_elsewhere"))
        return
    notes("tr-causal").markdown(t("transformer.causal_intro"))  # presenting: after the figure
    mode = url_choice(
        st.radio,
        "mode",
        t("causal.mode"),
        state.MODES,
        key="tr-mode",
        horizontal=True,
        format_func=lambda m: t(f"causal.mode_{m}"),
        help=t("causal.mode_help"),
    )
    with friendly_errors(t("transformer.causal_what")):
        found = state.ablate(s.name, s.trace.inputs["text"], mode)
    if found["stopped"]:
        st.info(t("transformer.causal_stopped"))
    amap = s.amap if s.amap.shape[1] == s.raw.shape[1] else s.raw  # the heads, as read
    draw_ablation(found, s.kind, s.title, amap, key="tr-ablation")
    if s.family != "ours":
        faithful(s)


def faithful(s: Shown) -> None:
    """MiniLM's faithfulness meter for one token of the input, the layer read chosen."""
    raw = s.raw
    tokens, n_layers = raw.query_labels, raw.shape[0]
    st.subheader(t("causal.check_faithful"))
    notes("tr-faithful").markdown(t("transformer.faithful_intro"))
    c1, c2 = st.columns(2)
    token = url_choice(
        c1.selectbox,
        "read",
        t("transformer.faithful_token"),
        range(len(tokens)),
        key="tr-faithful-token",
        default=min(1, len(tokens) - 1),  # the first word, after [CLS]
        format_func=lambda j: f"{j}: {tokens[j]}",
    )
    layer = url_choice(
        c2.select_slider,
        "layer",
        t("transformer.layer"),
        range(n_layers),
        key=f"layer-{n_layers}",
        format_func=raw.layer_labels.__getitem__,
    )
    if len(tokens) > state.FAITHFUL_LIMIT:
        st.info(t("transformer.faithful_too_long", n=len(tokens), limit=state.FAITHFUL_LIMIT))
        return
    with friendly_errors(t("transformer.causal_what")):
        found = state.faithful(s.name, s.trace.inputs["text"], token)
    ig = found.integrated  # None only when stopped: the meter then says so, not this
    error, steps = ("–", 0) if ig is None else (f"{float(ig.completeness_error):.3f}", ig.steps)
    facts = dict(
        value=f"{found.value:.2f}", error=error, steps=steps, seconds=f"{found.seconds:.1f}"
    )
    caption = t("transformer.faithful_caption", token=md_escape(found.output), **facts)
    draw_faithful(found, layer, caption, key="tr-faithful")


SECTIONS = {
    "grid": grid,
    "bertviz": bertviz,
    "neuron": neuron,
    "qk": qk,
    "training": training,
    "causal": causal,
}


# A section change, or a training-step move, reruns only this part: the model, its Trace
# and the map stay.
@fragment
def sections(shown: Shown) -> None:
    # One section on screen at a time: an edit redraws only what is visible. Only the
    # models trained here have a training timeline.
    names = [n for n, show in SECTIONS.items() if show is not training or shown.family == "ours"]
    section = url_choice(
        st.segmented_control,
        "section",
        t("transformer.section"),
        names,
        key="transformer-section",
        format_func=lambda s: t(f"transformer.section_{s}"),
    )
    SECTIONS[section](shown)


def reading_controls(trace, sinks) -> tuple[str, str, bool, bool]:
    """(map kind, reading, merge word pieces, hide sinks) as the user set them."""
    c1, c2 = st.columns([2, 3])
    kind = url_choice(
        c1.selectbox,
        "attention",
        t("transformer.attention"),
        list(drawn(trace)),
        key="attention",
        format_func=kind_name,
    )
    reading = url_choice(
        c2.radio,
        "reading",
        t("transformer.read_heads"),
        state.READINGS if kind != "cross" else state.READINGS[:2],  # rollout: self only
        key="reading",
        horizontal=True,
        format_func=lambda r: t(f"transformer.reading_{r}"),
        help=t("transformer.read_heads_help"),
    )
    # One toggle a row: side by side, "隐藏 [CLS] / [SEP] 注意力汇聚点" was cut at 1024 px.
    merge = st.toggle(
        t("transformer.merge"),
        url_default("merge", False, flag, key="merge"),
        help=t("transformer.merge_help"),
        key="merge",
    )
    hide = st.toggle(
        t("transformer.hide", sinks=" / ".join(sinks)),
        url_default("hide", False, flag, key="hide-sinks"),
        help=t("transformer.hide_help"),
        key="hide-sinks",
    )
    url_sync(merge=merge, hide=hide)
    return kind, reading, merge, hide


PICKERS = {"ours": transformer_models.ours, "pretrained": transformer_models.pretrained}

page_top("transformer")
st.title(t("transformer.title"))
st.caption(t("transformer.caption"))
state.umap_warm_up()

with controls():
    family = url_choice(
        st.radio,
        "family",
        t("transformer.family"),
        list(PICKERS),
        key="family",
        horizontal=True,
        format_func=lambda f: t(f"transformer.{f}"),
        resets=("model", "text", "example"),  # the link's model was the other family's
    )
    trace, sinks, name, told = PICKERS[family]()
    kind, reading, merge, hide = reading_controls(trace, sinks)
transformer_models.say(told)
with friendly_errors(t("transformer.reading_what")):
    amap = state.read_heads(trace.maps[kind], reading, merge, hide, sinks)

page_toggle("transformer", amap)
sections(
    Shown(trace, kind, kind_name(kind), amap, reading, merge, hide, tuple(sinks), family, name)
)
page_bottom(f"transformer-{trace.model}", trace)
