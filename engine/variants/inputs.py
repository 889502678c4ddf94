"""Inputs for the lab: synthetic Q/K/V with controllable structure, or text through a layer.

Synthetic structures (each gives attention a different shape to approximate):
- ``random``: i.i.d. N(0, 1) q, k, v — diffuse attention, no structure to exploit.
- ``local``: q_i·k_j peaks at |i − j| small (sinusoidal positions) — a band.
- ``clustered``: tokens belong to c clusters; q and k sit near their cluster centre —
  block structure that LSH buckets can find.
- ``global``: a few "hub" keys every query attends to — what global tokens are for.
``sharpness`` multiplies q: higher → peakier softmax, harder for low-rank methods.

Text: words → seeded per-word embeddings (a word always maps to the same vector) +
sinusoidal positions → a seeded, *untrained* multi-head projection W_Q, W_K, W_V.

A file: :func:`load_qkv_npz` reads a user's own Q/K/V (arrays q, k, v) within stated
limits. (A trained model's Q/K/V come from engine.models.in_pretrained.layer_qkv.)
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import torch

from engine import gate
from engine.errors import InputError
from engine.messages import Message
from engine.positional import sinusoidal
from engine.text import tokens_within
from engine.variants.base import SEED

STRUCTURES = ("random", "local", "clustered", "global")
LENGTH_LIMITS = (8, 1024)
HEAD_DIM_LIMITS = (8, 128)
HEADS_LIMITS = (1, 8)
SHARPNESS_LIMITS = (0.1, 8.0)
TEXT_TOKEN_LIMIT = 256
TEXT_LABEL = "seeded random multi-head layer (untrained)"


def _check(name: str, value, limits):
    """``value`` as a number within ``limits``, or an InputError naming them."""
    lo, hi = limits
    return gate.within(value, lo, hi, "inputs.range", name=name, lo=lo, hi=hi, value=value)


def synthetic(
    n: int,
    d: int = 32,
    heads: int = 2,
    *,
    structure: str = "clustered",
    sharpness: float = 1.0,
    seed: int = 0,
):
    """``q, k, v [1, heads, n, d]`` and position labels."""
    n, d = _check("n", n, LENGTH_LIMITS), _check("head size d", d, HEAD_DIM_LIMITS)
    heads, seed = _check("heads", heads, HEADS_LIMITS), SEED.check(seed)
    sharpness = _check("sharpness", sharpness, SHARPNESS_LIMITS)
    if structure not in STRUCTURES:
        raise InputError("inputs.structure", structures=", ".join(STRUCTURES), structure=structure)
    g = torch.Generator().manual_seed(seed)
    noise = torch.randn(3, 1, heads, n, d, generator=g)
    q, k, v = noise[0], noise[1], noise[2]
    if structure == "local":
        pe = torch.from_numpy(sinusoidal(n, d)).float() * math.sqrt(d / 2)
        q, k = pe + 0.3 * q, pe + 0.3 * k
    elif structure == "clustered":
        c = max(2, round(math.sqrt(n) / 2))
        centres = torch.randn(heads, c, d, generator=g) * 1.5
        member = torch.randint(0, c, (n,), generator=g)
        base = centres[:, member]  # (heads, n, d)
        q, k = base + 0.5 * q, base + 0.5 * k
    elif structure == "global":
        hubs = torch.randint(0, n, (max(1, n // 32),), generator=g)
        k = 0.5 * k
        k[..., hubs, :] = q.mean(dim=-2, keepdim=True) * 4 + k[..., hubs, :]
    return q * sharpness, k, v, [str(i) for i in range(n)]


def embed_word(word: str, d_model: int) -> torch.Tensor:
    """A fixed random vector per lower-cased word (seeded by a stable hash, not Python's)."""
    g = torch.Generator().manual_seed(zlib.crc32(word.lower().encode("utf-8")))
    return torch.randn(d_model, generator=g)


def text_layer(text: str, heads: int = 2, d: int = 32, *, seed: int = 0):
    """``q, k, v [1, heads, n, d]`` and the tokens, from a seeded untrained layer."""
    d, heads = _check("head size d", d, HEAD_DIM_LIMITS), _check("heads", heads, HEADS_LIMITS)
    seed = SEED.check(seed)
    tokens = tokens_within(text, TEXT_TOKEN_LIMIT)
    d_model = heads * d
    x = torch.stack([embed_word(t, d_model) for t in tokens])
    x = x + torch.from_numpy(sinusoidal(len(tokens), d_model)).float()
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(3, d_model, d_model, generator=g) / math.sqrt(d_model)
    qkv = (x @ W).view(3, 1, len(tokens), heads, d).transpose(2, 3)  # (3, 1, h, n, d)
    return qkv[0], qkv[1], qkv[2], tokens


LONG_LENGTH_LIMITS = (256, 32768)


def long_qk(n: int, d: int = 64, *, structure: str = "local", seed: int = 0):
    """``q, k [1, 1, n, d]`` for the pooled long-sequence map (``local`` or ``random``).

    ``local`` uses sinusoids of the position with wavelengths up to n, so q_i·k_j falls
    off with |i − j| at every scale of the pooled figure.
    """
    n, d = _check("n", n, LONG_LENGTH_LIMITS), _check("head size d", d, HEAD_DIM_LIMITS)
    seed = SEED.check(seed)
    if structure not in ("local", "random"):
        raise InputError("inputs.long_structure", structure=structure)
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, 1, 1, n, d, generator=g).unbind(0)
    if structure == "local":
        pos = torch.arange(n, dtype=torch.float32)[:, None]
        freq = torch.logspace(0, -math.log10(n), d // 2)  # wavelengths 2π … 2πn
        pe = torch.cat([torch.sin(pos * freq), torch.cos(pos * freq)], dim=1) * math.sqrt(d / 2)
        q, k = pe + 0.3 * q, pe + 0.3 * k
    return q, k


# -- a user's own Q/K/V ------------------------------------------------------------------
# Limits of an uploaded Q/K/V file: what the lab can draw and compute interactively.
NPZ_MAX_BYTES = 64 * 2**20
NPZ_MAX_N = 1024
NPZ_MAX_D = 256
NPZ_MAX_SLICES = 16  # B·H
NPZ_MAX_UNPACKED = 3 * NPZ_MAX_SLICES * NPZ_MAX_N * NPZ_MAX_D * 8 + 2**20  # q, k, v in float64
NPZ_LIMITS = Message(
    "npz.limits", n=NPZ_MAX_N, d=NPZ_MAX_D, slices=NPZ_MAX_SLICES, mb=NPZ_MAX_BYTES // 2**20
)


def load_qkv_npz(data: bytes) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """q, k, v float32 ``[B, H, N, D]`` from an uploaded NPZ (no pickle), or InputError.

    The file goes through the input gate (engine.gate.npz_arrays: size, every member's
    declared size, any damage), then its arrays are checked against the lab's limits,
    and finally their values: finite in float32, with scores q·k/√d float32 can hold.
    """
    if len(data) > NPZ_MAX_BYTES:
        raise InputError("npz.too_big", size=len(data) / 2**20, limits=NPZ_LIMITS)
    try:
        npz = gate.npz_arrays(data, max_bytes=NPZ_MAX_BYTES, max_unpacked=NPZ_MAX_UNPACKED)
    except InputError as exc:
        key = exc.message.key
        if key == "file.single_npy":
            raise InputError("npz.single_array", limits=NPZ_LIMITS) from None
        if key == "file.object_array":
            raise InputError("npz.object_arrays", reason=exc.message) from None
        raise InputError("npz.unreadable", reason=exc.message, limits=NPZ_LIMITS) from None
    missing = [key for key in ("q", "k", "v") if key not in npz]
    if missing:
        found = ", ".join(sorted(npz))[:200] or "none"
        raise InputError("npz.missing", found=found, missing=", ".join(missing), limits=NPZ_LIMITS)
    arrays = {key: npz[key] for key in ("q", "k", "v")}
    shapes = {key: a.shape for key, a in arrays.items()}
    for key, a in arrays.items():
        if a.dtype.kind != "f":
            raise InputError("npz.dtype", array=key, dtype=str(a.dtype))
        if a.ndim not in (3, 4):
            raise InputError("npz.rank", array=key, shape=str(a.shape))
    if len(set(shapes.values())) != 1:
        raise InputError("npz.shapes_differ", shapes=str(shapes))
    shape = arrays["q"].shape
    *bh, n, d = shape if len(shape) == 4 else (1, *shape)
    if min(shape) < 1 or n > NPZ_MAX_N or d > NPZ_MAX_D or math.prod(bh) > NPZ_MAX_SLICES:
        raise InputError("npz.outside_limits", shape=str(shape), limits=NPZ_LIMITS)
    with np.errstate(over="ignore"):  # 1e300 in float64 is inf in float32: refused below
        q, k, v = (torch.from_numpy(arrays[key].astype(np.float32)) for key in "qkv")
    for key, t in zip("qkv", (q, k, v), strict=True):
        if not bool(torch.isfinite(t).all()):
            raise InputError("npz.not_finite", array=key)
    if q.dim() == 3:
        q, k, v = q[None], k[None], v[None]
    q_norm = float(torch.linalg.vector_norm(q.double(), dim=-1).max())
    k_norm = float(torch.linalg.vector_norm(k.double(), dim=-1).max())
    gate.scores(q_norm, k_norm, d**-0.5, name="q, k")
    return q.contiguous(), k.contiguous(), v.contiguous()
