"""Retrieval-augmented answering, traced: which retrieved passage the chat model reads.

The pipeline of retrieval-augmented generation (Lewis et al. 2020), small enough to
watch every weight:

1. **Store.** Passages (one bAbI sentence each, or a 2–3-sentence window of the shipped
   English text) embedded by all-MiniLM-L6-v2 the sentence-transformers way: mean of
   the last hidden states over real tokens, then L2-normalised, so a dot product is a
   cosine.
2. **Addressing.** The question is embedded the same way; s_i = cos(q, m_i) for every
   passage i, the top k with s_i ≥ the floor are retrieved. p_i = softmax(τ · s_i)
   over the whole store is drawn as the addressing step — the analogue of MemN2N's
   hop-1 weights p_i = softmax(uᵀ m_i). τ = :data:`SCALE` = 20 is the scale of the
   contrastive loss all-MiniLM-L6-v2 was trained with (sentence-transformers'
   MultipleNegativesRankingLoss), so p is the distribution the model was trained to
   make sharp; with τ = 1 every p_i would be ≈ 1/N.
3. **Reading.** The passages go into one user turn of the chat model
   (:mod:`engine.models.chat`), numbered, before the question; the model answers
   greedily and every step's attention row is kept.
4. **Attention mass per passage.** For step s, layer l, head h: the mass on passage j is
   Σ_{t ∈ span_j} α^{l,h}_{s,t}, the sum of the step's weights over the passage's
   tokens (the tokens of its text, not of its "[j]" number). The aggregate drawn by
   default is the mean over layers and heads (:func:`aggregate`); the passage "most
   read" for an answer is the argmax of that aggregate averaged over the steps that
   wrote the answer's tokens (not the step that wrote the end-of-turn token).

Limits: k from 1 to :data:`MAX_K`; k larger than the store is clamped to the store's
size (a note, not an error: ``Retrieval.requested_k`` keeps what was asked and
``Retrieval.note`` says so); a question of at most :data:`MAX_QUESTION_CHARS`
characters; the floor from −1 to 1 (default :data:`FLOOR`). A prompt over
``engine.models.chat.MAX_PROMPT_TOKENS`` tokens (or ``MAX_CHARS`` characters) drops
passages until it fits and says which (``Prompt.truncated``): the lowest-ranked last
ones in mode "retrieved" (passages are given best first), the earliest sentences in
mode "story" (MemN2N's memory keeps the last sentences too). Passage text is kept
verbatim; whoever shows it escapes it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.data.babi import Sample, words
from engine.errors import InputError
from engine.messages import Message
from engine.models import chat as chat_model
from engine.models import registry
from engine.models.cards.pretrained import chat_card
from engine.models.pretrained import MINILM
from engine.projection import CACHE_DIR
from engine.run import Run
from engine.trace import AttentionMap, Trace

MAX_K = 10
FLOOR = 0.0
SCALE = 20.0  # τ: all-MiniLM-L6-v2's training scale (MultipleNegativesRankingLoss)
MAX_QUESTION_CHARS = 300
MODES = ("retrieved", "story", "none")
TEXT = Path(__file__).resolve().parents[2] / "assets" / "text" / "pride-and-prejudice.txt"
PASSAGE_CHARS = 220  # ≤ 63 chat-model tokens for every window of the shipped text
EMBED_BATCH = 64
MINILM_MAX_TOKENS = 256  # what sentence-transformers reads of a text with this model
DISK_MIN = 50  # stores this large are worth a file; a bAbI story embeds in milliseconds
STORE_DIR = CACHE_DIR / "retrieval"

INSTRUCTION = "Answer the question using the passages. Reply with one word."
INSTRUCTION_NONE = "Answer the question. Reply with one word."
# Words skipped before the first content word of an answer (with the question's words).
FUNCTION_WORDS = frozenset(
    "a an the in at on to of into from is was are were be been it he she they his her "
    "their its answer located currently now there".split()
)


@dataclass(frozen=True)
class Passage:
    id: str
    text: str
    source: str  # "story" | "text"
    support: bool = False  # a known supporting fact of the question


def story_passages(sample: Sample) -> list[Passage]:
    """One passage per sentence of a bAbI story; ``babi-i`` is the sentence's index i."""
    support = set(sample.support)
    return [
        Passage(f"babi-{i}", text, "story", i in support) for i, text in enumerate(sample.story)
    ]


# -- the shipped English text as passages ---------------------------------------------------
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'’”_)]*\s+(?=[\"'“‘_(]*[A-Z])")
_TITLES = ("Mr.", "Mrs.", "Dr.", "St.", "Miss.")


def _sentences(paragraph: str) -> list[str]:
    """A paragraph's sentences; a split after a title (``Mr. Bennet``) is undone."""
    out: list[str] = []
    start = 0
    for m in _SENTENCE_END.finditer(paragraph):
        piece = paragraph[start : m.start()] + m.group(0).rstrip()
        if out and out[-1].endswith(_TITLES):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
        start = m.end()
    tail = paragraph[start:].strip()
    if tail:
        if out and out[-1].endswith(_TITLES):
            out[-1] = f"{out[-1]} {tail}"
        else:
            out.append(tail)
    return out


def _windows(text: str) -> list[str]:
    """Consecutive sentences packed greedily into windows of ≤ PASSAGE_CHARS characters;
    a longer sentence is cut at word boundaries. Chapter headings are left out."""
    body = text[text.index("Chapter 1") :]
    pieces: list[str] = []
    for paragraph in re.split(r"\n\s*\n", body):
        paragraph = " ".join(paragraph.split())
        if not paragraph or re.fullmatch(r"Chapter \d+", paragraph):
            continue
        for sentence in _sentences(paragraph):
            pieces += textwrap.wrap(sentence, PASSAGE_CHARS, break_long_words=False)
    windows, current = [], ""
    for piece in pieces:
        if current and len(current) + 1 + len(piece) > PASSAGE_CHARS:
            windows.append(current)
            current = piece
        else:
            current = f"{current} {piece}" if current else piece
    return windows + ([current] if current else [])


@functools.cache
def book_windows() -> tuple[str, ...]:
    """Every passage of the shipped book, in reading order (4,026 for the shipped text)."""
    return tuple(_windows(TEXT.read_text(encoding="utf-8")))


def text_passages(n: int | None = None) -> list[Passage]:
    """The whole book (``n`` None), or ``n`` windows spread evenly over it (deterministic,
    for quick tests); ``text-i`` is the window's index in the book."""
    windows = book_windows()
    n = len(windows) if n is None else max(1, min(int(n), len(windows)))
    chosen = np.unique(np.linspace(0, len(windows) - 1, n).round().astype(int))
    return [Passage(f"text-{i}", windows[i], "text") for i in chosen]


# -- embeddings ---------------------------------------------------------------------------
class Embedder:
    """all-MiniLM-L6-v2 sentence embeddings: mean pooling over real tokens, L2-normalised."""

    def __init__(self, model):
        self.model = model  # the loaded MiniLM card
        self.name = model.display

    def embed(self, texts) -> np.ndarray:
        """``[N, 384]`` float32 unit vectors, one per text."""
        import torch  # heavy: kept out of start-up

        texts = [str(t) for t in texts]
        out = [np.zeros((0, self.model.model.config.hidden_size), np.float32)]
        tok = self.model.tokenizer
        for i in range(0, len(texts), EMBED_BATCH):
            enc = tok(
                texts[i : i + EMBED_BATCH],
                padding=True,
                truncation=True,
                max_length=MINILM_MAX_TOKENS,
                return_tensors="pt",
            )
            with torch.no_grad():
                h = self.model.model(**enc).last_hidden_state  # (B, T, d)
            m = enc["attention_mask"].unsqueeze(-1).to(h.dtype)  # (B, T, 1)
            mean = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
            out.append(torch.nn.functional.normalize(mean, p=2, dim=1).float().numpy())
        return np.concatenate(out).astype(np.float32)


def embedder(model=None) -> Embedder:
    """A MiniLM embedder over ``model`` (loaded now when None, ≈ 1.5 s). The engine keeps
    no model: the app passes the one MiniLM its model cache holds, a command its own."""
    return Embedder(model if model is not None else registry.get(registry.MINILM).load())


@dataclass
class Store:
    passages: list[Passage]
    vectors: np.ndarray  # [N, 384], unit rows
    model: str = MINILM


def _digest(passages: list[Passage], model: str) -> str:
    h = hashlib.sha256(model.encode())
    for p in passages:
        h.update(b"\0" + p.text.encode())
    return h.hexdigest()[:24]


def build_store(passages: list[Passage], embedder: Embedder) -> Store:
    """Embed every passage. Stores of ≥ DISK_MIN passages are kept as safetensors under
    ``$ATTENTION_STUDIO_CACHE/retrieval`` keyed by a hash of the model and the texts,
    so a restart reads them back instead of embedding again."""
    from safetensors import SafetensorError  # heavy: only when a store is built
    from safetensors.numpy import load_file, save_file  # heavy: only when a store is built

    passages = list(passages)
    path = STORE_DIR / f"store-{_digest(passages, embedder.name)}.safetensors"
    if len(passages) >= DISK_MIN and path.is_file():
        try:
            vectors = load_file(path)["vectors"]
            if vectors.shape == (len(passages), vectors.shape[1]) and vectors.dtype == np.float32:
                return Store(passages, vectors, embedder.name)
        except (OSError, KeyError, ValueError, SafetensorError):
            pass  # a damaged file is rebuilt below
    vectors = embedder.embed([p.text for p in passages])
    if len(passages) >= DISK_MIN:
        try:
            STORE_DIR.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            save_file({"vectors": vectors}, str(tmp))
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only cache costs one embedding per process, nothing more
    return Store(passages, vectors, embedder.name)


def text_store(encoder: Embedder) -> Store:
    """The whole shipped book as a store. Embedding its 4,026 passages takes ≈ 1–2 min of
    one core, so ``scripts/setup.sh`` does it once and the result is read back from the
    cache directory (under a second)."""
    return build_store(text_passages(), encoder)


# -- addressing ---------------------------------------------------------------------------
@dataclass
class Retrieval:
    scores: np.ndarray  # [N] cosine s_i
    top: list[int]  # indices, best first, only those with s_i ≥ floor
    weights: np.ndarray  # [N] softmax(τ · s) over the store
    k: int  # after clamping to the store's size
    floor: float
    requested_k: int = 0
    scale: float = SCALE
    timings: dict = field(default_factory=dict)

    @property
    def note(self) -> Message | None:
        """Says so when k was larger than the store and was clamped."""
        if self.requested_k > self.k:
            return Message("retrieval.k_clamped", n=self.k, k=self.requested_k)
        return None


def check_question(question) -> str:
    if not isinstance(question, str) or not question.strip():
        raise InputError("retrieval.empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise InputError("retrieval.too_long", n=len(question), limit=MAX_QUESTION_CHARS)
    return question.strip()


def check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= MAX_K:
        raise InputError("retrieval.k", limit=MAX_K, value=k)
    return int(k)


def retrieve(
    store: Store, question: str, k: int = 3, *, floor: float = FLOOR, embedder: Embedder
) -> Retrieval:
    """Top-k passages of ``store`` by cosine with ``question`` (see the module docstring).

    InputError: an empty or over-long question, k outside 1..MAX_K, a floor outside
    [−1, 1], an empty store, or no passage with s_i ≥ floor (``retrieval.none_over_floor``).
    k larger than the store is clamped, not refused.
    """
    question, asked = check_question(question), check_k(k)
    if isinstance(floor, bool) or not isinstance(floor, (int, float)) or not -1 <= floor <= 1:
        raise InputError("retrieval.floor", value=floor)
    if not store.passages:
        raise InputError("retrieval.empty_store")
    t0 = time.perf_counter()
    q = embedder.embed([question])[0]  # (384,)
    t1 = time.perf_counter()
    scores = store.vectors @ q  # (N,) cosines: both sides are unit vectors
    z = SCALE * scores
    weights = np.exp(z - z.max())
    weights /= weights.sum()
    k = min(asked, len(store.passages))
    order = np.argsort(-scores, kind="stable")[:k]
    top = [int(i) for i in order if scores[i] >= floor]
    if not top:
        raise InputError("retrieval.none_over_floor", floor=float(floor), best=float(scores.max()))
    t2 = time.perf_counter()
    return Retrieval(
        scores.astype(np.float32),
        top,
        weights.astype(np.float32),
        k,
        float(floor),
        asked,
        timings={"embed_ms": (t1 - t0) * 1e3, "search_ms": (t2 - t1) * 1e3},
    )


# -- the prompt ---------------------------------------------------------------------------
@dataclass
class Prompt:
    text: str  # the user turn
    ids: list[int]  # after the chat template, equal to engine.models.chat.encode(text)
    spans: list[tuple[int, int]]  # [start, end) token range of each passage in ids
    passages: list[Passage]  # those that fitted, in prompt order
    truncated: list[Passage]  # left out to stay within the model's limits
    mode: str = "retrieved"

    @property
    def note(self) -> Message | None:
        """Says which passages were left out, when any were."""
        if not self.truncated:
            return None
        ids = ", ".join(p.id for p in self.truncated)
        limit = chat_model.MAX_PROMPT_TOKENS
        return Message("retrieval.truncated", n=len(self.truncated), limit=limit, ids=ids)


def _user_turn(question: str, passages: list[Passage]) -> tuple[str, list[tuple[int, int]]]:
    """The user turn and each passage's character range in it."""
    if not passages:
        return f"{INSTRUCTION_NONE}\n\nQuestion: {question}", []
    text, chars = f"{INSTRUCTION}\n\nPassages:", []
    for i, p in enumerate(passages, start=1):
        text += f"\n[{i}] "
        chars.append((len(text), len(text) + len(p.text)))
        text += p.text
    return f"{text}\n\nQuestion: {question}", chars


def _rendered(chat, text: str) -> tuple[list[int], list[tuple[int, int]], int]:
    """Ids and character offsets of the templated turn, and where ``text`` starts in it."""
    tok = chat.tokenizer
    rendered = tok.apply_chat_template(
        [{"role": "user", "content": text}], add_generation_prompt=True, tokenize=False
    )
    enc = tok(rendered, add_special_tokens=False, return_offsets_mapping=True)
    return list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]], rendered.find(text)


def _token_span(offsets, start: int, end: int) -> tuple[int, int]:
    """Tokens whose characters overlap [start, end): a leading-space token counts."""
    inside = [i for i, (a, b) in enumerate(offsets) if a < end and b > start]
    return inside[0], inside[-1] + 1


def build_prompt(chat, question: str, passages: list[Passage], *, mode: str = "retrieved"):
    """The chat model's prompt: an instruction, the numbered passages, the question.

    Passages appear in the order given. Those that do not fit are dropped (see the
    module docstring) and listed in ``Prompt.truncated``, in their original order.
    Mode "none" puts no passage in the prompt.
    """
    if mode not in MODES:
        raise InputError("retrieval.mode", mode=mode, known=", ".join(MODES))
    question = check_question(question)
    kept = [] if mode == "none" else list(passages)
    if mode != "none" and not kept:
        raise InputError("retrieval.no_passages")
    for p in kept:
        chat_model.check_prompt(p.text)  # control characters: a message, not a traceback
    dropped: list[Passage] = []
    while True:
        text, chars = _user_turn(question, kept)
        ids, offsets, at = _rendered(chat, text)
        if len(ids) <= chat_model.MAX_PROMPT_TOKENS and len(text) <= chat_model.MAX_CHARS:
            break
        if not kept:
            raise InputError("chat.too_many_tokens", n=len(ids), limit=chat_model.MAX_PROMPT_TOKENS)
        dropped.append(kept.pop(0 if mode == "story" else -1))
    if ids != chat_model.encode(chat, text):
        raise RuntimeError("the template's tokens differ from engine.models.chat.encode")
    spans = [_token_span(offsets, at + a, at + b) for a, b in chars]
    order = {p.id: i for i, p in enumerate(passages)}
    dropped.sort(key=lambda p: order[p.id])
    return Prompt(text, ids, spans, kept, dropped, mode)


# -- attention mass per passage -------------------------------------------------------------
def passage_mass(weights: np.ndarray, spans) -> np.ndarray:
    """``[L, H, S, K]`` step weights → ``[L, H, S, P]``: Σ over each passage's tokens."""
    w = np.asarray(weights)
    L, H, S, K = w.shape
    if any(not 0 <= a < b <= K for a, b in spans):
        raise ValueError(f"a span lies outside the {K} key positions: {list(spans)}")
    if not spans:
        return np.zeros((L, H, S, 0), np.float32)
    return np.stack([w[..., a:b].sum(-1) for a, b in spans], axis=-1).astype(np.float32)


def aggregate(mass: np.ndarray) -> np.ndarray:
    """``[L, H, S, P]`` → ``[S, P]``: the mean over layers and heads."""
    return np.asarray(mass).mean(axis=(0, 1))


def answer_steps(trace: Trace) -> list[int]:
    """The steps that wrote the answer's tokens (not a special end-of-turn token)."""
    p, special = trace.outputs["n_prompt"], trace.outputs["special"]
    return [s for s in range(len(trace.outputs["kept"])) if not special[p + s]]


def most_read(mass: np.ndarray, steps: list[int]) -> int | None:
    """The passage with the most mass: :func:`aggregate` averaged over ``steps`` (all
    steps when none is given); None without passages."""
    agg = aggregate(mass)
    if agg.shape[1] == 0 or agg.shape[0] == 0:
        return None
    rows = agg[steps] if steps else agg
    return int(rows.mean(0).argmax())


def _label(i: int, p: Passage, n_words: int = 4) -> str:
    head = p.text.split()
    return f"[{i}] " + " ".join(head[:n_words]) + ("…" if len(head) > n_words else "")


def answer(
    chat,
    question: str,
    passages: list[Passage],
    *,
    mode: str = "retrieved",
    max_new_tokens: int = 12,
    run: Run | None = None,
    write=None,
) -> Trace:
    """Greedy answer from the passages, with ``maps["passages"]`` ``[L, H, S, P]`` (the
    mass of step s on passage j; P = 0 in mode "none") beside the chat model's own maps.

    ``write(text, max_new_tokens)`` writes the templated prompt greedily and returns its
    Trace; by default the chat model's card alone (its options checked, ``run`` asked
    before each token; the app passes its batch, which gives the same tokens and rows)."""
    prompt = build_prompt(chat, question, passages, mode=mode)
    if write is None:
        trace = chat_card().trace(
            prompt.text, model=chat, run=run, max_new_tokens=max_new_tokens, read_map="no"
        )
    else:
        trace = write(prompt.text, max_new_tokens)
    if trace.outputs["token_ids"][: len(prompt.ids)] != prompt.ids:
        raise RuntimeError("generate read other tokens than the prompt built here")
    gen = trace.maps["generation"]
    mass = passage_mass(gen.weights, prompt.spans)
    steps = answer_steps(trace)
    amap = AttentionMap(
        mass,
        gen.query_labels,
        [_label(i, p) for i, p in enumerate(prompt.passages, start=1)],
        "self",
        normalized=False,  # the rest of each row is on the instruction, question and template
        note=Message("note.passage_mass"),
    )
    listed = [
        {"id": p.id, "text": p.text, "source": p.source, "support": p.support, "span": list(s)}
        for p, s in zip(prompt.passages, prompt.spans, strict=True)
    ]
    outputs = {
        **trace.outputs,
        "passages": listed,
        "truncated": [{"id": p.id, "text": p.text, "support": p.support} for p in prompt.truncated],
        "prompt_limit": chat_model.MAX_PROMPT_TOKENS,  # what made them truncated
        "answer": trace.outputs["generated"].strip(),
        "prompt_mode": mode,
        "answer_steps": steps,
        "most_read": most_read(mass, steps),
        "aggregate": "mean over layers and heads",
    }
    return Trace(
        model=trace.model,
        task="retrieval",
        inputs={**trace.inputs, "question": question, "mode": mode},
        outputs=outputs,
        maps={**trace.maps, "passages": amap},
        timings=trace.timings,
    )


def first_content_word(text: str, question: str = "") -> str:
    """The first word of ``text`` that is neither a function word (article, preposition,
    pronoun, form of "be", "answer") nor a word of the question; "" when there is none."""
    skip = FUNCTION_WORDS | set(words(question))
    return next((w for w in words(text) if w not in skip), "")


TITLES = frozenset("mr mrs miss sir lady colonel".split())


def holds_answer(text: str, answer: str) -> bool:
    """Whether ``text`` holds every content word of ``answer`` (not a function word or a
    title): how a reply on the book is read against the book's answer ("Lambton" holds
    "Lambton"; "Mr. Bingley" is held by "Bingley"; "her sister" holds no "Netherfield")."""
    need = set(words(answer)) - FUNCTION_WORDS - TITLES
    return bool(need) and need <= set(words(text))


def named_answer(text: str, candidates) -> str:
    """The first word of ``text`` that is one of ``candidates`` (the answers a bAbI task
    can have, e.g. its places); "" when it names none."""
    known = {c.lower() for c in candidates}
    return next((w for w in words(text) if w in known), "")
