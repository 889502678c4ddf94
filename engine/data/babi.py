"""bAbI question answering data: the original text format, samples, fixed splits.

The format (Weston et al. 2015) numbers the lines of each story from 1; a question
line is ``ID question?<TAB>answer<TAB>supporting ids``, and a new story starts when
the numbering restarts at 1. Files with the published tasks load with :func:`parse`,
and generated tasks write with :func:`format_babi`, so either can feed the model.

A :class:`Sample` is one question with the facts before it in its story (questions
are not memories) and its supporting facts as indices into those facts.
"""

from __future__ import annotations

import random
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from engine import gate
from engine.data.babi_tasks import PLACES, TASKS, TOWN, Episode, Line, generate
from engine.errors import InputError

TASK_IDS = tuple(sorted(TASKS))
SIZES = {"1k": 1_000, "10k": 10_000}
TEST_QUESTIONS = 1_000
MAX_STORY_CHARS = 20_000
MAX_FILE_CHARS = 50_000_000  # the published 10k files are ≈ 5 MB each
MAX_WORDS_PER_SENTENCE = 30
_LINE = re.compile(r"^\s*(\d+)\s+(.*)$")
_WORD = re.compile(r"[a-z0-9]+(?:,[a-z0-9]+)*")


@dataclass(frozen=True)
class Sample:
    """One question: ``story`` are the facts before it, ``support`` indexes into them."""

    story: tuple[str, ...]
    question: str
    answer: str
    support: tuple[int, ...]
    task: int = 0


def words(text: str) -> list[str]:
    """Lower-case words without punctuation ("apple,milk" stays one answer word)."""
    return _WORD.findall(text.lower())


_NOT_SUBJECT = {"the", "then", "after", "that", "afterwards", "following", "a", "is"}


def subject(sentence: str) -> str:
    """The entity a sentence is about: its first word that is not a connective or article."""
    return next((w for w in words(sentence) if w not in _NOT_SUBJECT), "")


def format_babi(episodes: list[Episode]) -> str:
    """The original bAbI text: numbered lines, questions with answer and support ids."""
    out = []
    for ep in episodes:
        for i, line in enumerate(ep, start=1):
            if line.is_question:
                ids = " ".join(str(s) for s in line.support)
                out.append(f"{i} {line.text}\t{line.answer}\t{ids}")
            else:
                out.append(f"{i} {line.text}")
    return "\n".join(out) + "\n"


def parse(text: str) -> list[Episode]:
    """Episodes from bAbI text; malformed text raises InputError naming the line."""
    gate.story_text(text, max_chars=MAX_FILE_CHARS)
    episodes: list[Episode] = []
    expected = 1
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        m = _LINE.match(raw)
        if not m:
            raise InputError("babi.no_number", n=n, line=raw[:60])
        number, body = gate.line_number(m.group(1), n), m.group(2)
        if number == 1:
            episodes.append([])
            expected = 1
        if not episodes or number != expected:
            raise InputError("babi.numbering", n=n, number=number, expected=expected)
        expected += 1
        episodes[-1].append(_parse_line(body, n, number))
    if not episodes:
        raise InputError("babi.no_lines")
    return episodes


def _parse_line(body: str, n: int, number: int) -> Line:
    parts = body.split("\t")
    if len(parts) == 1:
        if not words(parts[0]):
            raise InputError("babi.no_words", n=n)
        return Line(parts[0].strip())
    if len(parts) not in (2, 3) or not parts[1].strip():
        raise InputError("babi.not_question", n=n)
    try:
        support = tuple(gate.line_number(s, n) for s in parts[2].split()) if len(parts) == 3 else ()
    except ValueError:
        raise InputError("babi.support_not_numbers", n=n, ids=parts[2][:60]) from None
    if any(not 1 <= s < number for s in support):
        raise InputError("babi.support_later", n=n)
    return Line(parts[0].strip(), parts[1].strip().lower(), support)


def samples(episodes: list[Episode], task: int = 0) -> list[Sample]:
    """One Sample per question; line-number support becomes indices into its facts."""
    out = []
    for ep in episodes:
        facts: list[str] = []
        index_of: dict[int, int] = {}
        for number, line in enumerate(ep, start=1):
            if line.is_question:
                support = tuple(index_of[s] for s in line.support if s in index_of)
                out.append(Sample(tuple(facts), line.text, line.answer, support, task))
            else:
                index_of[number] = len(facts)
                facts.append(line.text)
    return out


SPLITS = ("train", "dev", "test")


def _seed(task: int, split: str, size: str) -> int:
    # Distinct streams per task and split; dev and test never depend on the train size.
    return task * 1_000 + {"test": 7, "dev": 8}.get(split, 100 + SIZES[size] // 1_000)


def dataset(task: int, split: str = "train", size: str = "1k") -> list[Sample]:
    """Generated questions of one task: ``size`` for train, a fixed 1,000 for dev and test.

    ``dev`` is never trained on: it chooses between a task's own model and the joint one.
    """
    if task not in TASKS:
        raise InputError("babi.unknown_task", task=task, tasks=TASK_IDS)
    if size not in SIZES:
        raise InputError("babi.unknown_size", size=size, sizes=", ".join(SIZES))
    if split not in SPLITS:
        raise InputError("babi.unknown_split", split=split, splits=", ".join(SPLITS))
    n = SIZES[size] if split == "train" else TEST_QUESTIONS
    return samples(generate(task, n, _seed(task, split, size)), task)


def user_story(story: str, question: str) -> Sample:
    """A Sample from pasted text: bAbI lines (numbered) or plain sentences, one question.

    A question typed into the question box wins; otherwise the last question of a
    pasted bAbI story is used, with its answer and supporting facts.
    """
    if len(story) > MAX_STORY_CHARS:
        raise InputError("babi.story_too_long", n=len(story), limit=MAX_STORY_CHARS)
    if not story.strip():
        raise InputError("babi.no_story")
    if _LINE.match(story.lstrip().splitlines()[0]):
        episode = parse(story)[-1]
        if question.strip():
            facts = tuple(line.text for line in episode if not line.is_question)
            return Sample(facts, _checked_question(question), "", ())
        asked = samples([episode])
        if not asked:
            raise InputError("babi.no_question_line")
        return asked[-1]
    facts = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", story) if words(s)]
    if not facts:  # text, but none the model can read: 约翰去了厨房。
        raise InputError("babi.story_not_english")
    long = [i + 1 for i, s in enumerate(facts) if len(words(s)) > MAX_WORDS_PER_SENTENCE]
    if long:
        raise InputError("babi.long_sentence", n=long[0], limit=MAX_WORDS_PER_SENTENCE)
    return Sample(tuple(facts), _checked_question(question), "", ())


def _checked_question(question: str) -> str:
    if not words(question):
        raise InputError("babi.question_not_english" if question.strip() else "babi.no_question")
    if len(words(question)) > MAX_WORDS_PER_SENTENCE:
        raise InputError("babi.long_question", limit=MAX_WORDS_PER_SENTENCE)
    return question.strip()


# -- short stories ----------------------------------------------------------------------
SHORT = (2, 4)  # the fewest and most sentences of a short story
_PRONOUNS = {"he", "she", "they"}


def short_story(sample: Sample, rng: random.Random) -> Sample | None:
    """The question over a story of 2–4 sentences: its supporting facts and a few of its
    other facts, in story order; None when the support alone is longer than 4 sentences.

    The answer stays right: the supporting facts are the story's latest evidence for it,
    so a fact kept from before or after them cannot overrule them. A sentence that opens
    with a pronoun ("Then he went …") is kept only as a supporting fact, whose antecedent
    is then kept too; another one would name the wrong person once its own antecedent
    is gone.
    """
    lo, hi = SHORT
    support = sorted(set(sample.support))
    if len(support) > hi or not sample.story:
        return None
    n = rng.randint(max(lo, len(support)), hi)
    others = [
        i for i, s in enumerate(sample.story) if i not in support and subject(s) not in _PRONOUNS
    ]
    kept = sorted(support + rng.sample(others, min(n - len(support), len(others))))
    if len(kept) < lo:
        return None
    index = {i: k for k, i in enumerate(kept)}
    story = tuple(sample.story[i] for i in kept)
    return replace(sample, story=story, support=tuple(index[i] for i in support))


def short_stories(task: int, split: str = "test", seed: int = 0) -> list[Sample]:
    """A fixed set of 2–4-sentence stories: each question of the split over its short
    story (:func:`short_story`), the ones whose support is too long left out."""
    rng = random.Random(task * 1_000 + seed)
    made = (short_story(s, rng) for s in dataset(task, split))
    return [s for s in made if s is not None]


# -- someone else's place -----------------------------------------------------------------
_ASKED = re.compile(r"^Is (\w+) in the (\w+)\?$")
_ALL_PLACES = frozenset(PLACES + TOWN)
_NEGATION = {"not", "no"}


def places(sentence: str) -> set[str]:
    """The places a sentence names."""
    return set(words(sentence)) & _ALL_PLACES


def elsewhere(sample: Sample, rng: random.Random) -> Sample | None:
    """A "no" question ("Is Daniel in the garden?") asked again about a place where
    *someone else* in the story is, so the asked place matches a sentence about another
    person ("Sandra moved to the garden."): the answer stays "no", because the supporting
    fact puts the asked person elsewhere. None where the story has no such sentence, the
    answer is not "no", or the support is a negation ("Fred is not in the kitchen": only
    the kitchen has an answer then).

    Why: with the generators' random "no" places, the asked place seldom matches another
    person's sentence, so a first hop that looks for the place instead of the person is
    rarely wrong in training — and a class's two-sentence story is exactly that case.
    """
    m = _ASKED.match(sample.question)
    if sample.answer != "no" or not m or not sample.support:
        return None
    who, _ = m.groups()
    said = [sample.story[i] for i in sample.support]
    if any(set(words(s)) & _NEGATION for s in said):
        return None
    told = set().union(*(places(s) for s in said))
    theirs = sorted(
        {
            p
            for i, s in enumerate(sample.story)
            if i not in sample.support and who.lower() not in words(s)
            for p in places(s) - told
        }
    )
    if not theirs:
        return None
    return replace(sample, question=f"Is {who} in the {rng.choice(theirs)}?")


def elsewhere_stories(task: int, split: str = "test", seed: int = 0) -> list[Sample]:
    """The task's short stories (:func:`short_stories`) whose "no" question can be asked
    about someone else's place, asked so: the Daniel story, generated (empty for tasks
    without yes/no questions)."""
    rng = random.Random(task * 1_000 + seed + 1)
    made = (elsewhere(s, rng) for s in short_stories(task, split, seed))
    return [s for s in made if s is not None]


def write_tasks(directory: str | Path, size: str = "1k") -> list[Path]:
    """Every generated task as bAbI files, named like the published ones
    (``qa1_single-supporting-fact_train.txt`` …)."""
    out = []
    Path(directory).mkdir(parents=True, exist_ok=True)
    for task in TASK_IDS:
        name = TASKS[task][0].replace("/", "-").replace(" ", "-")
        for split in SPLITS:
            n = SIZES[size] if split == "train" else TEST_QUESTIONS
            path = Path(directory) / f"qa{task}_{name}_{split}.txt"
            path.write_text(format_babi(generate(task, n, _seed(task, split, size))))
            out.append(path)
    return out


if __name__ == "__main__":  # python -m engine.data.babi DIR [1k|10k]
    written = write_tasks(sys.argv[1], *sys.argv[2:3])
    print(f"wrote {len(written)} files to {sys.argv[1]}")
