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
import re
import string
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


# ---- text that comes from the engine -------------------------------------------------
#
# The engine speaks English and marks what it says: an engine.messages.Message carries an
# id and its values, which ``engine.toml`` translates (key ``engine.<id>``); variants and
# model options are data, translated under ``engine.variants.<name>…`` and
# ``engine.options.<name>…``. Anything without a translation shows the engine's English.

# Values that name an engine term (a parameter's label, a variant's title, a bAbI task)
# are translated inside another message, e.g. "window w must be in 1 … 1024; got 0."
_TERM_PARAMS = ("label", "title", "name")
_TERM_AREAS = ("engine.variants.", "engine.options.", "memory.babi.")


@functools.cache
def _terms(lang: str) -> dict[str, str]:
    en, other = catalog(DEFAULT), catalog(lang)
    return {en[k]: other[k] for k in en if k.startswith(_TERM_AREAS) and k in other}


def engine_text(text, *, markdown: bool = False) -> str:
    """``text`` from the engine (a Message, an InputError, or a plain string) in the
    reader's language; English, byte for byte, where no translation exists.

    ``markdown=True`` for text that Streamlit renders as Markdown (st.warning, st.info,
    st.caption): a message's values (the visitor's words, a typed number or name) are
    escaped, so "**x**" or "[a](b)" typed into a box is shown as typed, not as bold or a
    link; the template's own text is the project's and stays as written."""
    if isinstance(text, BaseException):
        text = text.args[0] if text.args else str(text)
    lang = language()
    key = getattr(text, "key", None)
    if key is None or (lang == DEFAULT and not markdown):
        return str(text)
    template = catalog(lang).get(f"engine.{key}") or catalog(DEFAULT).get(f"engine.{key}")
    if template is None:
        return str(text)
    values = {k: _value(k, v, lang, markdown) for k, v in text.params.items()}
    return _markdown(template, values) if markdown else template.format(**values)


class _Escaped(str):
    """A value already written as Markdown (a nested message): not escaped again."""


def _markdown(template: str, values: dict) -> str:
    """``template.format(**values)`` with each value escaped, except inside a code span
    (`python -m engine.train …`), where Markdown reads nothing and a backslash would show.
    Escaped after conversion and format spec, so {name!r} and {n:,} read as in English."""
    out, in_code = [], False
    for literal, field, spec, conversion in _FORMATTER.parse(template):
        out.append(literal)
        in_code ^= literal.count("`") % 2 == 1
        if field is None:
            continue
        value = _FORMATTER.convert_field(_FORMATTER.get_field(field, (), values)[0], conversion)
        text = _FORMATTER.format_field(value, spec or "")
        out.append(text if in_code or isinstance(value, _Escaped) else md_escape(text))
    return "".join(out)


_FORMATTER = string.Formatter()


def _value(name: str, value, lang: str, markdown: bool = False):
    if getattr(value, "key", None) is not None:
        text = engine_text(value, markdown=markdown)
        return _Escaped(text) if markdown else text
    if name in _TERM_PARAMS and isinstance(value, str):
        return _terms(lang).get(value, value)
    return value


_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def md_escape(text: str) -> str:
    """User or model text made inert in st.markdown: no links, images, HTML or formatting."""
    return _MARKDOWN.sub(r"\\\1", str(text))


def _data(key: str, english: str) -> str:
    return english if language() == DEFAULT else catalog(language()).get(key, english)


def variant_title(variant) -> str:
    """An attention variant's title (``engine.variants`` registry) in the reader's language."""
    return _data(f"engine.variants.{variant.name}.title", variant.title)


def t_or(key: str, fallback: str, **values) -> str:
    """``t(key)``, or ``fallback`` where no catalog has ``key``: a name the engine gives
    (a task, a map's flag, a weight tying) that the catalogs need not all list."""
    said = t(key, **values)
    return fallback if said == key else said


def task_title(task: str) -> str:
    """A long-range task's short name in the reader's language (one the catalog lacks: its
    id), e.g. ``mqar-256`` → "recall, n = 256"."""
    return t_or(f"variants.task_{task.replace('-', '_')}", task)


def param_label(p, variant=None) -> str:
    """A parameter's label: of ``variant`` (a Variant or its name), of a model's options,
    or, without ``variant``, of whichever variant has a parameter labelled so."""
    return _param_text(p, variant, "label", p.label)


def param_help(p, variant=None) -> str:
    """The parameter's help text ('' when it has none), translated like its label."""
    return _param_text(p, variant, "help", p.help) if p.help else ""


def _param_text(p, variant, field: str, english: str) -> str:
    if variant is not None:
        name = getattr(variant, "name", variant)
        return _data(f"engine.variants.{name}.params.{p.name}.{field}", english)
    # A card's option by its name only when that entry is this text: a variant's
    # parameter of the same name ("window") is another knob with its own words.
    key = f"engine.options.{p.name}.{field}"
    return _data(key, english) if catalog(DEFAULT).get(key) == english else _data_term(english)


def choice_text(choice: str) -> str:
    """A parameter's choice ("on", "sage") in the reader's language; a scheme's name stays."""
    return _data(f"engine.choices.{choice}", choice)


def _data_term(english: str) -> str:
    return english if language() == DEFAULT else _terms(language()).get(english, english)


def variant_param_label(variant, p) -> str:
    """A widget label naming the variant, the parameter and its limits: ``Linformer:
    projected length k (1 … 4096)``."""
    return f"{variant_title(variant)}: {param_label(p, variant)} ({engine_text(p.limits)})"
