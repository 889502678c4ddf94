"""Alignment studio: RNNsearch (Bahdanau, Cho & Bengio 2014) translating, with its soft alignment.

Widgets → one cached translation (a Trace) → one section at a time. A section is a function
below, keyed in SECTIONS by its one id: the widget's value, ``?section=`` in a link (lesson
decks use them) and the locale key ``alignment.section_<id>``. The alignment map is
[1, 1, target steps, source words].
"""

import numpy as np
import streamlit as st
from kit import (
    answer_heading,
    chart,
    controls,
    engine_text,
    fragment,
    friendly_errors,
    html_chart,
    md_escape,
    page_bottom,
    page_top,
    t,
    url_choice,
    url_default,
    url_number,
    url_sync,
)
from kit.errors import halt
from kit.presenter import notes
from kit.reveal import page_toggle
from kit.textbox import card_limits, gated_text
from sections.alignment import measured_table, soft_alignment, without_attention
from sections.bertviz_view import render
from sections.faithfulness import draw_nmt
from state import faithfulness as faithful
from state import live as live_runs
from state import nmt as state
from state import nmt_training as learning
from studios.alignment_coverage import coverage_panel, vocabulary
from views.alignment import (
    additive_parts_figure,
    alignment_figure,
    alignment_grid,
    steps_animation,
    vector_strip,
)
from views.alignment_html import alignment_grid_html, vector_strip_html
from views.bertviz_view import head_view_html
from views.timeline import curves_figure

from engine.errors import InputError

TASKS = ("en-fr", "dates")
BEAMS = (1, 5, 10)  # the beam widths "Side by side" compares


def choose_model(task: str):
    """The model's card; every shipped checkpoint of the task is offered, none is named here."""
    cards = {c.name: c for c in state.cards(task)}
    if not cards:
        st.info(t("alignment.no_model", task=task))
        halt()
    names = list(cards)
    return cards[
        url_choice(
            st.selectbox,
            "model",
            t("alignment.model"),
            names,
            default=names.index(state.default(task)),
            resets=("tstep",),  # another model saved other steps
            format_func=lambda n: engine_text(cards[n].title),
            key=f"nmt-model-{task}",
        )
    ]


def text_key(task: str) -> str:
    return f"nmt-text-{task}"


def input_text(card) -> str | None:
    """The text box; what was typed survives reruns and visits to other pages. None when
    the text is over the card's limits (the box has said so and offered the cut)."""
    task = card.task
    key, saved = text_key(task), f"nmt-saved-{task}"
    examples = {e.label: e.input for e in card.examples}

    def use_example():
        st.session_state[key] = examples[st.session_state[f"nmt-example-{task}"]]

    def draw():
        pair, sentence = state.draw_sentence()
        st.session_state.setdefault("nmt-drawn", []).append(pair)
        st.session_state[key] = sentence

    if key not in st.session_state:
        fallback = st.session_state.get(saved, next(iter(examples.values())))
        st.session_state[key] = url_default("text", fallback)
    c1, c2 = st.columns([2, 1])  # the button's label whole at 1024 px, sidebar open
    c1.selectbox(
        t("alignment.example"),
        list(examples),
        key=f"nmt-example-{task}",
        on_change=use_example,
        format_func=engine_text,
    )
    if task == "en-fr":
        c2.button(t("alignment.draw"), on_click=draw, help=t("alignment.draw_help"), key="nmt-draw")
    label = t("alignment.input", limits=engine_text(card.limits.describe()))
    unit = engine_text(card.limits.token_unit)
    limits = card_limits(card.limits)
    text = gated_text(st.text_area, label, key=key, limits=limits, unit=unit, height=90)
    if text is not None:
        st.session_state[saved] = text
    url_sync(text=text)
    return text


# ---- the sections: each draws from the one Trace of the page's input --------------------


def alignment(card, trace, text: str, beam: int) -> None:
    """α_ij, scored on the grammar's gold links when the sentence has them."""
    en_fr = card.task == "en-fr"
    drawn = st.session_state.get("nmt-drawn", [])
    scored = state.on_gold(card.name, trace, drawn) if en_fr else None
    soft_alignment(trace.maps["alignment"], trace.inputs["tokens"], scored, gold_expected=en_fr)


def steps(card, trace, text: str, beam: int) -> None:
    """The decoding at one step (one slider: the bars, the words and the vectors), with the
    whole decoding behind the figure's play button; then inside the score at that step."""
    st.header(t("alignment.steps_header"))
    at_step(card, trace)


# Moving the step slider reruns only this part.
@fragment
def at_step(card, trace) -> None:
    alpha, src = trace.maps["alignment"].weights[0, 0], trace.inputs["tokens"]
    words = trace.outputs["steps"]
    i = url_number(st.slider, "step", t("alignment.step_i"), 1, len(words), 1, key="nmt-step") - 1
    chart(steps_animation(alpha, src, words, start=i), key="nmt-anim")
    top = np.argsort(alpha[i])[::-1][:3]
    most = ", ".join(f"“{md_escape(src[j])}” ({alpha[i, j]:.2f})" for j in top)
    st.markdown(t("alignment.step_text", i=i + 1, word=md_escape(words[i]), most=most))
    v = trace.vectors
    c1, c2 = st.columns(2)
    with c1:
        strip(v["contexts"][i], t("alignment.context"), "c_i", "nmt-ctx")
    with c2:
        strip(v["states"][i], t("alignment.state"), "s_{i−1}", "nmt-state")
    st.header(t("alignment.inside_header"))
    if "tanh" not in v:
        st.info(t("alignment.no_parts", title=engine_text(card.title)))
        strip(v["e"][i], t("alignment.e_at", i=i + 1), "e", "nmt-e")
        return
    strip(v["W_a s"][i], t("alignment.was_at", i=i + 1), "W_a s", "nmt-was")
    chart(additive_parts_figure(v, alpha[i], src, i), key="nmt-parts")
    st.caption(t("alignment.parts_caption"))


def strip(v, title: str, name: str, key: str) -> None:
    """A vector as an HTML strip on screen, its Plotly twin in the export bundle."""
    html_chart(vector_strip_html(v, title, name), key, lambda: vector_strip(v, title, name))


def _panel(trace, title: list[str]) -> dict:
    """A translation's α as a panel of the one alignment grid (every word labelled)."""
    a = trace.maps["alignment"]
    return dict(
        weights=a.weights[0, 0], src=trace.inputs["tokens"], tgt=a.query_labels, title=title
    )


# Switching between the two comparisons redraws this section only.
@fragment
def side_by_side(card, trace, text: str, beam: int) -> None:
    """This sentence through every scoring function, or through several beam widths: the
    translations, then their α in one grid (panels never narrower than a readable map)."""
    st.header(t("alignment.section_side-by-side"))
    what = url_choice(
        st.segmented_control,
        "compare",
        t("alignment.compare"),
        ["scoring", "beams"],
        required=True,
        format_func=lambda s: t(f"alignment.{s}"),
        key="nmt-compare",
    )
    lines, panels = [], []
    with friendly_errors(t("alignment.compare_what")):
        if what == "beams":
            for b in BEAMS:
                tr = state.translate(card.name, text, b)
                said = md_escape(tr.outputs["translation"])
                logp = f"log p = {tr.outputs['log_prob']:.2f}"
                lines.append(f"- **{t('alignment.beam_n', b=b)}** ({logp}): {said}")
                panels.append(_panel(tr, [t("alignment.beam_n", b=b)]))
        else:  # only models with attention have an α to compare
            for other in [c for c in state.cards(card.task) if c.aligns] or [card]:
                tr = state.translate(other.name, text, beam)
                steps = t(
                    "alignment.training_steps", n=state.train_record(other.name).get("steps", "?")
                )
                said = md_escape(tr.outputs["translation"])
                lines.append(f"- **{engine_text(other.title)}** ({steps}): {said}")
                panels.append(_panel(tr, [other.variant]))
    # presenting, the translations after the maps: above them, the maps began at the foot
    # of a projector's first screen
    notes("nmt-side").markdown("\n".join(lines))
    if panels:
        key = f"nmt-{what}"
        html_chart(alignment_grid_html(panels), key, lambda: alignment_grid(panels))


def head_view(card, trace, text: str, beam: int) -> None:
    """bertviz's head view of the decoder's cross-attention, rendered offline."""
    st.header(t("alignment.head_view_header"))
    st.caption(t("alignment.head_view_caption"))
    a, src = trace.maps["alignment"], trace.inputs["tokens"]
    with friendly_errors(t("alignment.head_view_what")):
        html = head_view_html(
            cross_attention=a.weights, encoder_tokens=src, decoder_tokens=list(a.query_labels)
        )
        render(html, height=max(400, 40 + 24 * max(len(src), len(a.query_labels))))


def faithfulness(card, trace, text: str, beam: int) -> None:
    """Is α faithful? α beside erasing each source word, for every word of this translation."""
    st.header(t("alignment.section_faithfulness"))
    with friendly_errors(t("faithfulness.what_nmt")):
        meter = faithful.nmt(card.name, trace)
    draw_nmt(meter, "nmt-faithfulness")


def measured(card, trace, text: str, beam: int) -> None:
    """What the shipped evaluation measured on the test split, for every model of the task."""
    measured_table(state.measured(card.task), card.evaluate_command)


# ---- how α came to be: the shipped timeline, and a model trained now ------------------


def training(card, trace, text: str, beam: int) -> None:
    """The checkpoint's training timeline: a probe's α at a saved step beside the metric
    curves. A missing or damaged timeline is the engine's message; the rest of the page
    keeps showing the finished model."""
    st.header(t("alignment.training_header"))
    try:
        tl = learning.timeline(card.name)
    except InputError as exc:
        st.info(engine_text(exc, markdown=True))
        return
    if not card.aligns:
        st.info(t("alignment.timeline_no_map"))
    timeline_view(tl, f"nmt-tl-{card.name}", "tstep")


# A step-slider move reruns only this part, from the timeline already in memory.
@fragment
def timeline_view(tl, key: str, param: str | None = None) -> None:
    texts = [probe.inputs["text"] for probe in tl.probes[0]]
    c1, c2 = st.columns([2, 3])
    which, when = t("alignment.probe"), t("alignment.training_step")
    kw, last = dict(key=f"{key}-probe", format_func=texts.__getitem__), len(tl.steps) - 1
    if param is None:  # a live run's film: not in a link, which opens the shipped timeline
        j = c1.selectbox(which, range(len(texts)), **kw)
        step = c2.select_slider(when, tl.steps, tl.steps[last], key=f"{key}-step")
    else:
        j = url_choice(c1.selectbox, "probe", which, list(range(len(texts))), **kw)
        hint = t("alignment.training_step_help", n=last + 1)
        kw = dict(key=f"{key}-step", default=last, help=hint)
        step = url_choice(c2.select_slider, param, when, tl.steps, **kw)
    show_step(tl, tl.at(step), j, key)
    facts = dict(n=tl.meta.get("held_out", 0), command=tl.meta.get("command", ""))
    st.caption(t("alignment.timeline_caption", **facts))


def show_step(tl, i: int, j: int, key: str) -> None:
    """Probe ``j``'s α at saved step ``i`` (the page's heatmap) beside the curves, the step
    marked; a model without attention has curves only."""
    probe = tl.probes[i][j]
    amap = probe.maps.get("alignment")
    left, right = st.columns([3, 2]) if amap is not None else (None, st.container())
    if amap is not None:
        title = t("alignment.timeline_title", step=tl.steps[i])
        fig = alignment_figure(
            amap.weights[0, 0], amap.key_labels, amap.query_labels, title=title, flags=amap.flags
        )
        chart(fig, f"{key}-map", left, share=0.6)
    out = probe.outputs.get("translation") or t("alignment.nothing")
    where = left if left is not None else right  # body text, as Memory's: a projector shows it
    where.markdown(t("alignment.timeline_output", step=tl.steps[i], text=md_escape(out)))
    panels = learning.curve_panels(tl)
    fig = curves_figure(panels, tl.steps[i], (), t("alignment.training_step"), 150)
    chart(fig, f"{key}-curves", right, share=0.4 if amap is not None else None)
    right.caption(learning.metrics_at(tl, i))


@fragment
def live(card, trace, text: str, beam: int) -> None:
    """Train it now: a fresh tiny model for at most a minute, its α and loss streamed."""
    st.header(t("alignment.live_header"))
    c1, c2 = st.columns(2)
    task = c1.radio(
        t("alignment.task"),
        learning.LIVE_TASKS,
        key="nmt-live-task",
        horizontal=True,
        format_func=lambda s: t(f"alignment.task_{s}"),
    )
    lo, hi = learning.SEEDS
    seed = url_number(
        c2.number_input,
        "seed",
        t("alignment.live_seed", lo=lo, hi=hi),
        lo,
        hi,
        0,
        key="nmt-live-seed",
    )
    facts = dict(steps=learning.live_card(task).live_steps, seconds=int(learning.LIVE_SECONDS))
    st.caption(t("alignment.live_caption", slots=learning.LIVE_SLOTS, **facts))
    if st.button(t("alignment.live_train"), type="primary", key="nmt-live-train"):
        request(task, int(seed))
    stream(st.session_state.get("nmt-live"))
    result = st.session_state.get("nmt-live-result")
    if result is not None:
        film(*result)


def request(task: str, seed: int) -> None:
    """A new live run, unless one of this session's is still running (that one goes on)."""
    running = st.session_state.get("nmt-live")
    if running is not None and running != (task, seed):
        st.info(
            t("alignment.live_running", task=t(f"alignment.task_{running[0]}"), seed=running[1])
        )
        return
    if st.session_state.get("nmt-live-film-of") != (task, seed):  # the same run keeps its film
        st.session_state["nmt-live-film"] = live_runs.Film(learning.live_card(task).name)
        st.session_state["nmt-live-film-of"] = (task, seed)
    st.session_state["nmt-live"] = (task, seed)
    st.session_state.pop("nmt-live-result", None)


def stream(running: tuple[str, int] | None) -> None:
    """Run the request through the queue, drawing each new snapshot as it comes (with none,
    the running film's place stays, empty)."""
    if running is None:
        live_runs.idle()
        return
    so_far = st.session_state["nmt-live-film"]

    def draw(area, version: int) -> None:
        tl = so_far.so_far()
        with area.container():
            show_step(tl, len(tl.steps) - 1, 0, f"nmt-live-{version}")

    busy = t("alignment.live_busy", n=learning.LIVE_SLOTS)
    tl = live_runs.stream(
        lambda watch: learning.train_live(*running, so_far, watch), so_far.latest, draw, busy
    )
    del st.session_state["nmt-live"]
    if tl is not None:
        st.session_state["nmt-live-result"] = (running, tl)


def film(running: tuple[str, int], tl) -> None:
    """A finished (or stopped) live run: its own step slider, map and curves."""
    stopped = tl.meta.get("stopped")
    if stopped:
        st.info(t(f"alignment.live_stopped_{stopped}", step=tl.steps[-1]))
    timeline_view(tl, "nmt-live-film")
    st.caption(live_runs.same_run("alignment", tl.meta, tl.steps[-1]))


SECTIONS = {
    "alignment": alignment,
    "steps": steps,
    "side-by-side": side_by_side,
    "head-view": head_view,
    "faithfulness": faithfulness,
    "measured": measured,
    "vocabulary": vocabulary,
    "training": training,
    "live": live,
}


# Input, translation, section, link and downloads: an edit here reruns this part only (the
# title, the task and the model stay as drawn).
@fragment
def body(card) -> None:
    with controls("input"):
        text = input_text(card)
        beam = next(p for p in card.options if p.name == "beam")
        beam = url_number(
            st.slider,
            "beam",
            t("alignment.beam", lo=beam.low, hi=beam.high),
            beam.low,
            beam.high,
            beam.default,
            key="nmt-beam",
        )
    if text is None:
        return  # over a limit: nothing runs on it, the controls above stay
    # Presenting, the notes on the input go below the figure: the map comes first.
    coverage = notes("coverage")
    if card.task == "en-fr":  # before the models read it: what the grammar knows of it
        with coverage:
            coverage_panel(text, text_key(card.task))
    with friendly_errors(t("alignment.what")):
        trace = state.translate(card.name, text, beam)
    answer_heading(trace, md_escape(trace.outputs["translation"]))
    if trace.outputs["unknown"]:
        words = ", ".join(f"“{md_escape(w)}”" for w in trace.outputs["unknown"])
        coverage.warning(t("alignment.unknown", words=words))
    summary(card, trace, beam)
    shown = url_choice(
        st.segmented_control,
        "section",
        t("alignment.show"),
        [s for s in SECTIONS if card.task == "en-fr" or SECTIONS[s] is not vocabulary],
        required=True,
        format_func=lambda s: t(f"alignment.section_{s}"),
        key="nmt-section",
    )
    draw = SECTIONS[shown]
    own = draw in (measured, vocabulary, training, live)  # no map of the typed sentence
    page_toggle("alignment", trace.maps.get("alignment"), when=not own)
    if own or card.aligns:
        draw(card, trace, text, beam)
    else:
        without_attention(state.measured(card.task), t("alignment.no_alignment"), "nmt-bleu")
    page_bottom(f"alignment-{card.name}", trace)


def summary(card, trace, beam: int) -> None:
    """The model, the decoding, its time, and how the checkpoint was trained."""
    rec = state.train_record(card.name)
    st.caption(
        t(
            "alignment.summary",
            title=engine_text(card.title),
            beam=beam,
            ms=f"{trace.timings['translate_ms']:.0f}",
            steps=rec.get("steps", "?"),
            batch=rec.get("batch", "?"),
            cpu=rec.get("cpu_s", "?"),
            command=rec["command"],
        )
    )


page_top("alignment")
st.title(t("alignment.title"))
st.caption(t("alignment.caption"))
with controls():
    task = url_choice(
        st.radio,
        "task",
        t("alignment.task"),
        TASKS,
        resets=("model", "text", "step", "tstep"),
        horizontal=True,
        format_func=lambda s: t(f"alignment.task_{s}"),
        key="nmt-task",
    )
    chosen = choose_model(task)
body(chosen)
