"""The Memory page's inputs: a generated test story or the user's own, and the model."""

import streamlit as st
from kit import friendly_errors, url_default, url_sync
from state import models
from state.memn2n import chosen, stories

from engine.data.babi import MAX_STORY_CHARS, MAX_WORDS_PER_SENTENCE, TASK_IDS, user_story
from engine.data.babi_tasks import TASKS

EXAMPLE_STORY = (
    "Mary moved to the bathroom.\nJohn went to the hallway.\n"
    "Daniel went back to the kitchen.\nMary travelled to the office."
)
EXAMPLE_QUESTION = "Where is Mary?"
N_STORIES = 200


def own_story(names: list[str]):
    """(model name, Sample) from the user's story and question."""
    st.caption(
        f"Plain sentences (one per line or ending in '.'), or bAbI lines such as "
        f"'1 Mary went home.' with a question line 'N Where is Mary?<TAB>home<TAB>1'. "
        f"Up to {MAX_STORY_CHARS:,} characters and {MAX_WORDS_PER_SENTENCE} words per "
        "sentence; the memory keeps the latest 50 sentences."
    )
    text = st.text_area("Story", EXAMPLE_STORY, height=160, key="mem_story")
    question = st.text_input(
        "Question (leave empty to use a pasted bAbI question)", EXAMPLE_QUESTION, key="mem_question"
    )
    default = "memn2n-joint" if "memn2n-joint" in names else names[0]
    name = st.selectbox("Model", names, index=names.index(default), key="mem_model")
    url_sync(own=1)
    with friendly_errors("reading your story"):
        return name, user_story(text, question)


def generated_story(names: list[str], results: dict | None):
    """(model name, Sample) from the task's test set, with the shipped accuracy beside it."""
    c1, c2, c3 = st.columns([3, 1, 2])
    task_default = url_default("task", 1, int)
    task = c1.selectbox(
        "Task",
        TASK_IDS,
        format_func=lambda t: f"{t}: {TASKS[t][0]}",
        key="mem_task",
        index=TASK_IDS.index(task_default) if task_default in TASK_IDS else 0,
    )
    index = c2.number_input(
        f"Story (0–{N_STORIES - 1} of the test set)",
        0,
        N_STORIES - 1,
        min(max(url_default("story", 0, int), 0), N_STORIES - 1),
    )
    url_sync(own=0, task=task, story=index)
    with friendly_errors("choosing the model"):
        best = chosen(int(task))
    offered = [best] + [
        n for n in (f"memn2n-task{task}", "memn2n-joint") if n in names and n != best
    ]
    name = c3.selectbox(
        "Model (first: the better on this task's dev set)",
        offered,
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
            f"`{name}` on this task's {measured['n_test']:,} test questions: accuracy "
            f"**{measured['accuracy']:.3f}** (the paper's MemN2N PE LS RN, 1k: "
            f"{measured['paper_accuracy']:.3f}). The most-attended memory is a supporting "
            f"fact on hop {which} in {hops} of them. Measured by "
            f"`{models.card(name).evaluate_command}`."
        )
    return name, stories(int(task))[int(index)]
