"""Fixtures shared by the engine's unit tests."""

import pytest
import torch

from engine.models import chat as chat_model
from engine.models import registry


@pytest.fixture(scope="module")
def chat():
    """The converted SmolLM2 chat model, one thread (skipped where set-up has not run).
    Module-scoped: a module that edits the model (hooks, swapped attention) keeps it to
    itself."""
    if not chat_model.available():
        pytest.skip(f"{chat_model.CHAT_DIR} is missing: run bash scripts/setup.sh")
    torch.set_num_threads(1)
    return registry.chat().load()
