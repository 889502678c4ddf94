from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "app"


@pytest.fixture
def page():
    """Open a page script as a user would land on it, with a generous first-run timeout."""

    def _open(name: str) -> AppTest:
        # A one-file page is studios/<name>.py; a page of sections is studios/<name>/page.py.
        script = APP / "studios" / f"{name}.py"
        if not script.is_file():
            script = APP / "studios" / name / "page.py"
        at = AppTest.from_file(str(script), default_timeout=120)
        at.run()
        return at

    return _open
