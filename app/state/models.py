"""The model registry, cached for every session: cards, loaded models and traces.

A model is loaded once per process and shared (its attention comes back from the call,
nothing is stored on the module); a trace is cached per (model, input, options), so
a rerun that changes only a view option costs nothing.
"""

from __future__ import annotations

import streamlit as st
from kit.i18n import Lazy, t


@st.cache_resource(ttl=60, show_spinner=False)
def cards() -> dict:
    """Name → card for every model; re-read each minute so a new checkpoint appears."""
    from engine.models import registry

    return {c.name: c for c in registry.cards()}


def card(name: str):
    from engine.text import InputError

    found = cards().get(name)
    if found is None:
        raise InputError(t("state.unknown_model", name=repr(name)))
    return found


def by_task(task: str) -> list:
    return [c for c in cards().values() if c.task == task]


@st.cache_resource(max_entries=32, show_spinner=Lazy("state.spinner_loading"))
def loaded(name: str):
    return card(name).load()


@st.cache_data(max_entries=128, show_spinner=Lazy("state.spinner_running"))
def trace(name: str, input, **options):
    c = card(name)
    c.check(input)  # refuse before loading anything
    return c.trace(input, model=loaded(name), **options)


@st.cache_data(max_entries=64, show_spinner=False)
def forced_alignments(
    name: str, source: tuple[str, ...], target: tuple[str, ...], **options
) -> dict:
    return card(name).forced_alignments(source, target, model=loaded(name), **options)


@st.cache_data(ttl=60, show_spinner=False)
def results(name: str) -> dict | None:
    return card(name).results()
