"""RULER-style tasks that can fail, generated from a seed on the chat model's own window.

RULER (Hsieh et al. 2024, arXiv 2404.06654; github.com/hsiehjackson/RULER) scores a
long-context model on synthetic tasks whose answer is planted in a haystack; kvpress
scores its presses on it. Here the haystack is the shipped *Pride and Prejudice*
(assets/text/), a run of its sentences from a seeded start, cut to the length asked for,
and the templates are RULER's (``synthetic.yaml``):

- ``niah_number``, ``niah_uuid``: one needle, "One of the special magic numbers for
  {key} is: {value}.", at a seeded depth; the value a 7-digit number or a UUID
  (RULER's niah_single_2 / _3 on an essay haystack);
- ``niah_multikey``: the needle among three needles of other keys (niah_multikey_1);
- ``niah_multivalue``: four values under one key, all asked for (niah_multivalue);
- ``vt``: variable tracking, one chain of 4 hops "VAR X = VAR Y" from a number, every
  name in the chain asked for (RULER ``variable_tracking``);
- ``cwe``: common-word extraction, a numbered list of the book's words in which 10
  appear 30 times and the rest 3, the 10 asked for (``common_words_extraction``);
- ``qa``: a question about the book (``pride-and-prejudice-questions.json``) whose
  passage, the paragraph stating the answer, sits at a seeded depth among others.

The prompt is the ChatML turn "instruction, haystack, question", then the assistant's
turn opened with RULER's answer prefix. ``context_ids`` run to the end of the haystack
(what a press compresses); ``question_ids`` are the rest. Scores are RULER's
(``string_match_all``: the share of answers found in the output, case-insensitive;
``qa``: ``string_match_part``, 1 if any answer is found).
"""

from __future__ import annotations

import functools
import json
import random
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

from engine.errors import InputError

TEXT = Path(__file__).resolve().parents[2] / "assets" / "text"
BOOK = TEXT / "pride-and-prejudice.txt"
QUESTIONS = TEXT / "pride-and-prejudice-questions.json"
TASKS = ("niah_number", "niah_uuid", "niah_multikey", "niah_multivalue", "vt", "cwe", "qa")
LENGTHS = (1024, 2048)
MIN_LENGTH = 256
# The chat model (SmolLM2-135M) was trained on 2,048-token sequences: a prompt, haystack
# and question together, is at most that long; its answer (≤ MAX_ANSWER) follows.
WINDOW = 2048
MAX_ANSWER = 48
CONTINUATION = 32  # tokens of the book after the haystack, read for a perplexity

ADJECTIVES = tuple(
    """
    amber brave calm dusty eager faint gentle hollow icy jolly keen lively misty noble
    orange plain quiet rapid silent tidy upper vivid wary young zesty bitter crisp dark
    early fuzzy
    """.split()
)
NOUNS = tuple(
    """
    anchor badger candle dragon engine falcon garden harbor island jacket kettle ladder
    meadow needle orchard pepper quarry river saddle tunnel violin walnut yard zebra basket
    cactus dolphin feather glacier hammer
    """.split()
)

NIAH_INTRO = (
    "Some special magic {kind} are hidden within the following text. Make sure to memorize "
    "it. I will quiz you about the {kind} afterwards.\n"
)
NEEDLE = "One of the special magic {kind} for {key} is: {value}."
CWE_COMMON = 10


@dataclass(frozen=True)
class Example:
    """One generated example: its prompt in two parts and the answers it is scored on."""

    task: str
    length: int
    seed: int
    context_ids: tuple[int, ...]  # template + instruction + haystack: what a press sees
    question_ids: tuple[int, ...]  # question, end of turn, assistant turn, answer prefix
    question: str
    answers: tuple[str, ...]
    haystack: str
    continuation_ids: tuple[int, ...] = ()  # the book's next tokens after the haystack

    @property
    def n_tokens(self) -> int:
        return len(self.context_ids) + len(self.question_ids)

    def score(self, output: str) -> float:
        """RULER's string match: the share of answers in ``output`` (qa: any of them)."""
        found = [a.lower() in output.lower() for a in self.answers]
        return float(any(found)) if self.task == "qa" else sum(found) / len(found)


@functools.cache
def _sentences() -> tuple[str, ...]:
    text = BOOK.read_text(encoding="utf-8")
    return tuple(s for s in re.split(r"(?<=[.!?])\s+", text) if s.strip())


@functools.cache
def _paragraphs() -> tuple[str, ...]:
    text = BOOK.read_text(encoding="utf-8")
    return tuple(p.strip() for p in text.split("\n\n") if p.strip())


def _key(rng: random.Random, taken: set[str]) -> str:
    while (key := f"{rng.choice(ADJECTIVES)}-{rng.choice(NOUNS)}") in taken:
        pass
    taken.add(key)
    return key


def _number(rng: random.Random) -> str:
    return str(rng.randint(1_000_000, 9_999_999))


def _needles(task: str, rng: random.Random):
    """(needle sentences, question, answer prefix, answers, instruction) of a niah task."""
    kind = "uuids" if task == "niah_uuid" else "numbers"

    def value() -> str:
        return (
            str(uuid.UUID(int=rng.getrandbits(128), version=4)) if kind == "uuids" else _number(rng)
        )

    taken: set[str] = set()
    key = _key(rng, taken)
    if task == "niah_multivalue":
        answers = [value() for _ in range(4)]
        needles = [NEEDLE.format(kind=kind, key=key, value=v) for v in answers]
        question = (
            f"What are all the special magic {kind} for {key} mentioned in the provided text?"
        )
        prefix = f"The special magic {kind} for {key} mentioned in the provided text are"
    else:
        answers = [value()]
        needles = [NEEDLE.format(kind=kind, key=key, value=answers[0])]
        if task == "niah_multikey":
            needles += [
                NEEDLE.format(kind=kind, key=_key(rng, taken), value=value()) for _ in range(3)
            ]
        question = (
            f"What is the special magic {kind[:-1]} for {key} mentioned in the provided text?"
        )
        prefix = f"The special magic {kind[:-1]} for {key} mentioned in the provided text is"
    return needles, question, prefix, answers, NIAH_INTRO.format(kind=kind)


def _variables(rng: random.Random):
    names = ["".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(5)) for _ in range(5)]
    value = str(rng.randint(10_000, 99_999))
    chain = [f"VAR {names[0]} = {value}."] + [
        f"VAR {b} = VAR {a}." for a, b in zip(names, names[1:], strict=False)
    ]
    intro = "Memorize and track the chain(s) of variable assignment hidden in the following text.\n"
    question = (
        f"Question: Find all variables that are assigned the value {value} in the text above."
    )
    prefix = (
        "Answer: According to the chain(s) of variable assignment in the text above, 5 "
        f"variables are assigned the value {value}, they are:"
    )
    return chain, question, prefix, names, intro


def _qa(rng: random.Random):
    items = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    paragraphs = _paragraphs()
    while True:
        item = rng.choice(items)
        ev = [e.lower() for e in item["evidence"]]
        found = [p for p in paragraphs if any(e in p.lower() for e in ev)]
        found = [p for p in found if item["answer"].lower() in p.lower()]
        if found and len(found[0]) < 1500:
            break
    intro = "Answer the question based on the given passages.\n"
    question = f"Answer the question based on the given passages.\nQuestion: {item['q']}"
    return [found[0]], question, "Answer:", [item["answer"]], intro


CWE_INTRO = (
    "Below is a numbered list of words. In these words, some appear more often than others. "
    "Memorize the ones that appear most often.\n"
)
CWE_QUESTION = "Question: What are the 10 most common words in the above list?"
CWE_PREFIX = "Answer: The top 10 words that appear most often in the list are:"


def _cwe(tok, rng: random.Random, budget: int) -> tuple[str, list[str]]:
    """RULER's word list: 10 common words ×30, others ×3, shuffled and numbered; the
    words are the book's. RULER repeats the common words 30 times in 4k tokens and more;
    here they take half the list (≈ 5 tokens an entry): 9 times in 1k tokens, 19 in 2k."""
    words = sorted({w.lower() for w in re.findall(r"[A-Za-z]{4,}", " ".join(_sentences()[:3000]))})
    common = rng.sample(words, CWE_COMMON)
    rest = [w for w in words if w not in common]
    rng.shuffle(rest)
    listed = [w for w in common for _ in range(max(4, budget // (2 * CWE_COMMON * 5)))]
    for w in rest:  # rare words three at a time while the list fits
        trial = listed + [w] * 3
        if len(tok.encode(" ".join(f"{i}. {x}" for i, x in enumerate(trial, 1)))) > budget:
            break
        listed = trial
    rng.shuffle(listed)
    return " ".join(f"{i}. {x}" for i, x in enumerate(listed, 1)), common


def _haystack(tok, rng: random.Random, budget: int, inserts: list[str]) -> tuple[str, int]:
    """A run of the book's sentences from a seeded start, ``inserts`` each at a seeded
    depth between sentences, as many sentences as keep it within ``budget`` tokens; and
    the index of the book's sentence that follows the run."""
    sentences = _sentences()
    start = rng.randrange(len(sentences) - 2000)
    cost = sum(len(tok.encode(" " + s)) for s in inserts)
    run = []
    for s in sentences[start:]:
        cost += len(tok.encode(" " + s))
        if cost > budget:
            break
        run.append(s)
    for s in inserts:
        run.insert(rng.randint(0, len(run)), s)
    end = start + len(run) - len(inserts)
    while len(tok.encode(" ".join(run))) > budget:  # the joins can cost a token here and there
        run.pop(next(i for i in range(len(run) - 1, -1, -1) if run[i] not in inserts))
    return " ".join(run), end


def check(task: str, length: int) -> None:
    if task not in TASKS:
        raise InputError("ruler.unknown_task", name=task, known=", ".join(TASKS))
    if isinstance(length, bool) or not isinstance(length, int):
        raise InputError("ruler.length", low=MIN_LENGTH, high=WINDOW, value=length)
    if length > WINDOW:
        raise InputError("ruler.too_long", n=length, limit=WINDOW)
    if length < MIN_LENGTH:
        raise InputError("ruler.length", low=MIN_LENGTH, high=WINDOW, value=length)


def _template(tok, instruction_and_haystack: str, question: str, prefix: str):
    """The ChatML prompt split where the haystack ends: (context ids, question ids)."""
    mark = "\u0000"
    text = tok.apply_chat_template(
        [{"role": "user", "content": instruction_and_haystack + mark + "\n" + question}],
        add_generation_prompt=True,
        tokenize=False,
    )
    head, tail = text.split(mark)
    enc = lambda s: tuple(tok.encode(s, add_special_tokens=False))  # noqa: E731
    return enc(head), enc(tail + prefix)


def generate(tok, task: str, length: int, seed: int) -> Example:
    """Example ``seed`` of ``task`` in a prompt of at most ``length`` tokens (its answer
    follows); the same arguments give the same example."""
    check(task, length)
    rng = random.Random(f"{task}:{length}:{seed}")
    if task == "vt":
        inserts, question, prefix, answers, intro = _variables(rng)
    elif task == "qa":
        inserts, question, prefix, answers, intro = _qa(rng)
    elif task == "cwe":
        inserts, question, prefix, answers, intro = [], CWE_QUESTION, CWE_PREFIX, [], CWE_INTRO
    else:
        inserts, question, prefix, answers, intro = _needles(task, rng)
    empty = _template(tok, intro, question, prefix)
    budget = length - len(empty[0]) - len(empty[1]) - 2
    if task == "cwe":
        (haystack, answers), end = _cwe(tok, rng, budget), rng.randrange(len(_sentences()) - 50)
    else:
        haystack, end = _haystack(tok, rng, budget, inserts)
    context, rest = _template(tok, intro + haystack, question, prefix)
    if len(context) + len(rest) > length:
        raise ValueError(f"{task} {length} {seed}: the haystack was cut too long")
    after = tuple(tok.encode(" " + " ".join(_sentences()[end : end + 20])))
    answers = tuple(answers)
    return Example(
        task, length, seed, context, rest, question, answers, haystack, after[:CONTINUATION]
    )
