"""Is the attention faithful? The meters of the Alignment, Memory and Retrieval pages: the
attention a page draws beside what removing each input does (``engine.analysis``'s
``faithfulness_nmt``, ``faithfulness_memory``, ``faithfulness_retrieval``), scored by the
engine (Spearman's ρ, top-1), and what the shipped ``python -m engine.evaluate
faithfulness`` measured over a whole set.

The NMT saliency (integrated gradients: every target word's 33-point path through the
model) and the retrieval drops (one chat-model forward per passage, one backward) take
seconds on a busy machine, so they wait their turn in the queue (position, Cancel, the
time limit), whose finished results answer a rerun at once. MemN2N's removals are one
batch of n + 1 stories (milliseconds): cached here.

Each function returns a dict a view draws: ``found`` (the engine's result), ``agreement``
and ``mean`` (the engine's scores of it), ``measured`` (the evaluation's record, or None).
"""

from __future__ import annotations

import streamlit as st
from kit import queue
from kit.i18n import t

from engine.analysis import faithfulness_memory, faithfulness_nmt, faithfulness_retrieval
from engine.checkpoints import load_result, result_name
from engine.data.babi import Sample
from state import chat as chat_state
from state import memn2n as mem_state
from state import models
from state.alignments import EOS


@st.cache_data(ttl=60, max_entries=4, show_spinner=False)
def evaluation(family: str) -> dict | None:
    """The shipped evaluation of one family (nmt, memn2n, retrieval), or None if not run."""
    return load_result(result_name("faithfulness", family))


def title(name: str):
    """The card's title of a model an evaluation names (a Message), else its name."""
    found = models.cards().get(name)
    return found.title if found is not None else name


# -- the Alignment page: α beside erasing each source word ------------------------------
def nmt(name: str, trace) -> dict:
    """α and the attributions of the translation the page shows, its own words fed in."""
    src, tgt = tuple(trace.inputs["tokens"]), tuple(trace.outputs["tokens"])
    found = queue.run(
        t("faithfulness.queue_nmt"),
        _saliency,
        models.loaded(name),
        src,
        tgt,
        key=repr((name, src, tgt)),
    )
    saved = evaluation("nmt")
    measured = models.cards().get(saved["model"]) if saved else None
    if measured is None or measured.task != models.card(name).task:
        saved = None  # measured on another task's sentences: nothing to set beside this one
    return dict(
        found=found,
        src=src,
        tgt=(*tgt, EOS),  # the rows: the words, then the end of the sentence
        agreement=found.agreement(),
        mean=found.mean(),
        measured=saved and dict(saved, title=title(saved["model"]), same=saved["model"] == name),
    )


# The page draws no integrated gradients: the engine's 32-step path is 33 model copies per
# target word (a 50-word sentence: 76 s and 8.8 GB on the class machine). One step keeps the
# call at occlusion's and gradient × input's cost (≤ 5 s, < 1 GB); its IG is not shown.
IG_STEPS = 1


def _saliency(translator, src: tuple[str, ...], tgt: tuple[str, ...]):
    return faithfulness_nmt.saliency(translator, list(src), list(tgt), steps=IG_STEPS)


# -- the Memory page: p_i at each hop beside removing each fact ---------------------------
@st.cache_data(max_entries=64, show_spinner=False)
def _removal(name: str, sample: Sample) -> faithfulness_memory.FactRemoval:
    return faithfulness_memory.remove_each(mem_state.reader(name), sample)


def memory(name: str, sample: Sample) -> dict:
    """Each fact of ``sample`` removed in turn from ``name``'s memory; the evaluation's
    record of the sample's task (when it has one) and its means over every task."""
    found = _removal(name, sample)
    saved = evaluation("memn2n")
    task = (saved or {}).get("tasks", {}).get(str(sample.task))
    return dict(
        found=found,
        agreement=found.agreement(),
        changes=found.changes(),
        measured=saved
        and dict(
            saved,
            task=task,
            title=task and title(task["model"]),
            same=bool(task) and task["model"] == name,
        ),
    )


# -- the Retrieval page: the chat model's mass beside dropping each passage --------------
def cannot_drop(trace) -> str | None:
    """Why the passages of an answer cannot be dropped one by one (None when they can)."""
    if not trace.outputs.get("passages"):
        return t("faithfulness.no_passages")
    if not faithfulness_retrieval.answer_ids(trace):
        return t("faithfulness.no_answer")
    return None


def retrieval(trace) -> dict | None:
    """Every passage of the answer's prompt dropped in turn (P + 1 forwards, 1 backward);
    None when Stop (or the time limit) ended it first."""
    listed = tuple((p["id"], p["text"]) for p in trace.outputs["passages"])
    answer = tuple(faithfulness_retrieval.answer_ids(trace))
    found = queue.run(
        t("faithfulness.queue_retrieval"),
        _drop_each,
        chat_state.model(),
        trace,
        t("faithfulness.progress_runs"),
        key=repr((trace.inputs["question"], trace.inputs["mode"], listed, answer)),
        cancel_label=t("faithfulness.stop"),
    )
    if found is None:
        return None
    return dict(found=found, agreement=found.agreement(), measured=evaluation("retrieval"))


def _drop_each(chat, trace, unit: str, cancel, progress):
    runs = len(trace.outputs["passages"]) + 2  # every passage, each dropped, the gradient
    should_stop = queue.stepper(cancel, progress, runs, unit)
    return faithfulness_retrieval.drop_each(chat, trace, should_stop=should_stop)
