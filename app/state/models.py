"""The model registry, cached for every session: cards, loaded models and traces.

A model is loaded once per process and shared (its attention comes back from the call,
nothing is stored on the module); a trace is cached per (model, input, options), so
a rerun that changes only a view option costs nothing. Each of these is one cache layer:
nothing cached here calls another cached function of this module except through
:func:`card`, which is a plain lookup.
"""

from __future__ import annotations

import streamlit as st
from kit import queue
from kit.errors import PageError
from kit.i18n import Lazy, t

from engine.models import registry


@st.cache_resource(ttl=60, show_spinner=False)
def cards() -> dict:
    """Name → card for every model; re-read each minute so a new checkpoint appears."""

    return {c.name: c for c in registry.cards()}


def card(name: str):
    """The registry's card, or a card for a typed directory (``registry.directory``).

    Both are checked on every call (a typed directory against the allowlist, a listed one
    by the registry's re-reading each minute), and :func:`loaded` asks here first, so a
    cached model obeys a changed allowlist too.
    """

    if name.startswith(registry.directory("")):
        return registry.get(name)
    found = cards().get(name)
    if found is None:
        raise PageError(t("state.unknown_model", name=repr(name)))
    return found


@st.cache_data(ttl=60, max_entries=32, show_spinner=False)
def default(task: str, family: str | None = None) -> str:
    """The name of the card the registry says serves ``task`` when none is named."""

    return registry.default(task, family).name


def by_task(task: str) -> list:
    return [c for c in cards().values() if c.task == task]


def by_family(family: str) -> list:
    return [c for c in cards().values() if c.family == family]


@st.cache_resource(max_entries=32, show_spinner=Lazy("state.spinner_loading"))
def _loaded(name: str, _card):
    return _card.load()


def loaded(name: str):
    """The runnable model, loaded once per process (the card is checked on every call)."""
    return _loaded(name, card(name))


@st.cache_data(max_entries=128, show_spinner=Lazy("state.spinner_running"))
def _trace(name: str, input, **options):
    return card(name).trace(input, loader=lambda: loaded(name), **options)


def _write(found, model, input, **options):
    return found.trace(input, loader=lambda: model, **options)


def trace(name: str, input, **options):
    """A model's Trace of ``input``, cached. A decoder writing tokens is seconds of work,
    so it waits its turn in the queue (position, Cancel, the per-request time limit);
    everything else answers in well under a second and runs here."""
    if not options.get("max_new_tokens"):
        return _trace(name, input, **options)
    found, model = card(name), loaded(name)  # loaded here, under its spinner, once
    key = repr((name, input, sorted(options.items())))
    return queue.run(t("state.queue_generate"), _write, found, model, input, key=key, **options)


@st.cache_data(max_entries=64, show_spinner=False)
def forced_alignments(
    name: str, source: tuple[str, ...], target: tuple[str, ...], **options
) -> dict:
    return card(name).forced_alignments(source, target, model=loaded(name), **options)


@st.cache_data(ttl=60, show_spinner=False)
def results(name: str) -> dict | None:
    return card(name).results()
