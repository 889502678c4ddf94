"""Shipped training timelines (``engine.timeline``), read once per process and file version.

A page asks for a card's timeline; the files are read on the first request and kept
(``st.cache_resource``: a timeline is never mutated, and copying one per rerun would cost
more than drawing it), keyed on the files' size and time so a retrained timeline is read
again. A step-slider move then only picks one snapshot out of memory.
"""

from __future__ import annotations

import streamlit as st

from engine.models.registry import ModelCard
from engine.timeline import Timeline


@st.cache_resource(max_entries=24, show_spinner=False)
def _load(name: str, stamp: tuple | None, _card: ModelCard) -> Timeline:
    """``name`` and ``stamp`` are the cache key; ``_card`` (unhashed) reads the files."""
    return _card.timeline()


def of(card: ModelCard) -> Timeline:
    """The card's timeline; raises the engine's InputError (missing or damaged files), which
    the page shows as a message while it goes on showing the finished model."""
    return _load(card.name, card.timeline_stamp(), card)
