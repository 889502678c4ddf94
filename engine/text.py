"""Word-level tokenisation shared by the pages that take free text."""

from __future__ import annotations

import re

from engine.messages import MESSAGES, Message

_TOKEN = re.compile(r"\w+(?:['’]\w+)?|[^\w\s]", re.UNICODE)


class InputError(ValueError):
    """Input the user can fix; the message says how, and pages show it as is.

    ``InputError("text.too_many_tokens", n=60, limit=50)`` raises message id
    ``text.too_many_tokens`` of :mod:`engine.messages` (``str(exc)`` is its English text,
    ``exc.message`` the :class:`~engine.messages.Message` an interface translates); any
    other first argument is the message itself.
    """

    def __init__(self, message: str, **params):
        super().__init__(Message(message, **params) if message in MESSAGES else message)

    @property
    def message(self) -> str:
        return self.args[0]


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text)


def tokens_within(text: str, limit: int) -> list[str]:
    """Tokens of ``text``, refusing empty input and input over ``limit`` tokens."""
    if not text or not text.strip():
        raise InputError("text.empty")
    tokens = tokenize(text)
    if not tokens:
        raise InputError("text.no_words")
    if len(tokens) > limit:
        raise InputError("text.too_many_tokens", n=len(tokens), limit=limit)
    return tokens
