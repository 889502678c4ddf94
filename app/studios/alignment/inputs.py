"""The Alignment page's inputs: the task, the model, the text (examples or a drawn sentence)."""

import random

import streamlit as st
from state import nmt as state

from engine.data import enfr

TASKS = {"English → French": "en-fr", "Dates → ISO 8601": "dates"}


def choose_task() -> str:
    return TASKS[st.radio("Task", list(TASKS), horizontal=True, key="nmt-task")]


def choose_model(task: str):
    """The model's card; every shipped checkpoint of the task is offered, none is named here."""
    cards = state.cards(task)
    if not cards:
        st.info(
            f"No trained model for this task is shipped: run `python -m engine.train nmt "
            f"--task {task}` to make one."
        )
        st.stop()
    names = [c.name for c in cards]
    return cards[
        names.index(
            st.selectbox(
                "Model",
                names,
                format_func=lambda n: cards[names.index(n)].title,
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
        st.session_state.setdefault("nmt-drawn", []).append(pair)
        st.session_state[key] = enfr.detokenize_en(pair.src)

    if key not in st.session_state:
        st.session_state[key] = st.session_state.get(saved, next(iter(examples.values())))
    c1, c2 = st.columns([3, 1])
    c1.selectbox("Example", list(examples), key=f"nmt-example-{task}", on_change=use_example)
    if task == "en-fr":
        c2.button(
            "Draw a sentence from the grammar",
            on_click=draw,
            help="A new sentence from the generator, with its gold alignment",
        )
    text = st.text_area(
        f"Input ({card.limits.describe()}; unknown words are listed and read as <unk>)",
        key=key,
        height=90,
    )
    st.session_state[saved] = text
    return text
