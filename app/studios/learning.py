"""Watch attention learn: the induction-head phase change (Olsson et al. 2022), step by step.

The shipped timelines of a two-layer attention-only Transformer and its one-layer control
(``python -m engine.train induction``): a step slider, the probe's head maps at that step,
and the curves (loss, in-context learning, previous-token, induction, K-composition) with
the step and the phase-change window marked. A lesson step asks first whether the loss
will fall smoothly. A slider move reruns only the fragment below it, from arrays in memory.
"""

import streamlit as st
from kit import (
    chart,
    engine_text,
    fragment,
    md_escape,
    page_bottom,
    page_top,
    t,
    url_choice,
    url_number,
)
from kit.errors import friendly_errors, halt
from kit.presenter import notes
from kit.textbox import card_limits, word_ends
from kit.url import url_text
from state import learning as state
from state import live as live_runs
from state import models
from views import learning as figs

from engine.errors import InputError

GUESSES = ("smooth", "sudden", "never")


def timelines() -> dict[int, dict]:
    """Every timeline that loads; a short message for each that does not."""
    found = {}
    for n_layers in state.LAYERS:
        try:
            found[n_layers] = state.timeline(n_layers)
        except InputError as exc:
            st.info(engine_text(exc, markdown=True))
    return found


def _reveal(value: bool) -> None:
    st.session_state["learn-revealed"] = value


def lesson(tl: dict) -> bool:
    """Predict, then reveal: will the loss fall smoothly? True once revealed."""
    with st.container(border=True):
        st.markdown(f"**{t('learning.lesson_heading')}**")
        st.markdown(t("learning.lesson_question", steps=int(tl["steps"][-1])))
        guess = st.pills(
            t("learning.lesson_pick"),
            GUESSES,
            format_func=lambda g: t(f"learning.guess_{g}"),
            key="learn-guess",
        )
        if not st.session_state.get("learn-revealed", False):
            st.button(
                t("learning.reveal"),
                type="primary",
                key="learn-reveal",
                on_click=_reveal,
                args=(True,),
            )
            st.caption(t("learning.hidden"))
            return False
        fall, window = tl["fall"], tl["meta"]["phase_change"]
        answer = t(
            "learning.answer",
            share=fall["share"],
            start=fall["start"],
            end=fall["end"],
            n=len(tl["steps"]) - 1,
        )
        if window is not None:
            answer += " " + t("learning.answer_window", **window)
        # The engine's verdict: an induction score crossing 0.5 as the loss falls.
        shape = "smooth" if window is None else "sudden"
        if guess is None:
            st.info(answer + " " + t("learning.no_guess"))
        elif guess == shape:
            st.success(t("learning.right", answer=answer))
        else:
            st.warning(t("learning.wrong", answer=answer, guess=t(f"learning.guess_{guess}")))
        st.button(t("learning.again"), key="learn-again", on_click=_reveal, args=(False,))
    return True


def step_slider(found: dict[int, dict]) -> int:
    """The saved step the maps and curves show, kept in the link (``?step=``)."""
    steps = [int(s) for s in next(iter(found.values()))["steps"]]
    return url_choice(
        st.select_slider,
        "step",
        t("learning.step"),
        steps,
        key="learn-step",
        default=len(steps) - 1,
        help=t("learning.step_help"),
    )


def draw_maps(found: dict[int, dict], step: int, key: str) -> None:
    """The probe's head maps at ``step``: the two-layer model, the one-layer control beside."""
    for n_layers, tl in found.items():  # one below the other: a head panel needs its width
        i = state.at_step(tl, step)
        scores = dict(
            block=state.probe_block(tl),
            previous=tl["curves"]["previous"][i],
            induction=tl["curves"]["induction"][i],
            loss=tl["loss"][i],
        )
        title = t("learning.maps_title", layers=n_layers, step=int(tl["steps"][i]))
        chart(figs.head_maps_figure(tl["maps"][i], title), f"{key}-{n_layers}")
        st.caption(t(f"learning.maps_caption_{n_layers}l", **scores))


def draw_curves(found: dict[int, dict], step: int, key: str) -> None:
    """Loss, ICL score and head scores against step, the step and the window marked."""
    window = next((tl["meta"]["phase_change"] for tl in found.values()), None)
    chart(figs.curves_figure(state.series(found), step, window), key)
    if window is not None:
        st.caption(t("learning.window_caption", **window))
    st.caption(t("learning.curves_caption"))


def maps(found: dict[int, dict]) -> None:
    if found:
        draw_maps(found, step_slider(found), "learn-maps")


def curves(found: dict[int, dict]) -> None:
    if found:
        draw_curves(found, step_slider(found), "learn-curves")


def live(found: dict[int, dict]) -> None:
    """Train it now: a fresh toy for at most a minute, its map and loss streamed."""
    shipped = [c.layers for c in state.toy_cards()]  # each trains through its card
    if not shipped:
        return
    c1, c2 = st.columns(2)
    lo, hi = state.SEEDS
    seed = url_number(
        c1.number_input, "seed", t("learning.live_seed", lo=lo, hi=hi), lo, hi, 0, key="learn-seed"
    )
    layers = url_choice(
        c2.radio,
        "layers",
        t("learning.live_layers"),
        shipped,
        key="learn-layers",
        horizontal=True,
        format_func=lambda n: t("learning.fig.model", layers=n),
    )
    steps = state.toy_card(layers).live_steps
    facts = dict(steps=steps, seconds=int(state.LIVE_SECONDS), slots=state.LIVE_SLOTS)
    st.caption(t("learning.live_caption", **facts))
    if st.button(t("learning.live_train"), type="primary", key="learn-train"):
        wanted = (int(layers), int(seed))
        if st.session_state.get("learn-live") != wanted:  # the same run again keeps its film
            st.session_state["learn-film"] = state.new_film()
        st.session_state["learn-live"] = wanted
        st.session_state.pop("learn-result", None)
    stream(st.session_state.get("learn-live"))
    result = st.session_state.get("learn-result")
    if result is not None:
        film(*result)


def stream(request: tuple[int, int] | None) -> None:
    """Run the request through the queue, drawing each new snapshot as it comes (with none,
    the running film's place stays, empty)."""
    if request is None:
        live_runs.idle()
        return
    film_so_far = st.session_state.setdefault("learn-film", state.new_film())

    def draw(area, version: int) -> None:
        tl = state.so_far(film_so_far)
        title = t("learning.live_title", step=int(tl["steps"][-1]))
        last = tl["maps"].shape[1] - 1
        fig = figs.live_figure(tl["steps"], tl["loss"], tl["maps"][-1, last], last, title)
        chart(fig, f"learn-live-{version}", area)

    busy = t("learning.live_busy", n=state.LIVE_SLOTS)
    tl = live_runs.stream(
        lambda watch: state.train_live(*request, film_so_far, watch),
        film_so_far.latest,
        draw,
        busy,
    )
    del st.session_state["learn-live"]
    if tl is not None:
        st.session_state["learn-result"] = (request, tl)


def film(request: tuple[int, int], tl: dict) -> None:
    """A finished (or stopped) live run: its own step slider, maps and curves."""
    layers = request[0]
    stopped = tl["meta"].get("stopped")
    if stopped:
        st.info(t(f"learning.live_stopped_{stopped}", step=int(tl["steps"][-1])))
    if len(tl["steps"]) < 2:
        return
    shown = {layers: state.as_timeline(tl)}
    steps = [int(s) for s in tl["steps"]]
    step = st.select_slider(t("learning.live_step"), steps, steps[-1], key="learn-live-step")
    draw_maps(shown, step, "learn-live-maps")
    draw_curves(shown, step, "learn-live-curves")
    st.caption(live_runs.same_run("learning", tl["meta"], int(tl["steps"][-1])))


def own(found: dict[int, dict]) -> None:
    """Your own sequence: the finished toys on token ids typed here, every head's map and
    the ids each position predicts (the toys' cards trace it)."""
    cards = state.toy_cards()
    if not cards:
        return
    top = cards[0].meta["config"]["vocab_size"] - 1
    limits = card_limits(*(c.limits for c in cards))
    gate = dict(limits=limits, unit=t("learning.own_unit"), ends=word_ends)
    label = t("learning.own_text", top=top)
    text = url_text(st.text_input, label, state.own_example(), key="learn-own", **gate)
    if text is None:
        return
    for card in cards:
        with friendly_errors(t("learning.own_what")):
            trace = models.trace(card.name, text)
        layers = card.meta["config"]["n_layers"]
        title = t("learning.own_title", layers=layers)
        amap = trace.maps["self"]  # the tokens typed on its axes: the class reads where heads look
        chart(figs.head_maps_figure(amap.weights, title, amap.query_labels), f"learn-own-{layers}")
        said, right, asked = state.continued(trace)  # body text: a projector shows the score
        st.markdown(t("learning.own_predicted", said=md_escape(said), right=right, asked=asked))
    if pairs := state.symbol_ids(trace):
        st.caption(t("learning.own_symbols", pairs=md_escape(pairs)))
    st.caption(t("learning.own_axes"))


SECTIONS = {"maps": maps, "curves": curves, "own": own, "live": live}


@fragment
def timeline_view(found: dict[int, dict]) -> None:
    """One section; a slider move (or a live run's poll) reruns only this fragment."""
    section = url_choice(
        st.segmented_control,
        "section",
        t("learning.section"),
        list(SECTIONS),
        key="learn-section",
        format_func=lambda s: t(f"learning.section_{s}"),
    )
    SECTIONS[section](found)


page_top("learning")
st.title(t("learning.title"))
with notes("intro"):  # presenting: after the figure, so the question and map come first
    st.markdown(t("learning.intro"))
found = timelines()
gate = st.sidebar.checkbox(
    t("reveal.toggle"),
    value=st.query_params.get("predict") == "1",
    key="learn-predict",
    help=t("learning.predict_help"),
)
# The question only where the answer waits for it (as on every page with a map to guess):
# above a drawn Curves section, the phase change it asks about is already on screen.
if found and gate and not lesson(next(iter(found.values()))):
    halt()
timeline_view(found)
page_bottom("learning", tables={"timeline": state.rows(found)})
