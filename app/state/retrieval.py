"""The Retrieval page's runs: MiniLM over a document store, the chat model answering from
the passages put in its prompt, and MemN2N on the same bAbI story.

MiniLM and the shipped text's store are built once per process (``st.cache_resource``); a
question's retrieval is one embedding and a matrix-vector product (≤ 50 ms), cached per
question. An answer is seconds of work, so it is written in the class's batch with the
Chat page's generations (``state.chat``: place in line, progress, Stop), whose finished
results answer a rerun with the same request at once: a view change that needs no new
generation only redraws.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import streamlit as st
from kit import queue
from kit.i18n import Lazy, catalog, t

from engine import run as engine_run
from engine.analysis import retrieval as rag
from engine.checkpoints import load_result, result_name
from engine.data.babi import Sample, dataset, user_story, words
from state import chat as chat_state
from state import memn2n as mem_state
from state.minilm import embedder

STORES = ("babi", "own", "text")  # a generated bAbI story, a typed story, the shipped text
MODES = ("retrieved", "story", "none")  # what the chat model's prompt holds
N_STORIES = 200
FIRST_STORY = 2  # task 1's third test story: six sentences, one supporting fact
TOKENS = (1, 32)  # new tokens: a bAbI answer is one word, a question on the text a sentence
SHOWN_SCORES = 20  # passages drawn in the addressing step of a large store
# A question of the book evaluation, so the page can say the book's answer beside the
# reply (MiniLM ranks its passage 2nd of 4,026: in a prompt of the top 3).
EXAMPLE_QUESTION = "In which town did Mrs. Gardiner use to live?"


def available() -> bool:
    return chat_state.available()


def chat_dir() -> str:
    return chat_state.chat_dir()


def model():
    """The one chat model of this process (shared with the Chat model page)."""
    return chat_state.model()


@st.cache_resource(max_entries=1, show_spinner=Lazy("retrieval.spinner_store"))
def text_store():
    """The shipped English text as a few hundred passages, embedded once per process (and
    kept as safetensors in the app's cache directory by the engine)."""
    return rag.text_store(embedder())  # MiniLM loads under its own spinner first


@st.cache_resource(max_entries=64, show_spinner=False)
def _story_store(story: tuple[str, ...], support: tuple[int, ...]):
    sample = Sample(story, "", "", support)
    return rag.build_store(rag.story_passages(sample), embedder())


def story_store(sample: Sample):
    """A bAbI story as one passage per sentence (its supporting facts marked when known)."""
    return _story_store(tuple(sample.story), tuple(sample.support))


@st.cache_data(max_entries=32, show_spinner=False)
def stories(task: int) -> list[Sample]:
    """The first questions of the task's fixed test set (as the Memory page offers them)."""
    return dataset(task, "test")[:N_STORIES]


def asked(sample: Sample, question: str) -> Sample:
    """The sample with the question typed; its answer and supporting facts are known only
    while the question is the story's own."""
    if question.strip() == sample.question:
        return sample
    return Sample(sample.story, question.strip(), "", (), sample.task)


def reads_english(question: str) -> bool:
    """Whether the question has a Latin letter: all-MiniLM-L6-v2 learnt its similarities
    from English sentence pairs, and the chat model answers mostly in English."""
    return re.search(r"[A-Za-z]", question) is not None


def own(story: str, question: str) -> Sample:
    """A typed story (plain sentences or bAbI lines) and question (InputError if unusable)."""
    return user_story(story, question)


@dataclass(frozen=True)
class Request:
    """One question over one store (the queue's key is its repr)."""

    question: str
    passages: tuple  # the passages placed in the prompt (engine Passages, frozen)
    mode: str = "retrieved"
    max_new_tokens: int = 12


def retrieve(store, question: str, k: int, floor: float):
    """The engine's addressing step: cosine to every passage, softmax weights, top k."""
    return rag.retrieve(store, question, k, floor=floor, embedder=embedder())


def answer(request: Request, label: str = "retrieval.queue_answer"):
    """The chat model's answer from the request's passages, every step's attention kept.

    Written in the class's batch with the Chat page's generations (place in line, progress,
    Stop; a repeated request is answered from the batch's finished results), or, with
    batching off, through the bounded queue under ``label``."""
    if chat_state.BATCHING:
        return rag.answer(
            model(),
            request.question,
            list(request.passages),
            mode=request.mode,
            max_new_tokens=request.max_new_tokens,
            write=_in_batch,
        )
    return queue.run(
        t(label),
        _answer,
        model(),
        request,
        t("retrieval.progress_tokens"),
        key=repr(request),
        cancel_label=t("retrieval.stop"),
    )


def _in_batch(text: str, max_new_tokens: int):
    """The templated prompt written greedily in the class's batch (engine.models.batching)."""
    written = chat_state.Request(prompt=text, max_new_tokens=max_new_tokens, sampling="greedy")
    return chat_state.generate(written)


def _answer(chat, request: Request, unit: str, cancel, progress):
    should_stop = queue.stepper(cancel, progress, request.max_new_tokens, unit)
    return rag.answer(
        chat,
        request.question,
        list(request.passages),
        mode=request.mode,
        max_new_tokens=request.max_new_tokens,
        run=engine_run.Run(should_stop),
    )


def passages_for(store, found, mode: str, k: int) -> tuple:
    """What the prompt is given: the top k retrieved (a story's in story order, the book's by
    rank), the whole story, or nothing."""
    if mode == "none":
        return ()
    if mode == "story":
        return tuple(store.passages)
    top = list(found.top[:k])
    if all(store.passages[i].source == "story" for i in top):
        top.sort()  # a story's facts in story order, as the evaluation gives them
    return tuple(store.passages[i] for i in top)


def read(store_id: str, picked, question: str, k: int, floor: float, mode: str, tokens: int):
    """One question, end to end: the store, the addressing step, the chat model's answer
    from the passages (queued). A dict the page's sections and a lesson step read."""
    sample = sample_for(store_id, picked, question)
    store = text_store() if sample is None else story_store(sample)
    found = retrieve(store, question, k, floor)
    trace = answer(Request(question, passages_for(store, found, mode, k), mode, tokens))
    return dict(store=store, sample=sample, found=found, trace=trace, tokens=tokens)


def passages_mass(amap, layer: int | None, head: int | None, share: bool) -> np.ndarray:
    """Passages × generated tokens ([P, S]) of one map ``[L, H, S, P]``: the mean over every
    layer and head (the engine's ``aggregate``), or over one layer's heads, or one head;
    ``share`` divides each step's column by its mass on all the passages together."""
    weights = amap.weights
    if layer is not None:
        weights = weights[layer : layer + 1]
    if head is not None:
        weights = weights[:, head : head + 1]
    rows = rag.aggregate(weights)  # [S, P]
    if share:
        total = rows.sum(axis=1, keepdims=True)
        rows = np.divide(rows, total, out=np.zeros_like(rows), where=total > 0)
    return rows.T


def memn2n(sample: Sample):
    """(model name, Trace): the MemN2N that serves the story's task (the engine's choice,
    ``registry.for_babi_task``), or the joint model for a typed story."""
    name = mem_state.chosen(sample.task) if sample.task else mem_state.widest()
    return name, mem_state.answer(name, sample)


def evaluation() -> dict | None:
    """The shipped ``python -m engine.evaluate retrieval`` numbers, or None if not run."""
    return load_result(result_name("retrieval"))


EVALUATE_BOOK = "python -m engine.evaluate retrieval_book"


def book_evaluation() -> dict | None:
    """MiniLM's recall over the whole book (``python -m engine.evaluate retrieval_book``)."""
    return load_result(result_name("retrieval", "book"))


PASSAGE_CHARS = rag.PASSAGE_CHARS  # the longest window of the shipped text (the page says so)


def book_store_size() -> int:
    """Passages in the shipped text's store (the whole book), without embedding it."""
    return len(rag.book_windows())


def book_rows(results: dict) -> list[dict]:
    """One row per question of the book evaluation, in human column names."""
    return [
        {
            t("retrieval.col_question"): r["q"],
            t("retrieval.col_answer_book"): r["answer"],
            t("retrieval.col_rank"): "–" if r["rank"] is None else str(r["rank"]),
            t("retrieval.col_top"): r["top"],
        }
        for r in results["questions"]
    ]


def sample_for(store: str, picked, question: str) -> Sample | None:
    """The bAbI sample the question is asked about (None for the shipped text's store)."""
    if store == "text":
        return None
    if store == "own":
        return own(picked, question)
    return asked(picked, question)


def shown_passages(found) -> list[int]:
    """The passages drawn in the addressing step: all of a story, in its order; the
    ``SHOWN_SCORES`` most similar of a large store, best first."""
    n = len(found.scores)
    if n <= SHOWN_SCORES:
        return list(range(n))
    return np.argsort(-found.scores, kind="stable")[:SHOWN_SCORES].tolist()


def written(trace) -> list[str]:
    """The token written at each step (a step's query is the token before it)."""
    out = trace.outputs
    n = out["n_prompt"]
    steps = trace.maps["passages"].shape[2] if "passages" in trace.maps else 0
    return list(out["tokens"][n : n + steps])


def rest_of_prompt(amap) -> float:
    """The mean share of a step's attention that falls outside every passage (on the first
    token, the instruction, the question, the tokens written so far)."""
    if not amap.weights.size:
        return 0.0
    return float(1.0 - rag.aggregate(amap.weights).sum(axis=1).mean())


def listed(view: dict) -> list[dict]:
    """The passages the prompt holds, numbered as in the prompt, with their cosines."""
    scores = view["found"].scores
    index = {p.id: i for i, p in enumerate(view["store"].passages)}
    return [
        {
            "number": n + 1,
            "id": p["id"],
            "text": p["text"],
            "support": p["support"],
            "score": float(scores[index[p["id"]]]) if p["id"] in index else None,
        }
        for n, p in enumerate(view["trace"].outputs["passages"])
    ]


def passage_rows(view: dict) -> list[dict]:
    """Every passage of the store with its cosine, softmax weight and place in the prompt."""
    found, trace = view["found"], view["trace"]
    placed = {p["id"]: i + 1 for i, p in enumerate(trace.outputs["passages"])}
    return [
        {
            "id": p.id,
            "text": p.text,
            "support": bool(p.support),
            "cosine": float(found.scores[i]),
            "weight": float(found.weights[i]),
            "in_prompt": placed.get(p.id, 0),
        }
        for i, p in enumerate(view["store"].passages)
    ]


EVALUATE = "python -m engine.evaluate retrieval"
COLUMNS = (  # (column id, where in a task's record)
    ("accuracy_retrieved", ("accuracy", "retrieved")),
    ("accuracy_story", ("accuracy", "story")),
    ("accuracy_none", ("accuracy", "none")),
    ("recall_1", ("recall_at_k", "1")),
    ("recall_3", ("recall_at_k", "3")),
    ("recall_5", ("recall_at_k", "5")),
    ("attention_hit", ("attention_hit_rate",)),
    ("attention_chance", ("attention_chance_rate", "story")),
    ("attention_hit_retrieved", ("attention_hit_rate_retrieved",)),
    ("memn2n_hit", ("memn2n_hit_rate",)),
    ("memn2n_accuracy", ("memn2n_accuracy",)),
    ("n", ("n",)),
)


def _at(record: dict, path: tuple[str, ...]):
    for part in path:
        if not isinstance(record, dict) or part not in record:
            return None
        record = record[part]
    return record


def measured_rows(results: dict) -> list[dict]:
    """One row per task, headed in the reader's language (a missing number left empty)."""
    heads = {c: t(f"retrieval.col_{c}") for c, _ in COLUMNS}
    rows = []
    for task, record in sorted(results.get("tasks", {}).items(), key=lambda kv: int(kv[0])):
        row = {t("retrieval.col_task"): f"{task}: {t(f'memory.babi.task{task}')}"}
        for column, path in COLUMNS:
            value = _at(record, path)
            cast = int if column == "n" else float  # one type per column (Arrow)
            row[heads[column]] = None if value is None else cast(value)
        rows.append(row)
    return rows


def conditions(results: dict) -> dict:
    """n, k, seed, decoding and the machine the evaluation states it ran in."""
    stated = results.get("conditions", {})
    return {
        "n": results.get("n", "?"),
        "k": results.get("k", "?"),
        "seed": results.get("seed", "?"),
        "model": stated.get("chat_model", "?"),
        **{k: in_language(stated.get(k, "?")) for k in ("dtype", "threads", "machine")},
    }


def in_language(written: str) -> str:
    """A condition the evaluation wrote in English, in the reader's language: the
    ``retrieval.stated.*`` text whose English template it matches, else as written."""
    for key, template in catalog("en").items():
        if key.startswith("retrieval.stated."):
            parts = re.split(r"\{(\w+)\}", template)  # literal, name, literal, …
            pattern = "".join(
                re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)" for i, p in enumerate(parts)
            )
            found = re.fullmatch(pattern, written)
            if found:
                return t(key, **found.groupdict())
    return written


def examples(results: dict) -> list[dict]:
    """The first questions of each task with every answer as written (wrong ones too)."""
    rows = []
    for task, record in sorted(results.get("tasks", {}).items(), key=lambda kv: int(kv[0])):
        for ex in record.get("examples", []):
            row = {t("retrieval.col_task"): str(task)}
            row[t("retrieval.col_question")] = ex.get("question", "")
            row[t("retrieval.col_expected")] = ex.get("expected", "")
            for mode in MODES:
                row[t(f"retrieval.col_said_{mode}")] = str(ex.get(mode, ""))
            rows.append(row)
    return rows


# ---- a lesson step ----------------------------------------------------------------------

OWN_QUESTION = "Where is Mary?"


@st.cache_data(max_entries=32, show_spinner=False)
def answers(task: int) -> tuple[str, ...]:
    """Every answer the task's test set has: what a reply is searched for."""
    return tuple(sorted({s.answer for s in dataset(task, "test")}))


def verdict(said: str, sample: Sample | None, escape=str) -> str:
    """The bAbI answer, when known, and whether the reply names it by the evaluation's rule:
    the first word of the reply that is a possible answer of the task (a typed story's
    own answer: the reply's first content word). "" for a question with no known answer;
    ``escape`` makes the expected answer (typed, for a pasted bAbI story) inert."""
    if sample is None or not sample.answer:
        return ""
    if sample.task:
        word = rag.named_answer(said, answers(sample.task))
    else:
        word = rag.first_content_word(said, sample.question)
    if word == sample.answer:
        right = t("retrieval.correct")
    else:
        right = t("retrieval.wrong", word=word) if word else t("retrieval.wrong_none")
    return t("retrieval.expected", answer=escape(sample.answer), verdict=right)


def book_verdict(trace, escape=str) -> str:
    """For a question of the book evaluation (``python -m engine.evaluate retrieval_book``):
    the book's answer, where MiniLM ranks the passage that holds it (the same store and
    question as measured, so the same rank: the prompt's passages are the top ones, so it
    is in the prompt when its rank is within their number), and whether the reply holds
    the answer's words (:func:`engine.analysis.retrieval.holds_answer`); "" for any other
    question. ``escape`` makes the answer inert (it is the evaluation's text)."""
    book = book_evaluation()
    asked = words(trace.inputs["question"])
    row = next((r for r in (book or {}).get("questions", []) if words(r["q"]) == asked), None)
    if row is None:
        return ""
    rank, held = row["rank"], rag.holds_answer(trace.outputs["answer"], row["answer"])
    in_prompt = len(trace.outputs["passages"])
    where = "book_in_prompt" if rank is not None and rank <= in_prompt else "book_outside"
    where = where if in_prompt else "book_no_passages"  # "no passages": asked without context
    return t(
        "retrieval.book_answer",
        answer=escape(row["answer"]),
        rank="–" if rank is None else rank,
        n=book["store_passages"],
        where=t(f"retrieval.{where}", k=in_prompt, rank=rank),
        held=t("retrieval.book_held" if held else "retrieval.book_not_held"),
    )


def _picked(params: dict):
    store_id = params.get("store", "babi")
    if store_id == "babi":
        picked = stories(int(params.get("task", 1)))[int(params.get("story", FIRST_STORY))]
        return store_id, picked, picked.question
    if store_id == "own":
        return store_id, params.get("text", ""), OWN_QUESTION
    return store_id, None, EXAMPLE_QUESTION


def _view_of(value: str | None) -> int | None:
    return None if value in (None, "mean") else int(value)


def side(sample: Sample, tokens: int, escape=str) -> dict:
    """MemN2N and the chat model on one story: MemN2N's trace, and the chat model's answer
    with the whole story as passages (queued), its mass per sentence (mean over layers and
    heads) and tokens written, and the verdict line."""
    passages = tuple(story_store(sample).passages)
    trace = answer(Request(sample.question, passages, "story", tokens), "retrieval.queue_story")
    return dict(
        memn2n=memn2n(sample),
        trace=trace,
        mass=passages_mass(trace.maps["passages"], None, None, False),
        written=written(trace),
        verdict=verdict(trace.outputs["answer"], sample, escape),
    )


def lesson(params: dict, escape=str) -> dict:
    """What a lesson step's retrieval view draws (``sections.retrieval.draw_lesson``), from its
    link's parameters (validated by kit.decks): the page's generation and its section.
    ``escape`` makes typed text inert in the verdict lines."""
    if not available():
        return {"missing": chat_dir()}
    store_id, picked, default = _picked(params)
    shown = read(
        store_id,
        picked,
        params.get("question", default),
        int(params.get("k", 3)),
        float(params.get("floor", rag.FLOOR)),
        params.get("context", "retrieved"),
        int(params.get("tokens", 12)),
    )
    trace, sample = shown["trace"], shown["sample"]
    shown |= dict(section=params.get("section", "reading"), listed=listed(shown))
    shown["verdict"] = verdict(trace.outputs["answer"], sample, escape)
    shown["order"] = shown_passages(shown["found"])
    layer, head = _view_of(params.get("layer")), _view_of(params.get("head"))
    shown |= dict(layer=layer, head=head, command=EVALUATE)
    if "passages" in trace.maps and trace.maps["passages"].shape[-1]:
        share = params.get("share") == "1"
        shown["mass"] = passages_mass(trace.maps["passages"], layer, head, share)
    shown["written"] = written(trace)
    if shown["section"] == "side-by-side" and sample is not None:
        shown["side"] = side(sample, shown["tokens"], escape)
    if shown["section"] == "measured":
        results = evaluation()
        shown["measured"] = measured_rows(results) if results else None
    return shown
