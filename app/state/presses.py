"""Chat › Cache policies › one RULER-style example under one press (issue 32): the example
prefilled once, the full cache and the press answering it (``engine.analysis.press_eval``),
queued with progress; the kept positions come back for the figure."""

from __future__ import annotations

import threading
from collections import OrderedDict

import streamlit as st
from kit import queue
from kit.i18n import Lazy, t

from engine.analysis import press_eval, presses
from engine.data import ruler
from state import chat as chat_state

TASKS = ruler.TASKS
PRESSES = tuple(p for p in presses.PRESSES if p != "full")
SNAPKV_WINDOW = presses.SNAPKV_WINDOW  # the recent queries that vote (the page says how many)
RATIOS = tuple(r for r in presses.RATIOS if r > 0)
LENGTH = 1024  # the shorter RULER length: a live example answers in seconds


@st.cache_resource(max_entries=1, show_spinner=Lazy("chat.spinner_duo"))
def duo_heads():
    """DuoAttention's head scores, once per process (four book passages)."""
    return press_eval.duo_scores(chat_state.model())


@st.cache_resource(max_entries=1, show_spinner=False)
def retrieval_heads():
    """The measured retrieval-head scores per K/V head (the shipped result file)."""
    return press_eval.retrieval_scores(chat_state.model())


def run(task: str, seed: int, press: str, ratio: float) -> dict:
    """The full cache and ``press`` at ``ratio`` on example ``seed`` of ``task``."""
    heads = duo_heads() if press == "duo_attention" else None
    retrieval = retrieval_heads() if press == "retrieval_heads" else None
    return queue.run(
        t("chat.queue_press"),
        _run,
        chat_state.model(),
        task,
        seed,
        press,
        ratio,
        (heads, retrieval),
        (queue.work_queue().running, chat_state.generating()),
        key=repr((task, seed, press, ratio)),
    )


KEEP = 2  # prefills kept, ≈ 140 MB each (the context's K/V and the attention scored from)
_prefills: OrderedDict[tuple, tuple] = OrderedDict()  # (task, seed) → (example, prefill)
_lock = threading.Lock()


def _prefilled(chat, task: str, seed: int):
    """One example's prefill, kept for the next press or ratio asked of it: on a CPU
    without bfloat16 the prefill is ≈ 5.9 s of the ≈ 7.2 s at one thread, the two
    answers the rest.
    Keyed by the example alone: a process holds one chat model."""
    with _lock:
        if (task, seed) in _prefills:
            _prefills.move_to_end((task, seed))
            return _prefills[(task, seed)]
    ex = ruler.generate(chat.tokenizer, task, LENGTH, seed)
    found = ex, press_eval.prefill(chat, ex.context_ids, ex.question_ids, None)
    with _lock:
        _prefills[(task, seed)] = found
        while len(_prefills) > KEEP:
            _prefills.popitem(last=False)
    return found


def _run(chat, task, seed, press, ratio, scores, busy) -> dict:
    heads, retrieval = scores  # the two head-wise presses' head rankings, or None
    with queue.spare_cores(*busy) as adjust:  # both cores while nothing else runs
        adjust()
        ex, pre = _prefilled(chat, task, seed)
        adjust()
        runs = [("full", 0.0), (press, ratio)]
        found = press_eval.run_example(
            chat, ex, runs, heads, retrieval=retrieval, masks=True, pre=pre, perplexity=False
        )
    answers = [chat.tokenizer.encode(" " + a, add_special_tokens=False) for a in ex.answers]
    ctx = list(ex.context_ids)
    found["needles"] = [
        k for a in answers for k in range(len(ctx) - len(a) + 1) if ctx[k : k + len(a)] == a
    ]
    found["question"] = ex.question
    return found


@st.cache_data(max_entries=1, show_spinner=False)
def curves() -> dict | None:
    """The shipped sweep (``python -m engine.evaluate cache``: every task, press and ratio
    over the same examples), or None where it was not run."""
    return chat_state.evaluation("presses")


def table(found: dict) -> list[dict]:
    """The sweep's numbers as the CSV has them: task, length, press, ratio, accuracy, …"""
    return press_eval.rows(found["tasks"])


def hidden(task: dict) -> list[dict]:
    """Where accuracy fell and perplexity hardly moved (``press_eval.hidden_losses``)."""
    return press_eval.hidden_losses(task)
