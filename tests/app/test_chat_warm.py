"""The server's preload (``state.preload``) writes the Chat page's default view and the
Cache policies section's (a cut generation, its ledger, the budget sweep: ≈ 8 s of work
here): afterwards the section's first open starts no job, every result is waiting."""

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
