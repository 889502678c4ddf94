"""Typed text: its word-level tokens, and one gate that counts it before any work is done.

Tokens are words and marks (:func:`tokenize`), Chinese split into its characters. An
engine entry point refuses what it cannot take (:func:`tokens_within`, the engine's error);
a page counts first, to say so before anything runs (:func:`measure`).

Every page's text box states a :class:`TextLimits` and asks :func:`measure` what a text
holds against them. The cheapest check comes first, so the cost of the count is bounded
whatever is pasted: the characters are counted, then at most ``chars`` of them are split
into lines and tokens. Tokens are counted in the unit the model reads (word-level tokens
by default, a tokenizer's subwords through :func:`tokenizer_ends`). An over-long text gets
its ``cut``: the longest start of it that every limit takes, ending at a token's end.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from engine.errors import InputError

# CJK ideographs, each a token of its own, as BERT's basic tokenizer splits them
# (``_is_chinese_char``: the CJK Unified Ideographs blocks and their compatibility forms).
# Chinese is written without spaces: "注意力是什么" was one "word".
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df\U0002a700-\U0002ceaf"
_CJK += "\U0002f800-\U0002fa1f"
_WORD = rf"(?:(?![{_CJK}])\w)+"
_TOKEN = re.compile(rf"[{_CJK}]|{_WORD}(?:['’]{_WORD})?|[^\w\s]", re.UNICODE)


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text)


def tokens_within(text: str, limit: int) -> list[str]:
    """Tokens of ``text``, refusing empty input and input over ``limit`` tokens."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("text.empty")
    tokens = tokenize(text)
    if not tokens:
        raise InputError("text.no_words")
    if len(tokens) > limit:
        raise InputError("text.too_many_tokens", n=len(tokens), limit=limit)
    return tokens


Ends = Callable[[str], list[int]]  # text → where each of its tokens ends, in characters
# A word-level token is rarely longer than this: past ``tokens × CHARS_PER_TOKEN``
# characters a paste is refused before it is tokenised.
CHARS_PER_TOKEN = 16


@dataclass(frozen=True)
class TextLimits:
    chars: int
    tokens: int | None = None
    lines: int | None = None
    reserved: int = 0  # tokens the model adds around the text (special or template tokens)


STORY_LINES = 1_000  # ten times the longest bAbI story: a pasted log is refused, not parsed


def story_limits(chars: int) -> TextLimits:
    """Limits for a story read line by line (a memory network's facts)."""
    return TextLimits(chars=chars, lines=STORY_LINES)


def word_limits(tokens: int, lines: int | None = None) -> TextLimits:
    """Limits for a text read as words and marks: ``tokens`` of them, and the characters
    that many words hold."""
    return TextLimits(chars=tokens * CHARS_PER_TOKEN, tokens=tokens, lines=lines)


@dataclass(frozen=True)
class Count:
    """What a text holds against its limits; ``tokens`` is None when the text was refused on
    characters before being tokenised (its cut is then counted instead)."""

    chars: int
    lines: int
    tokens: int | None
    over: str | None  # the first limit broken: "chars", "lines", "tokens"; None when within
    cut: str  # the longest start of the text within every limit
    cut_tokens: int  # tokens of the cut, ``reserved`` included

    @property
    def ok(self) -> bool:
        return self.over is None


def word_ends(text: str) -> list[int]:
    """Token ends of :func:`engine.text.tokenize` (words and marks)."""
    ends, at = [], 0
    for token in tokenize(text):
        # Only whitespace separates tokens, so the token's first occurrence is the match.
        at = text.index(token, at) + len(token)
        ends.append(at)
    return ends


def char_ends(text: str) -> list[int]:
    """Token ends of a character-level reader (a date): every character but the spaces around."""
    start = len(text) - len(text.lstrip())
    return list(range(start + 1, len(text.rstrip()) + 1))


def tokenizer_ends(tokenizer) -> Ends:
    """Token ends for a HuggingFace tokenizer, special tokens left out: a fast tokenizer's
    offsets; a slow one has none, so its tokens are spread evenly over the text (the count
    is exact, the cut approximate)."""

    def ends(text: str) -> list[int]:
        if getattr(tokenizer, "is_fast", False):
            found = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
            return [end for _, end in found["offset_mapping"]]
        n = len(tokenizer(text, add_special_tokens=False)["input_ids"])
        return [round(len(text) * (i + 1) / n) for i in range(n)]

    return ends


def special_tokens(tokenizer) -> int:
    """Tokens the tokenizer adds around any text ([CLS] and [SEP], a start token …)."""
    return len(tokenizer("")["input_ids"])


def template_tokens(tokenizer) -> int:
    """Tokens a chat template puts around one user turn (its system turn, the turn markers,
    the assistant's opening): the template's share of a prompt's limit."""
    ids = tokenizer.apply_chat_template(
        [{"role": "user", "content": ""}], add_generation_prompt=True, tokenize=True
    )
    return len(ids["input_ids"] if hasattr(ids, "keys") else ids)


def measure(text: str, limits: TextLimits, ends: Ends = word_ends) -> Count:
    """``text`` counted against ``limits``: characters, then lines, then tokens."""
    chars, lines = len(text), text.count("\n") + 1
    head = text[: limits.chars]  # never tokenise more than the limit allows
    if limits.lines is not None:
        head = "\n".join(head.split("\n")[: limits.lines])
    found = ends(head)
    # The text's own token count is known only when all of it was read.
    tokens = len(found) + limits.reserved if len(head) == chars else None
    if len(head) == limits.chars < chars and found and found[-1] == len(head):
        found.pop()  # a token ending where the text was cut may go on past the cut
        head = head[: found[-1]] if found else ""
    room = None if limits.tokens is None else max(0, limits.tokens - limits.reserved)
    if chars > limits.chars:
        over = "chars"
    elif limits.lines is not None and lines > limits.lines:
        over = "lines"
    elif room is not None and len(found) > room:
        over = "tokens"
    else:
        over = None
    if room is not None and len(found) > room:
        head = head[: found[room - 1]] if room else ""
        found = found[:room]
    return Count(chars, lines, tokens, over, head.rstrip(), len(found) + limits.reserved)
