"""Interface strings in message files, English and 简体中文.

Strings live in ``app/locales/<lang>/<area>.toml`` (one file per page or kit area, so
two people editing two pages never touch one file). ``t("alignment.title")`` reads key
``title`` of ``alignment.toml`` in the current language, falling back to English for a
key not yet translated (a test requires every language to have every key). Values are
``str.format`` templates: ``t("alignment.limit", n=50)``.

The language comes from the URL (``?lang=zh``), so a shared link opens in the language
it was copied in; anything else falls back to English.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

LOCALES = Path(__file__).resolve().parent.parent / "locales"
LANGUAGES = {"en": "English", "zh": "简体中文"}
DEFAULT = "en"


@functools.cache
def catalog(lang: str) -> dict[str, str]:
    """Every ``area.key`` → template of one language (read once per process)."""
    found: dict[str, str] = {}
    for path in sorted((LOCALES / lang).glob("*.toml")):
        with path.open("rb") as f:
            for key, value in _flatten(tomllib.load(f)):
                found[f"{path.stem}.{key}"] = value
    return found


def _flatten(table: dict, prefix: str = ""):
    for key, value in table.items():
        if isinstance(value, dict):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", str(value)


_last = DEFAULT


def language() -> str:
    """The URL's language; outside a script run, the one the last run used.

    Streamlit's AppTest formats widget options after the run, outside any script context,
    with the page's own ``format_func``: it must see the language the page was drawn in.
    """
    global _last
    if get_script_run_ctx() is None:
        return _last
    lang = st.query_params.get("lang", DEFAULT)
    _last = lang if lang in LANGUAGES else DEFAULT
    return _last


def t(key: str, **values) -> str:
    """The string for ``key`` in the current language, formatted with ``values``."""
    template = catalog(language()).get(key) or catalog(DEFAULT).get(key)
    if template is None:
        return key  # a missing key shows itself, and tests/app/test_locales.py catches it
    return template.format(**values) if values else template


class Lazy(str):
    """A key that becomes its text in the reader's language each time it is shown.

    For text fixed when a module is imported, such as a cached function's spinner
    (``show_spinner=Lazy("state.loading")``): Streamlit shows it through ``str()``.
    """

    def __str__(self) -> str:
        return t(str.__str__(self))


def language_picker() -> None:
    """A sidebar choice that writes ``?lang=`` (and so survives in a copied link)."""
    current = language()
    chosen = st.sidebar.selectbox(
        "Language · 语言",
        list(LANGUAGES),
        index=list(LANGUAGES).index(current),
        format_func=LANGUAGES.get,
        key="kit-language",
    )
    if chosen != current:
        st.query_params["lang"] = chosen
        st.rerun()
