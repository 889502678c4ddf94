"""Checkpoints as safetensors (weights) + JSON (config, vocabularies, metrics).

Never pickle: a checkpoint is data, so loading one cannot run code.
Layout: ``assets/checkpoints/<name>.safetensors`` and ``<name>.json``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import InputError

if TYPE_CHECKING:
    import torch

ROOT = Path(__file__).resolve().parent.parent
# An operator (or a test) may point the studio at another copy of the checkpoints.
CHECKPOINT_DIR = Path(
    os.environ.get("ATTENTION_STUDIO_CHECKPOINTS", ROOT / "assets" / "checkpoints")
)


class CheckpointError(InputError):
    """A checkpoint that is missing or unreadable; the message names the file and the fix.

    An input error: the user (or whoever installs the studio) can fix it, and the page says
    how instead of reporting a bug."""


def paths(name: str, directory: Path | None = None) -> tuple[Path, Path]:
    d = Path(directory) if directory is not None else CHECKPOINT_DIR
    return d / f"{name}.safetensors", d / f"{name}.json"


def save(
    name: str,
    state_dict: dict[str, torch.Tensor],
    meta: dict[str, Any],
    directory: Path | None = None,
) -> tuple[Path, Path]:
    from safetensors.torch import save_file  # heavy: torch; the JSON side below needs none

    weights_path, meta_path = paths(name, directory)
    weights_path.parent.mkdir(parents=True, exist_ok=True)
    # safetensors refuses shared or non-contiguous storage; clone makes each tensor its own.
    tensors = {k: v.detach().to("cpu").contiguous().clone() for k, v in state_dict.items()}
    save_file(tensors, str(weights_path))
    weights_path.chmod(0o644)  # safetensors writes 0600; shipped assets must be readable by all
    meta_path.write_text(json.dumps(meta, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    return weights_path, meta_path


def load(name: str, directory: Path | None = None) -> tuple[dict[str, torch.Tensor], dict]:
    # heavy: torch. Card discovery reads only the JSON (load_meta, load_result), so the
    # home page starts without torch; the weights bring it in.
    from safetensors.torch import load_file

    weights_path, meta_path = paths(name, directory)
    if not weights_path.exists() or not meta_path.exists():
        raise CheckpointError("checkpoint.missing", name=name, folder=str(weights_path.parent))
    try:
        meta = json.loads(meta_path.read_text())
        state = load_file(str(weights_path))
    except Exception as exc:  # any parse failure means the file is not a usable checkpoint
        raise CheckpointError("checkpoint.unreadable", name=name, detail=str(exc)) from None
    return state, meta


def result_name(subject: str, task: str = "") -> str:
    """The one name an evaluation's JSON goes by: ``<subject>-eval[-<task>]``.

    ``subject`` is what ``python -m engine.evaluate <subject>`` measures (a family, or
    ``confidence``), ``task`` the data it was measured on where a family has several. A
    card states its own (``ModelCard.result_name``); the evaluate command asks the card.
    """
    return f"{subject}-eval-{task}" if task else f"{subject}-eval"


def load_meta(name: str, directory: Path | None = None) -> dict:
    """A checkpoint's JSON alone (config, vocabularies, tasks), without its weights."""
    meta_path = paths(name, directory)[1]
    try:
        return json.loads(meta_path.read_text())
    except (OSError, ValueError) as exc:
        raise CheckpointError(
            "checkpoint.no_meta", name=name, file=meta_path.name, detail=str(exc)
        ) from None


def save_result(name: str, result: dict, directory: Path | None = None) -> Path:
    """An evaluation's JSON beside the checkpoints (``<name>.json``, see :func:`result_name`);
    it has no ``.safetensors`` beside it, which is how the registry tells it from a model."""
    path = paths(name, directory)[1]
    path.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    return path


def load_result(name: str, directory: Path | None = None) -> dict | None:
    """A saved evaluation JSON, or None when it was never saved or cannot be read."""
    try:
        return json.loads(paths(name, directory)[1].read_text())
    except (OSError, ValueError):
        return None


def available(prefix: str = "", directory: Path | None = None) -> list[str]:
    d = Path(directory) if directory is not None else CHECKPOINT_DIR
    found = d.glob(f"{prefix}*.safetensors")
    return sorted(p.stem for p in found if p.with_suffix(".json").exists() and not is_timeline(p))


# A training timeline (engine.timeline) is saved beside its checkpoint as
# ``<name>-timeline.safetensors`` + ``.json``: the same pair of files, never a checkpoint.
TIMELINE_SUFFIX = "-timeline"


def is_timeline(path: Path | str) -> bool:
    return Path(path).stem.endswith(TIMELINE_SUFFIX)
