"""Shared by every test directory."""

import sys

import pytest

# Streamlit's script runner (AppTest) installs each page as sys.modules["__main__"] and
# leaves it there; a process pool started later (spawn) re-imports __main__ in every worker
# and would run that page script. Each test starts with pytest's own __main__.
_MAIN = sys.modules["__main__"]


@pytest.fixture(autouse=True)
def _pytest_main():
    sys.modules["__main__"] = _MAIN
    yield
    sys.modules["__main__"] = _MAIN
