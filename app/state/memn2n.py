"""Cached loaders for the Memory (MemN2N) page.

Loading a model also starts UMAP's numba warm-up in a background thread, so by the
time the user scrolls to the memory map its kernels are compiled (or read from
numba's on-disk cache).
"""

from __future__ import annotations

import numpy as np
import streamlit as st
from kit import queue
from kit.i18n import Lazy, t

from engine import projection
from engine.data.babi import Sample, dataset, subject
from engine.models import registry
from state import models, timelines

MAP_MEMORIES = 2_000  # memories from many stories behind the UMAP


def reader(name: str):
    """The loaded network (cached once per process by state.models)."""

    projection.warm_up_in_background()  # once per process; the map needs it later
    return models.loaded(name)


def shipped() -> list[str]:
    return [c.name for c in models.by_task("babi") if c.family == "memn2n"]


def answer(name: str, sample: Sample):
    """The model's Trace for one question: its answer and p_i at every hop."""
    reader(name)
    return models.trace(name, sample)


@st.cache_data(ttl=60, max_entries=32, show_spinner=False)
def chosen(task: int) -> str:
    """The model that serves bAbI ``task``, as the engine decided it (the shipped
    evaluation's choice on the task's dev questions; no scoring here)."""

    return registry.for_babi_task(task).name


def offered(task: int) -> list[str]:
    """The models that know ``task``, the one that serves it first."""
    best = chosen(task)
    return [best] + [n for n in shipped() if n != best and task in models.card(n).tasks]


def widest() -> str:
    """The registry's default MemN2N: the joint model, every task's memories in one space."""
    return models.default("babi", "memn2n")


def config(name: str) -> dict:
    """The checkpoint's configuration as its card states it (hops, memory size, weight
    tying, …): a caption needs no loaded model."""
    return models.card(name).config


def evaluate_command(name: str) -> str | None:
    return models.card(name).evaluate_command


def served(name: str, task: int) -> dict | None:
    """What the shipped evaluation measured for ``task`` with model ``name``, if it serves it."""
    return (models.results(name) or {}).get("served_tasks", {}).get(str(task))


def timeline(name: str):
    """The model's training timeline (probe stories' p_i per hop and the curves at ≈ 16
    steps), read once per file version; raises the engine's InputError when it is
    missing or damaged."""
    return timelines.of(models.card(name))


def linear_start_epochs(name: str) -> int:
    return int(models.card(name).meta.get("linear_start_epochs", 0))


def evaluation() -> dict | None:
    """Every task's measured record, read from the cards that serve them, with the means;
    None when ``python -m engine.evaluate memn2n --task all --save`` was not run."""
    tasks = {}
    for name in shipped():
        tasks |= (models.results(name) or {}).get("served_tasks", {})
    if not tasks:
        return None
    tasks = dict(sorted(tasks.items(), key=lambda kv: int(kv[0])))
    accuracy = [r["accuracy"] for r in tasks.values()]
    paper = [r["paper_accuracy"] for r in tasks.values()]
    short = [r["short_accuracy"] for r in tasks.values() if "short_accuracy" in r]
    return {
        "tasks": tasks,
        "mean_accuracy": sum(accuracy) / len(accuracy),
        "paper_mean_accuracy": sum(paper) / len(paper),
        "mean_short_accuracy": sum(short) / len(short) if short else None,
        "command": evaluate_command(shipped()[0]),
    }


@st.cache_data(max_entries=32, show_spinner=False)
def stories(task: int, n: int = 200) -> list[Sample]:
    """The first ``n`` questions of the task's fixed test set."""

    return dataset(task, "test")[:n]


def _one_per_story(samples: list[Sample]) -> list[Sample]:
    """The last question of each story: earlier ones see a prefix of the same facts."""
    out: list[Sample] = []
    for s in samples:
        if out and s.story[: len(out[-1].story)] == out[-1].story:
            out[-1] = s
        else:
            out.append(s)
    return out


@st.cache_data(max_entries=4, show_spinner=Lazy("state.spinner_memories"))
def corpus(name: str, limit: int = MAP_MEMORIES):
    """m_i of about ``limit`` sentences from test stories of every task the model knows.

    Returns (vectors (N, d), task per row, subject per row, sentence per row).
    """

    r = reader(name)
    tasks = r.meta["tasks"]
    per_task = limit // len(tasks)
    vecs, task_of, subj, texts = [], [], [], []
    for task in tasks:
        picked, n = [], 0
        for s in _one_per_story(dataset(task, "test")):
            if n >= per_task:
                break
            picked.append(s)
            n += min(len(s.story), r.cfg.memory)
        for s, m in zip(picked, r.memories(picked), strict=True):
            kept = s.story[-len(m) :]
            vecs.append(m)
            task_of += [f"task {task}"] * len(m)
            subj += [subject(x) for x in kept]
            texts += list(kept)
    return np.concatenate(vecs).astype(np.float32), task_of, subj, texts


def memory_map(name: str, sample: Sample, seed: int = 0):
    """UMAP of the corpus memories and this story's together (through the heavy queue).

    Returns (coords (N + n, 2), task per corpus row, subject per corpus row, sentence per
    corpus row, n): the last n rows of coords are this story's memories.
    """

    vectors, task_of, subject_of, texts = corpus(name)
    current = reader(name).memories([sample])[0]
    coords = queue.run(t("state.queue_umap"), _project, vectors, current, seed)
    return coords, task_of, subject_of, texts, len(current)


def _project(corpus_vectors: np.ndarray, current: np.ndarray, seed: int) -> np.ndarray:

    return projection.umap_2d(np.concatenate([corpus_vectors, current]), seed=seed)
