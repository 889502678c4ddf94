"""The Alignment page's calls into the model registry (cached in state.models).

Models are shared by every session; that is safe because α comes back from the
decoding call (nothing is stored on the module) and the models are in eval mode.
"""

from __future__ import annotations

import random

import streamlit as st
from kit.i18n import Lazy

from engine.analysis import grammar_meanings
from engine.data import coverage as grammar
from engine.data import enfr
from state import models
from state.alignments import VersusGold, gold_pair, versus_gold
from state.minilm import embedder


def cards(task: str) -> list:
    """Every shipped RNNsearch checkpoint for ``task``, in the registry's order."""
    return [c for c in models.by_task(task) if c.family == "nmt"]


def default(task: str) -> str:
    """The name of the RNNsearch checkpoint the registry serves for ``task``."""
    return models.default(task, "nmt")


def translate(name: str, text: str, beam: int):
    return models.trace(name, text, beam=beam)


def train_record(name: str) -> dict:
    """How the checkpoint was trained: its command and the training run's numbers."""
    meta = models.card(name).meta
    return {"command": meta.get("command", ""), **meta.get("train", {})}


def measured(task: str) -> list[tuple]:
    """(card, its measured results) for every checkpoint of ``task`` that has them."""
    found = [(c, models.results(c.name)) for c in cards(task)]
    return [(c, r) for c, r in found if r]


def draw_sentence() -> tuple[enfr.Pair, str]:
    """A new sentence from the grammar, short enough for the models: its pair (with the
    gold links) and its English text as a user would type it."""
    pair = enfr.sample(random.randrange(10**9))
    while len(pair.src) > enfr.MAX_LEN:  # the grammar can outgrow what the models read
        pair = enfr.sample(random.randrange(10**9))
    return pair, enfr.detokenize_en(pair.src)


def on_gold(name: str, trace, drawn=()) -> VersusGold | None:
    """α read on the grammar's gold pair and scored, when the sentence has one; else None.

    A translation that differs from the gold one is read with the gold one fed in.
    """
    pair = gold_pair(trace.inputs["tokens"], drawn)
    if pair is None:
        return None
    if tuple(trace.outputs["tokens"]) == pair.tgt:
        return versus_gold(trace.maps["alignment"].weights[0, 0], pair, forced=False)
    found = models.forced_alignments(name, tuple(pair.src), tuple(pair.tgt))
    return versus_gold(found["α"].weights, pair, forced=True) if found else None


@st.cache_data(max_entries=64, show_spinner=False)
def coverage(text: str) -> grammar.Coverage:
    """Each word known or not to the en→fr grammar, the construction covered or not, and
    replacements by meaning (MiniLM loads on the first unknown word; then ≈ 20–50 ms for a
    sentence of unknown words, cached per text)."""
    return grammar.coverage(text, meanings=meanings)


@st.cache_resource(max_entries=1, show_spinner=Lazy("alignment.spinner_meanings"))
def meanings() -> grammar.Meanings:
    """The grammar's words in the space of the process's one MiniLM (state.minilm)."""
    return grammar_meanings.meanings(embedder())


def vocabulary(query: str = "", part: str | None = None) -> list[grammar.Entry]:
    """The grammar's words (with their French) whose English or French contains ``query``."""
    q = query.strip().lower()
    return [
        e
        for e in grammar.vocabulary()
        if (part is None or e.part == part)
        and (not q or q in e.en or q in e.forms or q in e.fr.lower())
    ]


def parts() -> list[str]:
    """The vocabulary's parts of speech, in the order the engine lists them."""
    return list(dict.fromkeys(e.part for e in grammar.vocabulary()))


def patterns() -> tuple[grammar.Pattern, ...]:
    return grammar.patterns()


def sentence(tokens) -> str:
    """Tokens as a sentence to type back into the box."""
    return grammar.detokenize(tokens)


def fr_sentence(tokens) -> str:
    return enfr.detokenize_fr(tokens)
