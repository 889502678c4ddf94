"""Every page's text box: its limits stated, a count beside it, and one gate before any work.

The count is in the unit the page's model reads ("143 / 256 tokens"), under the box, before
anything is pressed. Streamlit sends a box's text when the user presses Enter (Ctrl+Enter
in a text area) or leaves the box, not on each keystroke: the count follows each of those.
A text over a limit runs nothing; the page keeps its controls, says which limit it broke,
and offers the cut that every limit takes as a button. The counting itself is
``engine.text`` (no Streamlit there), cheapest check first, so even a pasted book is
counted in milliseconds.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from engine.text import (
    Count,
    Ends,
    TextLimits,
    char_ends,
    measure,
    special_tokens,
    story_limits,
    tokenizer_ends,
    word_ends,
    word_limits,
)
from kit.i18n import t

# The counters a page picks from, by the unit its model reads.
__all__ = [
    "card_limits",
    "char_gate",
    "subword_gate",
    "word_gate",
    "char_ends",
    "gate_text",
    "gated_text",
    "story_limits",
    "chars_unit",
    "subwords_unit",
    "tokenizer_ends",
    "tokenizer_limits",
    "word_ends",
    "word_limits",
    "words_unit",
]


def gated_text(
    box,
    label: str,
    value: str | None = None,
    *,
    key: str,
    limits: TextLimits,
    unit: str,
    ends: Ends = word_ends,
    **kw,
) -> str | None:
    """``box`` (``st.text_area``, ``st.text_input`` or a container's) passed through
    :func:`gate_text` in the box's own column or container.

    ``unit`` names the tokens ``ends`` counts, as the page shows it ("words and marks").
    """
    if key in st.session_state:
        value = None  # the box leads once drawn (a cut writes it): a default would clash
    text = box(label, value, key=key, **kw) or ""
    where = getattr(box, "__self__", st)
    return gate_text(text, key=key, limits=limits, unit=unit, ends=ends, where=where)


def gate_text(
    text: str,
    *,
    key: str,
    limits: TextLimits,
    unit: str,
    ends: Ends = word_ends,
    where=st,
    form: bool = False,
) -> str | None:
    """The count of the text in box ``key``, then the gate: the text when it is within
    ``limits``, else None after saying why and offering the cut.

    A box inside a form is counted after the form (``form=True``): a form holds no plain
    button, and its text arrives with the form's button.
    """
    count = measure(text, limits, ends)
    when = t("gate.when_form" if form else "gate.when_box")
    where.caption(t("gate.count", counts=count_line(count, limits, unit), when=when))
    if count.ok:
        return text
    where.info(refusal(count, limits, unit))
    if count.cut_tokens > limits.reserved:  # a cut with something of the user's in it
        where.button(
            t("gate.use_cut", n=count.cut_tokens - limits.reserved, unit=unit),
            key=f"{key}-cut",
            on_click=_use,
            args=(key, count.cut),
        )
    return None


def words_unit() -> str:
    """The unit of :func:`engine.text.word_ends`, as the page's language says it."""
    return t("engine.unit.words_and_marks")  # the engine's word, in its message file


def subwords_unit() -> str:
    """The unit of :func:`engine.text.tokenizer_ends`, as the page's language says it."""
    return t("engine.unit.subword_tokens")  # the engine's word, in its message file


def chars_unit() -> str:
    """The unit of :func:`engine.text.char_ends`, as the page's language says it."""
    return t("engine.unit.characters")  # the engine's word, in its message file


def word_gate(tokens: int) -> dict:
    """``gated_text``'s arguments for a text read as words and marks."""
    return dict(limits=word_limits(tokens), unit=words_unit())


def char_gate(tokens: int) -> dict:
    """``gated_text``'s arguments for a text read character by character (a date)."""
    return dict(limits=word_limits(tokens), unit=chars_unit(), ends=char_ends)


def subword_gate(tokenizer, tokens: int) -> dict:
    """``gated_text``'s arguments for a text read by ``tokenizer`` (specials included)."""
    limits = tokenizer_limits(tokenizer, tokens)
    return dict(limits=limits, unit=subwords_unit(), ends=tokenizer_ends(tokenizer))


def tokenizer_limits(tokenizer, tokens: int) -> TextLimits:
    """Limits for a text read by ``tokenizer``: ``tokens`` with its special tokens, and the
    characters that many words hold."""
    return replace(word_limits(tokens), reserved=special_tokens(tokenizer))


def card_limits(*limits) -> TextLimits:
    """Model cards' ``Limits`` as the gate's: characters and, where they have them, tokens;
    for several cards reading one text, the tightest of each."""
    tokens = [lim.max_tokens for lim in limits if lim.max_tokens is not None]
    return TextLimits(chars=min(lim.max_chars for lim in limits), tokens=min(tokens, default=None))


def count_line(count: Count, limits: TextLimits, unit: str) -> str:
    """ "143 / 256 tokens · 812 / 2,000 characters", the unit the model reads first."""
    parts = []
    if limits.tokens is not None:
        n = "–" if count.tokens is None else str(count.tokens)
        parts.append(t("gate.tokens_of", n=n, limit=limits.tokens, unit=unit))
        if limits.reserved:
            parts[-1] += t("gate.reserved", n=limits.reserved)
    if limits.lines is not None:
        parts.append(t("gate.lines_of", n=count.lines, limit=limits.lines))
    parts.append(t("gate.chars_of", n=f"{count.chars:,}", limit=f"{limits.chars:,}"))
    return " · ".join(parts)


def refusal(count: Count, limits: TextLimits, unit: str) -> str:
    """Which limit the text broke, by how much."""
    if count.over == "chars":
        return t("gate.over_chars", n=f"{count.chars:,}", limit=f"{limits.chars:,}")
    if count.over == "lines":
        return t("gate.over_lines", n=count.lines, limit=limits.lines)
    return t("gate.over_tokens", n=count.tokens, limit=limits.tokens, unit=unit)


def _use(key: str, cut: str) -> None:
    st.session_state[key] = cut
