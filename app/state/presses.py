"""Chat › Cache policies › one RULER-style example under one press (issue 32): the example
prefilled once, the full cache and the press answering it (``engine.evaluation.cache``),
queued with progress; the kept positions come back for the figure."""

from __future__ import annotations

import streamlit as st
from kit import queue
from kit.i18n import Lazy, t

from engine.analysis import presses
from engine.data import ruler
from engine.evaluation import cache as cache_eval
from state import chat as chat_state

TASKS = ruler.TASKS
PRESSES = tuple(p for p in presses.PRESSES if p != "full")
RATIOS = tuple(r for r in presses.RATIOS if r > 0)
LENGTH = 1024  # the shorter RULER length: a live example answers in seconds


@st.cache_resource(max_entries=1, show_spinner=Lazy("chat.spinner_duo"))
def duo_heads():
    """DuoAttention's head scores, once per process (four book passages)."""
    return cache_eval.duo_scores(chat_state.model())


def run(task: str, seed: int, press: str, ratio: float) -> dict:
    """The full cache and ``press`` at ``ratio`` on example ``seed`` of ``task``."""
    heads = duo_heads() if press == "duo_attention" else None
    return queue.run(
        t("chat.queue_press"),
        _run,
        chat_state.model(),
        task,
        seed,
        press,
        ratio,
        heads,
        key=repr((task, seed, press, ratio)),
    )


def _run(chat, task, seed, press, ratio, heads) -> dict:
    ex = ruler.generate(chat.tokenizer, task, LENGTH, seed)
    found = cache_eval.run_example(chat, ex, [("full", 0.0), (press, ratio)], heads, masks=True)
    answers = [chat.tokenizer.encode(" " + a, add_special_tokens=False) for a in ex.answers]
    ctx = list(ex.context_ids)
    found["needles"] = [
        k for a in answers for k in range(len(ctx) - len(a) + 1) if ctx[k : k + len(a)] == a
    ]
    found["question"] = ex.question
    return found
