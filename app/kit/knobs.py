"""A view's knobs in one URL parameter, so that a copied link reproduces its numbers.

A variant's hyper-parameters and a model's options are many, and which exist depends on
what is picked, so they do not get a URL parameter each: one parameter holds those set
away from their defaults, ``?hp=longformer.window:32,mla.form:naive``. Each value is
checked by its own ``Param`` (engine.params) when its widget takes it; one it refuses
is dropped with the usual one-line note and the widget keeps its default.

A link seeds the widgets once. After that the widgets lead: the parameter is rewritten
from them on every run, and a value this session wrote itself is never read back, so a
widget made anew (another length n, another model) starts from its own defaults, as it
did before links carried knobs.
"""

from __future__ import annotations

import streamlit as st

from engine.errors import InputError
from kit.i18n import choice_text, t
from kit.url import url_default, url_sync


def _pairs(text: str) -> dict[str, str]:
    """``longformer.window:4,beam:2`` (already checked by the page's KNOBS pattern)."""
    return dict(part.split(":", 1) for part in text.split(",") if part)


def by_variant(text: str) -> dict[str, dict[str, str]]:
    """``longformer.window:4,mla.form:naive`` as ``{"longformer": {"window": "4"}, …}``: a
    lesson deck's knobs, for an engine call that checks each by its Param."""
    found: dict[str, dict[str, str]] = {}
    for name, value in _pairs(text).items():
        variant, _, param = name.partition(".")
        found.setdefault(variant, {})[param] = value
    return found


class Knobs:
    """The knobs of one view, kept in ``?param=`` as ``name:value`` pairs."""

    def __init__(self, param: str):
        self.param = param
        self._written = f"kit-knobs-{param}"
        raw = st.query_params.get(param)
        fresh = raw is not None and raw != st.session_state.get(self._written)
        text = url_default(param, "") if fresh else ""  # the page's table checks its form
        self.linked = _pairs(text)
        self.changed: dict[str, str] = {}
        self._asked: set[str] = set()

    def first(self, name: str, p, default, key: str):
        """The link's value of knob ``name`` for the widget ``key`` (checked by ``p``), or
        ``default`` when the link has none, the widget exists already, or ``p`` refuses it."""
        self._asked.add(name)
        raw = self.linked.get(name)
        if raw is None or key in st.session_state:
            return default
        try:
            return p.check(raw)
        except InputError:
            st.info(t("links.ignored", name=f"{self.param} {name}"))
            return default

    def chose(self, name: str, value, default) -> None:
        """Record a widget's value; only one away from its default goes into the link."""
        if value != default:
            self.changed[name] = str(value)  # repr-exact for floats: 0.1 stays 0.1

    def choice(self, name: str, p, label: str, *, key: str, **kw):
        """A selectbox of ``p``'s choices (shown in the reader's language), seeded by the
        link and recorded: the one widget a choice knob needs, wherever it is drawn."""
        first = self.first(name, p, p.default, key)
        index = p.choices.index(first)
        value = st.selectbox(label, p.choices, index, key=key, format_func=choice_text, **kw)
        self.chose(name, value, p.default)
        return value

    def sync(self) -> None:
        """Write the recorded knobs to the URL (none: the parameter goes), saying which of
        the link's no widget here took (a variant not picked, a misspelt name)."""
        for name in self.linked.keys() - self._asked:
            st.info(t("links.ignored", name=f"{self.param} {name}"))
        text = ",".join(f"{name}:{value}" for name, value in self.changed.items())
        st.session_state[self._written] = text or None
        url_sync(**{self.param: text or None})
