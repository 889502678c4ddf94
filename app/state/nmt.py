"""The Alignment page's calls into the model registry (cached in state.models).

Models are shared by every session; that is safe because α comes back from the
decoding call (nothing is stored on the module) and the models are in eval mode.
"""

from __future__ import annotations

from state import models


def cards(task: str) -> list:
    """Every shipped RNNsearch checkpoint for ``task``, in the registry's order."""
    return [c for c in models.by_task(task) if c.family == "nmt"]


def translate(name: str, text: str, beam: int):
    return models.trace(name, text, beam=beam)


def forced_alignment(name: str, src: tuple[str, ...], tgt: tuple[str, ...]):
    """α [T, S] with ``tgt`` fed to the decoder: how the model aligns a given translation."""
    found = models.forced_alignments(name, tuple(src), tuple(tgt))
    return found["α"].weights if found else None


def train_record(name: str) -> dict:
    """How the checkpoint was trained: its command and the training run's numbers."""
    meta = models.card(name).meta
    return {"command": meta.get("command", ""), **meta.get("train", {})}
