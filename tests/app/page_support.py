"""What a page says in its notes, as the reader sees them."""

import re

_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~$:])")


def read(markdown: str) -> str:
    """Markdown as the reader sees it: a backslash escape shows its character alone (the
    engine's messages escape what they quote, so "nmt\\-enfr" reads "nmt-enfr")."""
    return _ESCAPE.sub(r"\1", markdown)


def messages(at) -> str:
    """Every info, warning and error of an AppTest run, read."""
    return " ".join(read(m.value) for m in [*at.info, *at.warning, *at.error])
