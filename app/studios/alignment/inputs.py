"""The Alignment page's inputs: the task, the model, the text (examples or a drawn sentence)."""

import random

import streamlit as st
from kit import engine_text, t, url_default, url_index, url_sync
from state import nmt as state

from engine.data import enfr

TASKS = {"English → French": "en-fr", "Dates → ISO 8601": "dates"}  # identity → task


def choose_task() -> str:
    ids = list(TASKS.values())
    task = TASKS[
        st.radio(
            t("alignment.task"),
            list(TASKS),
            url_index("task", ids, key="nmt-task"),
            horizontal=True,
            format_func=lambda s: t(f"alignment.task_{TASKS[s]}"),
            key="nmt-task",
        )
    ]
    if st.query_params.get("task", task) != task:  # the link's model and text were another task's
        url_sync(model=None, text=None, step=None)
    return task


def beam() -> int:
    return url_default("beam", 5, int, key="nmt-beam", lo=1, hi=10)


def choose_model(task: str):
    """The model's card; every shipped checkpoint of the task is offered, none is named here."""
    cards = state.cards(task)
    if not cards:
        st.info(t("alignment.no_model", task=task))
        st.stop()
    names = [c.name for c in cards]
    return cards[
        names.index(
            st.selectbox(
                t("alignment.model"),
                names,
                url_index("model", names, key=f"nmt-model-{task}"),
                format_func=lambda n: engine_text(cards[names.index(n)].title),
                key=f"nmt-model-{task}",
            )
        )
    ]


def input_text(card) -> str:
    """The text box; what was typed survives reruns and visits to other pages."""
    task = card.task
    key, saved = f"nmt-text-{task}", f"nmt-saved-{task}"
    examples = {e.label: e.input for e in card.examples}

    def use_example():
        st.session_state[key] = examples[st.session_state[f"nmt-example-{task}"]]

    def draw():
        pair = enfr.sample(random.randrange(10**9))
        while len(pair.src) > enfr.MAX_LEN:  # the grammar can outgrow what the models read
            pair = enfr.sample(random.randrange(10**9))
        st.session_state.setdefault("nmt-drawn", []).append(pair)
        st.session_state[key] = enfr.detokenize_en(pair.src)

    if key not in st.session_state:
        fallback = st.session_state.get(saved, next(iter(examples.values())))
        st.session_state[key] = url_default("text", fallback)
    c1, c2 = st.columns([3, 1])
    c1.selectbox(
        t("alignment.example"),
        list(examples),
        key=f"nmt-example-{task}",
        on_change=use_example,
        format_func=engine_text,
    )
    if task == "en-fr":
        c2.button(
            t("alignment.draw"),
            on_click=draw,
            help=t("alignment.draw_help"),
            key="nmt-draw",
        )
    text = st.text_area(
        t("alignment.input", limits=engine_text(card.limits.describe())),
        key=key,
        height=90,
    )
    st.session_state[saved] = text
    return text
