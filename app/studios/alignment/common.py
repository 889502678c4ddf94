"""What the Alignment page's sections share: inert Markdown for user text."""

import re


def md(text: str) -> str:
    """Text shown through Markdown exactly as typed (no formatting, no HTML)."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$])", r"\\\1", text)
