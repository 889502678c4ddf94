"""Which implementation runs: Triton on CUDA, PyTorch elsewhere.

Nothing here imports triton or touches the CUDA driver at import time: a CPU-only
machine decides from the tensor's device alone. The Triton interpreter
(``TRITON_INTERPRET=1``, read by ``@triton.jit`` when the kernel modules are first
imported) lets ``path="triton"`` run on CPU tensors; ``path="auto"`` never picks it
there, because interpreting is orders of magnitude slower than PyTorch.
"""

from __future__ import annotations

import functools
import importlib
import os

import torch

PATHS = ("auto", "triton", "pytorch")
HEAD_DIMS = (32, 64, 128)
DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0").strip().lower() in ("1", "true", "on", "yes")


@functools.cache
def triton_importable() -> bool:
    try:
        importlib.import_module("triton")
    except Exception:  # a broken install must leave the PyTorch path working
        return False
    return True


def default_device() -> torch.device:
    """Where the app puts attention inputs: CUDA when a GPU answers, else the CPU.

    ``ATTENTION_STUDIO_DEVICE=cpu`` forces the CPU; a broken driver means the CPU, never
    an error on a page.
    """
    wanted = os.environ.get("ATTENTION_STUDIO_DEVICE", "auto")
    if wanted != "cpu":
        try:
            if torch.cuda.is_available():
                return torch.device("cuda")
        except Exception:  # a driver that cannot even be queried
            pass
    return torch.device("cpu")


def active_path(device) -> str:
    """``"triton"`` for a CUDA device when triton imports, else ``"pytorch"``."""
    device = torch.device(device)
    return "triton" if device.type == "cuda" and triton_importable() else "pytorch"


def resolve(path: str, q: torch.Tensor, unsupported: str | None) -> str:
    """The path to run: ``unsupported`` says why Triton cannot take these inputs (or None).

    ``"auto"`` falls back to PyTorch quietly; a forced ``"triton"`` raises instead.
    """
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, got {path!r}")
    if path == "pytorch":
        return "pytorch"
    if path == "auto":
        return "triton" if active_path(q.device) == "triton" and unsupported is None else "pytorch"
    if q.device.type != "cuda" and not interpreting():
        raise RuntimeError(
            "path='triton' needs CUDA tensors, or TRITON_INTERPRET=1 set before the kernels "
            "are first imported to interpret them on the CPU"
        )
    if not triton_importable():
        raise RuntimeError("path='triton' but triton cannot be imported")
    if unsupported is not None:
        raise ValueError(f"the Triton kernels do not support this input: {unsupported}")
    return "triton"


def unsupported_input(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor | None = None
) -> str | None:
    """Why the Triton kernels cannot take these tensors, or None when they can."""
    if q.shape[-1] not in HEAD_DIMS:
        return f"head dim {q.shape[-1]} (supported: {HEAD_DIMS})"
    if q.dtype not in DTYPES:
        return f"dtype {q.dtype} (supported: float16, bfloat16, float32)"
    if k.dtype != q.dtype or (v is not None and v.dtype != q.dtype):
        return "q, k and v must share one dtype"
    if v is not None and v.shape[-1] != q.shape[-1]:
        return "the value dim must equal the head dim"
    if len({q.device, k.device} | ({v.device} if v is not None else set())) != 1:
        return "q, k and v must be on one device"
    if (
        q.dtype == torch.bfloat16
        and q.is_cuda
        and torch.cuda.get_device_capability(q.device) < (8, 0)
    ):
        return "bfloat16 matmuls need an Ampere or newer GPU"
    return None


def triton_module(name: str):
    """Import ``engine.kernels.<name>`` (which imports triton) only when first needed."""
    return importlib.import_module(f"engine.kernels.{name}")
