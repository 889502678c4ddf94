"""The Memory page's inputs: a generated test story or the user's own, and the model."""

import streamlit as st
from kit import friendly_errors, t, url_default, url_index, url_sync
from state import models
from state.memn2n import chosen, stories

from engine.data.babi import MAX_STORY_CHARS, MAX_WORDS_PER_SENTENCE, TASK_IDS, user_story

EXAMPLE_STORY = (
    "Mary moved to the bathroom.\nJohn went to the hallway.\n"
    "Daniel went back to the kitchen.\nMary travelled to the office."
)
EXAMPLE_QUESTION = "Where is Mary?"
N_STORIES = 200


def own_story(names: list[str]):
    """(model name, Sample) from the user's story and question."""
    st.caption(t("memory.own_help", chars=f"{MAX_STORY_CHARS:,}", words=MAX_WORDS_PER_SENTENCE))
    story = url_default("text", EXAMPLE_STORY, key="mem_story")
    text = st.text_area(t("memory.story"), story, height=160, key="mem_story")
    question = url_default("question", EXAMPLE_QUESTION, key="mem_question")
    question = st.text_input(t("memory.question"), question, key="mem_question")
    default = names.index("memn2n-joint") if "memn2n-joint" in names else 0
    default = url_index("model", names, default, key="mem_model")
    name = st.selectbox(t("memory.model"), names, default, key="mem_model")
    url_sync(own=1, text=text, question=question, task=None, story=None)
    with friendly_errors(t("memory.reading_what")):
        return name, user_story(text, question)


def generated_story(names: list[str], results: dict | None):
    """(model name, Sample) from the task's test set, with the shipped accuracy beside it."""
    c1, c2, c3 = st.columns([3, 1, 2])
    task_default = url_default("task", 1, int, key="mem_task", choices=TASK_IDS)
    task = c1.selectbox(
        t("memory.task"),
        TASK_IDS,
        format_func=lambda k: f"{k}: {t(f'memory.babi.task{k}')}",
        key="mem_task",
        index=TASK_IDS.index(task_default) if task_default in TASK_IDS else 0,
    )
    if st.query_params.get("task", str(task)) != str(task):  # the link's model was another task's
        url_sync(model=None)
    index = c2.number_input(
        t("memory.story_index", last=N_STORIES - 1),
        0,
        N_STORIES - 1,
        url_default("story", 0, int, key="mem_story_index", lo=0, hi=N_STORIES - 1),
        key="mem_story_index",
    )
    url_sync(own=0, task=task, story=index, text=None, question=None)
    with friendly_errors(t("memory.choosing_what")):
        best = chosen(int(task))
    offered = [best] + [
        n for n in (f"memn2n-task{task}", "memn2n-joint") if n in names and n != best
    ]
    name = c3.selectbox(
        t("memory.model_first"),
        offered,
        url_index("model", offered, key=f"mem_model_task{task}"),
        # One widget per task: a new task starts from its own better model, not from the
        # model picked for the previous task.
        key=f"mem_model_task{task}",
    )
    measured = (results or {}).get("tasks", {}).get(str(task))
    if measured and measured.get("model") == name:
        hits = measured["support_hit_per_hop"]
        hops = " / ".join(f"{h:.2f}" for h in hits)
        which = " / ".join(str(k + 1) for k in range(len(hits)))
        st.caption(
            t(
                "memory.task_measured",
                name=name,
                n=f"{measured['n_test']:,}",
                accuracy=f"{measured['accuracy']:.3f}",
                paper=f"{measured['paper_accuracy']:.3f}",
                which=which,
                hops=hops,
                command=models.card(name).evaluate_command,
            )
        )
    return name, stories(int(task))[int(index)]
