"""Memory (MemN2N): which memories an End-To-End Memory Network reads at each hop.

Widgets → one cached answer (a Trace) → the hops or the memory map, one at a time.
"""

import numpy as np
import streamlit as st
from kit import (
    chart,
    controls,
    data_table,
    engine_text,
    fragment,
    friendly_errors,
    page_bottom,
    page_top,
    t,
    url_choice,
    url_default,
    url_number,
    url_sync,
)
from kit.errors import PageError, halt
from kit.i18n import md_escape, t_or
from kit.reveal import page_toggle
from kit.textbox import gated_text, story_limits, words_unit
from sections.faithfulness import draw_memory
from sections.memory import draw_hops
from state import faithfulness as faithful
from state import memn2n as state
from views.heatmap import column_px, drawn_px
from views.memory import hops_figure, training_curves
from views.memory import memory_map as map_figure

from engine.data.babi import (
    MAX_STORY_CHARS,
    MAX_WORDS_PER_SENTENCE,
    SHORT,
    TASK_IDS,
    user_story,
)
from engine.errors import InputError
from engine.text import CHARS_PER_TOKEN, TextLimits

EXAMPLE_STORY = (
    "Mary moved to the bathroom.\nJohn went to the hallway.\n"
    "Daniel went back to the kitchen.\nMary travelled to the office."
)
EXAMPLE_QUESTION = "Where is Mary?"
N_STORIES = 200


def own_story(names: list[str]):
    """(model name, Sample) from the user's story and question."""
    slots = min(state.config(n)["memory"] for n in names)  # the sentences the models keep
    facts = dict(chars=f"{MAX_STORY_CHARS:,}", words=MAX_WORDS_PER_SENTENCE, slots=slots)
    st.caption(t("memory.own_help", **facts))
    story = url_default("text", EXAMPLE_STORY, key="mem_story")
    gate = dict(limits=story_limits(MAX_STORY_CHARS), unit=words_unit())
    text = gated_text(st.text_area, t("memory.story"), story, height=160, key="mem_story", **gate)
    question = url_default("question", EXAMPLE_QUESTION, key="mem_question")
    # Characters here; the words of a question are the engine's to count (its own rule).
    gate = dict(limits=TextLimits(MAX_WORDS_PER_SENTENCE * CHARS_PER_TOKEN), unit=words_unit())
    question = gated_text(st.text_input, t("memory.question"), question, key="mem_question", **gate)
    joint = names.index(state.widest())  # the model that knows every task
    name = url_choice(
        st.selectbox, "model", t("memory.model"), names, key="mem_model", default=joint
    )
    url_sync(text=text, question=question, task=None, story=None)
    if text is None or question is None:
        halt()  # over a limit: the box has said so; the controls above stay
    with friendly_errors(t("memory.reading_what")):
        return name, user_story(text, question)


def generated_story():
    """(model name, Sample) from the task's test set, with the shipped accuracy beside it."""
    c1, c2, c3 = st.columns([3, 1, 2])
    task = url_choice(
        c1.selectbox,
        "task",
        t("memory.task"),
        TASK_IDS,
        key="mem_task",
        format_func=lambda k: f"{k}: {t(f'memory.babi.task{k}')}",
        resets=("model",),  # the link's model was another task's
    )
    label = t("memory.story_index", last=N_STORIES - 1)
    index = url_number(c2.number_input, "story", label, 0, N_STORIES - 1, 0, key="mem_story_index")
    url_sync(text=None, question=None)
    with friendly_errors(t("memory.choosing_what")):
        offered = state.offered(task)  # the model that serves the task first
    # One widget per task: a new task starts from its own better model, not from the
    # model picked for the previous task.
    key = f"mem_model_task{task}"
    name = url_choice(c3.selectbox, "model", t("memory.model_first"), offered, key=key)
    measured = state.served(name, task)
    if measured:
        hits = measured["support_hit_per_hop"]
        facts = dict(
            name=name,
            n=f"{measured['n_test']:,}",
            accuracy=f"{measured['accuracy']:.3f}",
            paper=f"{measured['paper_accuracy']:.3f}",
            which=" / ".join(str(k + 1) for k in range(len(hits))),
            hops=" / ".join(f"{h:.2f}" for h in hits),
            command=state.evaluate_command(name),
        )
        st.caption(t("memory.task_measured", **facts))
    return name, state.stories(task)[int(index)]


def answer_line(name: str, sample, trace) -> None:
    """The question, the answer with its probability and verdict, and what was left out."""
    out, cfg = trace.outputs, state.config(name)
    if out.get("warning"):
        st.warning(engine_text(out["warning"], markdown=True))
    verdict = ""
    if out["expected"]:
        right = out["expected"] == out["answer"]
        wrong = t("memory.wrong", answer=md_escape(out["expected"]))
        verdict = t("memory.correct") if right else wrong
    facts = dict(question=md_escape(sample.question), answer=out["answer"], verdict=verdict)
    facts |= dict(p=f"{out['probability']:.3f}", name=name, hops=cfg["hops"])
    facts["tying"] = t_or(f"memory.tying_{cfg['tying']}", cfg["tying"])  # adjacent, layerwise
    st.markdown(t("memory.qa", **facts))
    if out["unknown_words"]:
        words = ", ".join(md_escape(w) for w in out["unknown_words"][:20])
        st.info(t("memory.dropped_words", words=words))
    if out["dropped_sentences"]:
        k, memory = out["dropped_sentences"], cfg["memory"]
        st.info(t("memory.dropped", n=len(sample.story), memory=memory, k=k))


def hops(trace, sample) -> None:
    out = trace.outputs
    draw_hops(trace.maps["memory"], out["candidates"], out["probabilities"], out["support"])


@fragment
def map(trace, sample) -> None:  # the section's id (?section=map) shadows a builtin unused here
    """A fragment: recolouring redraws the map only (the projection is cached)."""
    st.subheader(t("memory.map_header"))
    colour = url_choice(
        st.radio,
        "colour",
        t("memory.colour_by"),
        ["task", "entity"],
        key="mem_colour",
        horizontal=True,
        format_func=lambda c: t(f"memory.colour_{c}"),
    )
    name = state.widest()  # every task's memories in one space
    st.caption(t("memory.map_caption", name=name, n=f"{state.MAP_MEMORIES:,}"))
    with friendly_errors(t("memory.map_what")):
        coords, task_of, subject_of, texts, n = state.memory_map(name, sample)
    tasks = [t("memory.task_n", n=g.removeprefix("task ")) for g in task_of]  # "task 2"
    groups = (tasks if colour == "task" else subject_of) + [t("memory.this_story")] * n
    current = np.r_[np.zeros(len(texts), bool), np.ones(n, bool)]
    title = t("memory.map_title", by=t(f"memory.colour_{colour}"))
    sentences = texts + list(trace.maps["memory"].key_labels)
    chart(map_figure(coords, groups, sentences, current, title), key="mem-umap")


@fragment
def training(trace, sample) -> None:
    """A fragment: a probe story's p_i per hop at a saved training step, beside the loss
    and accuracy curves; a slider move redraws this section only, from memory."""
    name = trace.model  # the model answering above; its own training run
    try:
        tl = state.timeline(name)
    except InputError as exc:  # missing or damaged: say so, the rest of the page stands
        st.info(engine_text(exc, markdown=True))
        return
    stories = tl.probes[-1]  # the same probe stories at every step
    probe = url_choice(
        st.selectbox,
        "probe",
        t("memory.probe"),
        list(range(len(stories))),
        key=f"mem_probe_{name}",
        format_func=lambda i: probe_label(stories[i]),
    )
    step = url_choice(
        st.select_slider,
        "step",
        t("memory.step"),
        tl.steps,
        key=f"mem_step_{name}",
        default=len(tl.steps) - 1,
        format_func=lambda s: f"{s:,}",
        help=t("memory.step_help"),
    )
    shown = tl.probes[tl.at(step)][probe]
    out = shown.outputs
    verdict = t("memory.correct") if out["answer"] == out["expected"] else ""
    facts = dict(step=f"{step:,}", answer=out["answer"], p=f"{out['probability']:.3f}")
    st.markdown(t("memory.step_answer", verdict=verdict, **facts))
    left, right = st.columns([3, 2])
    hops = hops_figure(shown.maps["memory"], out["support"], column_px(0.6))
    chart(hops, "mem-step-hops", left, share=0.6)
    curves = training_curves(tl, step, int(drawn_px(column_px(0.4))))
    chart(curves, "mem-step-curves", right, share=0.4)
    marks = dict(ls=f"{tl.marks.get('linear_start_end', 0):,}", kept=f"{tl.marks.get('kept', 0):,}")
    epochs = state.linear_start_epochs(name)
    st.caption(
        t("memory.training_caption", epochs=epochs, command=tl.meta.get("command", ""), **marks)
    )


def faithfulness(trace, sample) -> None:
    """Is p_i faithful? Each hop's weights beside removing each fact from memory."""
    st.subheader(t("memory.section_faithfulness"))
    with friendly_errors(t("faithfulness.what_memory")):
        meter = faithful.memory(trace.model, sample)
    draw_memory(meter, trace, "mem-faithfulness")


def probe_label(story) -> str:
    """A probe story in one line: its question and how many sentences it has."""
    return t("memory.probe_label", question=story.inputs["question"], n=len(story.inputs["story"]))


COLUMNS = {  # heading id → the evaluation JSON's key
    "accuracy": "accuracy",
    "paper": "paper_accuracy",
    "miss": "paper_miss",
    "paper_joint": "paper_joint_accuracy",
    "short": "short_accuracy",
    "elsewhere": "elsewhere_accuracy",
    "support": "support_hit_any_hop",
}


def every_task(results: dict) -> None:
    """The shipped evaluation on every task, beside the paper's numbers (a table): test
    accuracy, how far the paper is above it, short-story accuracy, the restarts kept from."""
    # Headings looked up once, not once per row: the table is redrawn on each rerun.
    lo, hi = SHORT  # the evaluation's short stories, as engine.data.babi draws them
    heads = {t(f"memory.col_{h}", lo=lo, hi=hi): key for h, key in COLUMNS.items()}
    task, restarts, model = (t(f"memory.col_{h}") for h in ("task", "restarts", "model"))
    with st.expander(t("memory.every_task", mean=f"{results['mean_accuracy']:.3f}")):
        data_table(  # a row per task; "–" where a task has no such question
            [
                {task: f"{k}: {t(f'memory.babi.task{k}')}"}
                | {h: r.get(key) for h, key in heads.items()}
                | {restarts: restarts_cell(r.get("restarts")), model: r["model"]}
                for k, r in results["tasks"].items()
            ]
        )
        mean, paper = f"{results['mean_accuracy']:.4f}", f"{results['paper_mean_accuracy']:.4f}"
        short = results.get("mean_short_accuracy")
        short = "–" if short is None else f"{short:.4f}"
        command = results["command"]
        facts = dict(mean=mean, paper=paper, short=short, command=command)
        st.caption(t("memory.every_task_caption", **facts))


def restarts_cell(restarts: dict | None) -> str:
    """ "best of 10 (seed 3)", or "1 run" for a model trained once."""
    if not restarts or restarts.get("n", 1) <= 1:
        return t("memory.one_run")
    return t("memory.best_of", n=restarts["n"], seed=restarts["seed"])


SECTIONS = {"hops": hops, "map": map, "training": training, "faithfulness": faithfulness}

page_top("memory")
st.title(t("memory.title"))
st.caption(t("memory.caption"))

with friendly_errors(t("memory.loading_what")):
    names = state.shipped()
    if not names:
        raise PageError(t("memory.no_checkpoint"))

with controls():
    source = url_choice(
        st.radio,
        "own",
        t("memory.source"),
        ["babi", "own"],
        ids=[0, 1],
        key="mem_source",
        horizontal=True,
        format_func=lambda s: t(f"memory.source_{s}"),
    )
    name, sample = own_story(names) if source == "own" else generated_story()

with friendly_errors(t("memory.answering_what")):
    trace = state.answer(name, sample)
answer_line(name, sample, trace)

# One section on screen at a time: the UMAP map is drawn only when asked for.
shown = url_choice(
    st.segmented_control,
    "section",
    t("memory.show"),
    list(SECTIONS),
    key="mem_section",
    required=True,
    format_func=lambda s: t(f"memory.section_{s}"),
)
# A section drawing this story's p_i waits behind the guess.
page_toggle("memory", trace.maps["memory"], when=SECTIONS[shown] in (hops, faithfulness))
SECTIONS[shown](trace, sample)

results = state.evaluation()  # the shipped `evaluate memn2n --save` numbers, or None
if results:
    every_task(results)
page_bottom(f"memory-{name}", trace)
