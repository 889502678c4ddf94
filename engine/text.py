"""Word-level tokenisation shared by the pages that take free text."""

from __future__ import annotations

import re

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
