from pathlib import Path

import pytest
from catalog import PAGES
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "app"


@pytest.fixture
def page():
    """Open a page script as a user would land on it, with a generous first-run timeout."""

    def _open(name: str) -> AppTest:
        path = next((p.path for p in PAGES if p.url == name), f"studios/{name}.py")
        at = AppTest.from_file(str(APP / path), default_timeout=120)
        at.run()
        return at

    return _open
