"""Word-level tokenisation shared by the pages that take free text."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\w+(?:['’]\w+)?|[^\w\s]", re.UNICODE)


class InputError(ValueError):
    """Input the user can fix; the message says how, and pages show it as is."""


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text)


def tokens_within(text: str, limit: int) -> list[str]:
    """Tokens of ``text``, refusing empty input and input over ``limit`` tokens."""
    if not text or not text.strip():
        raise InputError("Type a sentence to begin.")
    tokens = tokenize(text)
    if not tokens:
        raise InputError("That text has no words in it; type a sentence to begin.")
    if len(tokens) > limit:
        raise InputError(f"That text has {len(tokens)} tokens; the limit here is {limit}.")
    return tokens
