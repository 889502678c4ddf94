from pathlib import Path

import pytest
from catalog import PAGES
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "app"


@pytest.fixture(autouse=True)
def english_outside_a_run(monkeypatch):
    """Outside a script run the interface speaks the last run's language (kit.i18n.language,
    for AppTest's after-run formatting): a test that calls views directly starts in the
    default one, whatever 中文 page ran before it."""
    from kit import i18n

    monkeypatch.setattr(i18n, "_last", i18n.DEFAULT)


@pytest.fixture
def page():
    """Open a page script as a user would land on it, with a generous first-run timeout."""

    def _open(name: str) -> AppTest:
        path = next((p.path for p in PAGES if p.url == name), f"studios/{name}.py")
        at = AppTest.from_file(str(APP / path), default_timeout=120)
        at.run()
        return at

    return _open


@pytest.fixture
def downloads(monkeypatch) -> dict:
    """File name → the callable a download button registers (Streamlit calls it on click),
    recorded for every page run after this fixture is requested."""
    made = {}
    original = MediaFileManager.add_deferred

    def record(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        made[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name, **kw)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    return made
