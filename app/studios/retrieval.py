"""Retrieval: from MemN2N's memory slots to retrieval-augmented generation, offline.

A question over a document store (a bAbI story as one-fact passages, or a few hundred
passages of the shipped English text). MiniLM embeds the question and every passage; the
cosines, and their softmax over the store, are the addressing step (MemN2N's hop-1 p_i);
the top k passages go into the chat model's prompt, and while it answers every step's
attention is summed over each passage's tokens. Sections read that one generation.
"""

import streamlit as st
from kit import (
    chart,
    controls,
    data_table,
    engine_text,
    flag,
    fragment,
    friendly_errors,
    md_escape,
    notes,
    page_bottom,
    page_top,
    t,
    url_choice,
    url_default,
    url_number,
    url_sync,
)
from kit.errors import halt
from kit.params import PAGES
from kit.textbox import gate_text, gated_text, story_limits, words_unit
from sections import retrieval as rag_sections
from sections.chat import inert
from sections.faithfulness import draw_retrieval
from state import faithfulness as faithful
from state import retrieval as state
from views import retrieval as figs

from engine.data.babi import MAX_STORY_CHARS, TASK_IDS
from engine.text import TextLimits

EXAMPLE_STORY = (
    "Mary moved to the bathroom.\nJohn went to the hallway.\n"
    "Daniel went back to the kitchen.\nMary travelled to the office."
)


def choose_store():
    """(store id, sample or None): a generated bAbI story, a typed one, or the shipped text."""
    store = url_choice(
        st.radio,
        "store",
        t("retrieval.store"),
        state.STORES,
        key="ret-store",
        horizontal=True,
        format_func=lambda s: t(f"retrieval.store_{s}"),
        resets=("question", "task", "story", "text", "context"),
    )
    if store == "text":
        st.caption(t("retrieval.text_help", n=state.book_store_size(), chars=state.PASSAGE_CHARS))
        book_recall()
        return store, None
    if store == "own":
        st.caption(t("retrieval.own_help", chars=f"{MAX_STORY_CHARS:,}"))
        story = gated_text(
            st.text_area,
            t("retrieval.story"),
            url_default("text", EXAMPLE_STORY, key="ret-story-text"),
            key="ret-story-text",
            height=140,
            limits=story_limits(MAX_STORY_CHARS),
            unit=words_unit(),
        )
        url_sync(text=story)
        return store, story
    c1, c2 = st.columns([3, 1])
    task = url_choice(
        c1.selectbox,
        "task",
        t("retrieval.task"),
        TASK_IDS,
        key="ret-task",
        format_func=lambda k: f"{k}: {t(f'memory.babi.task{k}')}",
        resets=("question", "story"),
    )
    last = state.N_STORIES - 1
    label = t("retrieval.story_index", last=last)
    first = state.FIRST_STORY
    index = url_number(c2.number_input, "story", label, 0, last, first, key=f"ret-story-{task}")
    shown = f"{task}-{index}"
    if st.session_state.get("ret-shown", shown) != shown:  # a new story asks its own question
        url_sync(question=None)
    st.session_state["ret-shown"] = shown
    return store, state.stories(task)[int(index)]


# The page's parameters as its table declares them, the engine's limits (a test holds them
# equal): the widgets below and a link read the same k, floor and question length.
PARAMS = PAGES["retrieval"].params
K = PARAMS["k"]
FLOOR = 0.0  # every passage at least as similar as orthogonal may be retrieved


def ask(store: str, picked):
    """The question and the reading settings, applied together by Ask (a form)."""
    default = state.OWN_QUESTION if store == "own" else getattr(picked, "question", None)
    default = default or state.EXAMPLE_QUESTION
    modes = state.MODES if store != "text" else ("retrieved", "none")
    key = f"ret-question-{st.session_state.get('ret-shown') if store == 'babi' else store}"
    with st.form("ret-form", border=False):
        question = st.text_input(
            t("retrieval.question"), url_default("question", default, key=key), key=key
        )
        c1, c2, c3, c4 = st.columns([2, 2, 4, 2])
        k = url_number(c1.number_input, "k", t("retrieval.k", hi=K.hi), K.lo, K.hi, 3, key="ret-k")
        floor = url_number(
            c2.number_input,
            "floor",
            t("retrieval.floor"),
            PARAMS["floor"].lo,
            PARAMS["floor"].hi,
            FLOOR,
            key="ret-floor",
            cast=float,
            step=0.05,
            help=t("retrieval.floor_help"),
        )
        mode = url_choice(
            c3.radio,
            "context",
            t("retrieval.context"),
            modes,
            key=f"ret-context-{store == 'text'}",
            horizontal=True,
            format_func=lambda m: t(f"retrieval.context_{m}"),
        )
        lo, hi = state.TOKENS
        label = t("retrieval.tokens", lo=lo, hi=hi)
        tokens = url_number(c4.number_input, "tokens", label, lo, hi, 12, key="ret-tokens")
        st.form_submit_button(t("retrieval.ask"), type="primary", key="ret-ask")
    limits = TextLimits(PARAMS["question"].limit)
    question = gate_text(question, key=key, limits=limits, unit=words_unit(), form=True)
    url_sync(question=question)
    if question and not state.reads_english(question):
        st.warning(t("retrieval.not_english"))
    return question, int(k), float(floor), mode, int(tokens)


def answer_line(trace, sample) -> None:
    """The question, the chat model's answer, and the bAbI or the book's answer when known."""
    out = trace.outputs
    question = md_escape(trace.inputs.get("question", ""))
    said = inert(out["answer"]) or t("retrieval.nothing_written")
    st.markdown(t("retrieval.qa", question=question, answer=said))
    expected(out["answer"], sample)
    if sample is None and (line := state.book_verdict(trace, md_escape)):
        st.markdown(line)  # body text, as the bAbI verdict: a projector shows it
    if out.get("stopped"):
        st.info(t("retrieval.stopped"))
    if out["truncated"]:
        ids = ", ".join(md_escape(p["id"]) for p in out["truncated"][:12])
        ids += ", …" if len(out["truncated"]) > 12 else ""
        limit = out["prompt_limit"]
        st.warning(t("retrieval.truncated", n=len(out["truncated"]), ids=ids, limit=limit))
    ms = trace.timings
    st.caption(t("retrieval.timing", prefill=ms["prefill_ms"], decode=ms["decode_ms"]))


def retrieved_list(view) -> None:
    """The passages the prompt holds, numbered as in the prompt, cosine and ★ beside them."""
    rows = state.listed(view)
    st.subheader(t("retrieval.retrieved", n=len(rows)))
    found = view["found"]
    ms = dict(
        n=len(found.scores), embed=found.timings["embed_ms"], search=found.timings["search_ms"]
    )
    st.caption(t("retrieval.retrieve_timing", **ms))
    scores = [r["score"] for r in rows if r["score"] is not None]
    if view["sample"] is not None and scores != sorted(scores, reverse=True):
        st.caption(t("retrieval.story_order"))  # cos 0.608, 0.577, 0.586 read as a bug
    if view["found"].note is not None:  # k was larger than the store
        st.info(engine_text(view["found"].note, markdown=True))
    if not rows:
        st.info(t("retrieval.no_passages"))
        return
    st.html(figs.passages_html(rows))


def addressing(view) -> None:
    """The addressing step: each passage's cosine to the question and its softmax weight."""
    found, passages = view["found"], view["store"].passages
    facts = dict(n=len(passages), k=found.k, floor=found.floor, scale=found.scale)
    notes("ret-addressing").markdown(t("retrieval.addressing_method", **facts))  # figure first
    order = state.shown_passages(found)
    chart(figs.addressing_of(found, passages, order), "ret-addressing")
    if len(order) < len(passages):
        st.caption(t("retrieval.addressing_shown", shown=len(order), n=len(passages)))
    if any(p.support for p in passages):
        st.caption(t("retrieval.star_note"))


def reading(view) -> None:
    """Passages × generated tokens: the chat model's attention mass on each passage."""
    n_layers, n_heads = view["trace"].maps["generation"].shape[:2]
    method = t("retrieval.reading_method", layers=n_layers, heads=n_heads)
    notes("ret-reading").markdown(method)  # presenting: after the map
    draw_reading(view["trace"], "ret-reading")


@fragment
def draw_reading(trace, key: str) -> None:
    """A fragment: a new layer, head or scale redraws this map only (no new generation)."""
    if "passages" not in trace.maps or not trace.maps["passages"].shape[-1]:
        st.info(t("retrieval.no_map"))
        return
    amap = trace.maps["passages"]
    n_layers, n_heads = amap.shape[:2]
    # The two pickers side by side and the toggle under them: in three columns of a 535-px
    # page (1024 px, sidebar open) "mean of every layer" and the toggle's label were cut.
    block = controls(key)
    c1, c2 = block.columns(2)
    layer = url_choice(
        c1.selectbox,
        "layer",
        t("retrieval.layer"),
        [None, *range(n_layers)],
        ids=["mean", *map(str, range(n_layers))],
        key=f"{key}-layer",
        format_func=lambda v: t("retrieval.every_layer") if v is None else f"L{v}",
    )
    head = url_choice(
        c2.selectbox,
        "head",
        t("retrieval.head"),
        [None, *range(n_heads)],
        ids=["mean", *map(str, range(n_heads))],
        key=f"{key}-head",
        format_func=lambda v: t("retrieval.every_head") if v is None else f"H{v}",
    )
    share = block.toggle(
        t("retrieval.share"),
        url_default("share", False, flag, key=f"{key}-share"),
        key=f"{key}-share",
        help=t("retrieval.share_help"),
    )
    url_sync(share=share)
    mass = state.passages_mass(amap, layer, head, share)
    which = figs.which_label(layer, head)
    title = t("retrieval.fig_reading_share" if share else "retrieval.fig_reading", which=which)
    fig = figs.reading_figure(
        mass, figs.passage_labels(trace.outputs["passages"]), state.written(trace), title
    )
    chart(fig, key)
    st.caption(t("retrieval.reading_rest", rest=state.rest_of_prompt(amap)))


def side_by_side(view) -> None:
    """MemN2N's hop weights and the chat model's attention over the same story's sentences."""
    sample = view["sample"]
    if sample is None:
        st.info(t("retrieval.side_needs_story"))
        return
    notes("ret-side").markdown(t("retrieval.side_intro"))  # presenting: after the maps
    view["side"] = state.side(sample, view["tokens"], md_escape)
    rag_sections.draw_side(view["side"], "ret-side")


def faithfulness(view) -> None:
    """Is the mass faithful? Each passage's mass beside dropping it from the prompt (the
    chat model reruns once per passage, through the queue)."""
    trace = view["trace"]
    why = faithful.cannot_drop(trace)
    if why is not None:
        st.info(why)
        return
    meter = faithful.retrieval(trace)
    if meter is None:  # stopped before the last run
        st.info(t("faithfulness.stopped"))
        return
    draw_retrieval(meter, trace, "ret-faithfulness")


def expected(said: str, sample) -> None:
    """The bAbI answer, when known, and whether the chat model's answer matches it by the
    evaluation's rule (its first content word): body text, as a caption presenting hides it
    and the class saw « John is a person. » with no word that it was wrong."""
    line = state.verdict(said, sample, md_escape)
    if line:
        st.markdown(line)


def book_recall(*, ranks: bool = False) -> None:
    """MiniLM's measured recall over the whole book: a caption, and each question's rank."""
    book = state.book_evaluation()
    if book is None:
        return
    r = book["recall_at_k"]
    st.caption(
        t(
            "retrieval.book_measured",
            q=book["n_questions"],
            command=state.EVALUATE_BOOK,
            r1=r["1"],
            r3=r["3"],
            r10=r["10"],
        )
    )
    if ranks:
        with st.expander(t("retrieval.book_ranks")):
            data_table(state.book_rows(book))


def measured(view) -> None:
    """The shipped evaluation on generated bAbI tasks 1–3, as measured (wrong answers too)."""
    results = state.evaluation()
    if results is None:
        st.info(t("retrieval.no_evaluation", command=state.EVALUATE))
        return
    st.markdown(t("retrieval.measured_intro"))
    if results.get("partial"):  # the evaluation saves each task as it finishes
        st.info(t("retrieval.partial", command=state.EVALUATE))
    data_table(state.measured_rows(results))
    st.caption(t("retrieval.conditions", **state.conditions(results)))
    st.caption(t("retrieval.measured_rules"))
    with st.expander(t("retrieval.examples")):
        data_table(state.examples(results))
    st.caption(t("retrieval.measured_command", command=state.EVALUATE))
    book_recall(ranks=True)


SECTIONS = {
    "addressing": addressing,
    "reading": reading,
    "side-by-side": side_by_side,
    "faithfulness": faithfulness,
    "measured": measured,
}

page_top("retrieval")
st.title(t("retrieval.title"))
st.caption(t("retrieval.intro"))
if not state.available():
    st.info(t("retrieval.missing", path=state.chat_dir()))
    page_bottom("retrieval")
    halt()
with controls():
    store_id, picked = choose_store()
    question, k, floor, mode, tokens = ask(store_id, picked)
if question is None or (store_id == "own" and picked is None):
    halt()  # a text over its limit: its box has said so; the controls stay
with friendly_errors(t("retrieval.what_answer")):
    view = state.read(store_id, picked, question, k, floor, mode, tokens)
trace, sample = view["trace"], view["sample"]
answer_line(trace, sample)
retrieved_list(view)
section = url_choice(
    st.segmented_control,
    "section",
    t("retrieval.section"),
    list(SECTIONS),
    key="ret-section",
    default=1,
    format_func=lambda s: t(f"retrieval.section_{s}"),
)
st.header(t(f"retrieval.section_{section}"))
with friendly_errors(t(f"retrieval.what_{section.replace('-', '_')}")):
    SECTIONS[section](view)
if side := view.get("side"):  # both readers of the story, as drawn
    mem_name, mem_trace = side["memn2n"]
    trace = {"chat-retrieved": trace, "chat-story": side["trace"], mem_name: mem_trace}
page_bottom(f"retrieval-{section}", trace, tables={"passages": lambda: state.passage_rows(view)})
