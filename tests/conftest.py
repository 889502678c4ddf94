"""Shared by every test directory."""

import os
import sys

import pytest

# The queue's time limit (app/kit/queue.py) is a deployment setting: on a CI runner several
# times slower than this machine it would stop a correct sweep partway and fail a test of
# what the sweep computes. Its own behaviour is tested with short limits it sets itself.
os.environ.setdefault("ATTENTION_STUDIO_JOB_LIMIT_S", "600")

# Streamlit's script runner (AppTest) installs each page as sys.modules["__main__"] and
# leaves it there; a process pool started later (spawn) re-imports __main__ in every worker
# and would run that page script. Each test starts with pytest's own __main__.
_MAIN = sys.modules["__main__"]


@pytest.fixture(autouse=True)
def _pytest_main():
    sys.modules["__main__"] = _MAIN
    yield
    sys.modules["__main__"] = _MAIN
