"""The chat model loads when the server starts, not when the first student opens Chat.

``streamlit run`` paints the home page first (torch is not imported for it: about a
second, FIELD-NOTES); a moment later one background thread per process imports the chat
state and starts its batcher, whose thread loads SmolLM2 (≈ 3 s here) and then writes the
Chat page's default request. The first visitor of the Chat or Retrieval page then finds the
model loaded (or a note with the seconds so far), and Chat's first view already written.
Only a server preloads (AppTest of ``main.py`` too); scripts import the pages without it.
"""

from __future__ import annotations

import logging
import threading
import time

import streamlit as st

DELAY_S = 2.0  # after the first page: the import must not compete with its painting
_started = threading.Event()
log = logging.getLogger("attention_studio")


def start() -> bool:
    """Start the preload once per process (True when this call started it)."""
    if _started.is_set() or not st.runtime.exists():
        return False
    _started.set()
    # torch imports numpy in the thread below; plotly reads sys.modules["numpy"] without
    # importing it, so the home page (which needs no numpy) redrawn meanwhile met a half-
    # imported module: "partially initialized module 'numpy' has no attribute 'isscalar'",
    # on a click within seconds of the server's start. Imported here, in the page's thread,
    # numpy is whole before the background import begins (as projection does for pandas).
    import numpy  # noqa: F401

    threading.Thread(target=_load, name="chat-preload", daemon=True).start()
    return True


def _load() -> None:
    time.sleep(DELAY_S)
    try:
        from state import chat, ledger  # imports torch: the reason this waits for the page

        if chat.available():
            chat.warm()  # the batcher's thread loads the model, then writes the default view
            ledger.warm()  # and the Cache policies section's default ledger
    except Exception:  # noqa: BLE001 - a failed preload only means the first visitor waits
        log.exception("chat model preload failed; the Chat page will load it")
