"""The server's preload (``state.preload``) writes the Chat page's default view and the
Cache policies section's (a cut generation, its ledger, the budget sweep: ≈ 8 s of work
here): afterwards the section's first open starts no job, every result is waiting."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from kit import queue
from streamlit.testing.v1 import AppTest

from engine.models import chat as chat_lib

PAGE = Path(__file__).resolve().parents[2] / "app" / "studios" / "chat.py"
pytestmark = pytest.mark.skipif(
    not chat_lib.available(), reason="the chat model is not converted: bash scripts/setup.sh"
)


def test_after_the_preload_the_cache_section_opens_from_cached_results(monkeypatch):
    from state import chat as chat_state
    from state import ledger

    chat_state.warm()
    ledger.warm()
    started = []
    submit = queue.WorkQueue.submit

    def counted(self, session, key, *rest):
        started.append(key)
        return submit(self, session, key, *rest)

    monkeypatch.setattr(queue.WorkQueue, "submit", counted)
    at = AppTest.from_file(str(PAGE), default_timeout=600)
    at.query_params.update(section="cache")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert started == [], started
    assert at.get("plotly_chart"), "the section draws its figures from the cached results"


SEES_NUMPY_WHOLE = """
import sys, threading
import streamlit as st
from state import preload
assert "numpy" not in sys.modules  # the home page needs none, so a fresh server has none
seen = []
class Recorded(threading.Thread):
    def start(self):
        numpy = sys.modules.get("numpy")
        seen.append(numpy is not None and hasattr(numpy, "isscalar"))
preload.threading.Thread = Recorded
preload.st.runtime.exists = lambda: True
assert preload.start()
print(seen)
"""


def test_numpy_is_whole_before_the_preload_imports_torch():
    """The preload thread imports torch, and numpy under it, while visitors click; plotly
    reads sys.modules["numpy"] without importing it, so the home page redrawn in that
    window met a half-imported numpy (AttributeError: partially initialized module 'numpy'
    has no attribute 'isscalar'; found by tests/fuzz/test_fuzz_clicks.py). In a fresh
    process, as a server starts: numpy is imported whole before the thread starts."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "app"))
    done = subprocess.run(
        [sys.executable, "-c", SEES_NUMPY_WHOLE], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[True]"
