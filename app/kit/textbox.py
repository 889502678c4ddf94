"""Every page's text box: its limits stated, a count beside it, and one gate before any work.

The count is in the unit the page's model reads ("143 / 256 tokens"), under the box, before
anything is pressed. Streamlit sends a box's text when the user presses Enter (Ctrl+Enter
in a text area) or leaves the box, not on each keystroke: the count follows each of those.
A text over a limit runs nothing; the page keeps its controls, says which limit it broke,
and offers the cut that every limit takes as a button. The counting itself is
``engine.text_gate`` (no Streamlit there), cheapest check first, so even a pasted book is
counted in milliseconds.
"""

from __future__ import annotations

import streamlit as st

from engine.text_gate import Count, Ends, TextLimits, measure, word_ends
from kit.i18n import t


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
    """``box`` (``st.text_area``, ``st.text_input`` or a container's) with its count under it;
    the text when it is within ``limits``, else None after saying why and offering the cut.

    ``unit`` names the tokens ``ends`` counts, as the page shows it ("words and marks").
    """
    if key in st.session_state:
        value = None  # the box leads once drawn (a cut writes it): a default would clash
    text = box(label, value, key=key, **kw) or ""
    where = getattr(box, "__self__", st)  # the box's own column or container
    count = measure(text, limits, ends)
    where.caption(count_line(count, limits, unit))
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


def card_limits(limits) -> TextLimits:
    """A model card's ``Limits`` as the gate's (characters and, where it has them, tokens)."""
    return TextLimits(chars=limits.max_chars, tokens=limits.max_tokens)


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
    return t("gate.count", counts=" · ".join(parts))


def refusal(count: Count, limits: TextLimits, unit: str) -> str:
    """Which limit the text broke, by how much."""
    if count.over == "chars":
        return t("gate.over_chars", n=f"{count.chars:,}", limit=f"{limits.chars:,}")
    if count.over == "lines":
        return t("gate.over_lines", n=count.lines, limit=limits.lines)
    return t("gate.over_tokens", n=count.tokens, limit=limits.tokens, unit=unit)


def _use(key: str, cut: str) -> None:
    st.session_state[key] = cut
