"""Word-level tokenisation shared by the pages that take free text."""

from __future__ import annotations

import re

from engine.errors import InputError

_TOKEN = re.compile(r"\w+(?:['’]\w+)?|[^\w\s]", re.UNICODE)


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
