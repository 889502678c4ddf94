"""Sinusoidal positional encoding (Vaswani et al. 2017, §3.5) and its rotation property.

PE(pos, 2i) = sin(pos / 10000^{2i/d}),  PE(pos, 2i+1) = cos(pos / 10000^{2i/d})

For any offset k, PE(pos + k) = M_k · PE(pos) where M_k is block-diagonal with one
2×2 rotation by angle k·ω_i per frequency ω_i = 10000^{-2i/d}: the reason the paper
hoped the model could "attend by relative positions".
"""

from __future__ import annotations

import numpy as np

from engine import gate
from engine.errors import InputError

D_MODEL_LIMITS = (2, 1024)
LENGTH_LIMITS = (1, 2048)
OFFSET_LIMIT = 100_000  # |k|: far enough for the property, near enough for float64's sin


def check_d_model(d_model: int) -> int:
    lo, hi = D_MODEL_LIMITS
    d_model = gate.within(
        d_model, lo, hi, "positional.d_model_range", lo=lo, hi=hi, d_model=d_model
    )
    if d_model % 2:
        raise InputError("positional.d_model_odd", d_model=d_model)
    return d_model


def check_length(n: int) -> int:
    lo, hi = LENGTH_LIMITS
    return gate.within(n, lo, hi, "positional.length_range", lo=lo, hi=hi, n=n)


def check_offset(k: int) -> int:
    limit = OFFSET_LIMIT
    return gate.within(k, -limit, limit, "positional.offset_range", limit=limit, k=k)


def frequencies(d_model: int) -> np.ndarray:
    """ω_i = 1 / 10000^{2i/d_model} for i = 0 … d_model/2 − 1."""
    d_model = check_d_model(d_model)
    return 1.0 / (10000.0 ** (np.arange(0, d_model, 2, dtype=np.float64) / d_model))


def sinusoidal(n_positions: int, d_model: int, offset: int = 0) -> np.ndarray:
    """``[n_positions, d_model]`` float64 table of PE(pos) for pos = offset … offset+n−1."""
    n_positions, offset = check_length(n_positions), check_offset(offset)
    return encode(np.arange(offset, offset + n_positions, dtype=np.float64), d_model)


def encode(pos: np.ndarray, d_model: int, dims: list[int] | None = None) -> np.ndarray:
    """``[len(pos), len(dims)]`` PE at real positions (all d_model dimensions by default).

    The table is this function at whole positions; a curve drawn between them is the same
    function, so a figure's line and its dots cannot disagree."""
    d_model = check_d_model(d_model)
    last = d_model - 1
    if dims is None:
        dims = np.arange(d_model)
    else:
        message = "positional.dim_range"
        dims = np.array([gate.within(d, 0, last, message, last=last) for d in dims], np.int64)
    pos = np.asarray(pos, dtype=np.float64)
    if pos.ndim != 1 or not np.all(np.abs(pos) <= OFFSET_LIMIT + LENGTH_LIMITS[1]):
        raise InputError("positional.positions", limit=OFFSET_LIMIT + LENGTH_LIMITS[1])
    angle = pos[:, None] * frequencies(d_model)[dims // 2]
    return np.where(dims % 2 == 0, np.sin(angle), np.cos(angle))


def rotation(k: int, d_model: int) -> np.ndarray:
    """M_k with PE(pos + k) = M_k PE(pos), independent of pos."""
    k, d_model = check_offset(k), check_d_model(d_model)
    w = frequencies(d_model)
    M = np.zeros((d_model, d_model))
    c, s = np.cos(k * w), np.sin(k * w)
    i = np.arange(0, d_model, 2)
    # sin(a + b) = sin a cos b + cos a sin b;  cos(a + b) = cos a cos b − sin a sin b
    M[i, i], M[i, i + 1] = c, s
    M[i + 1, i], M[i + 1, i + 1] = -s, c
    return M


def verify_rotation(k: int, n_positions: int, d_model: int) -> float:
    """Largest |PE(pos + k) − M_k PE(pos)| over the positions shown: numerically ~1e-12."""
    pe = sinusoidal(n_positions, d_model)
    shifted = sinusoidal(n_positions, d_model, offset=k)
    return float(np.abs(shifted - pe @ rotation(k, d_model).T).max())


def similarity(pe: np.ndarray) -> np.ndarray:
    """PE · PEᵀ: depends only on the distance |i − j| (a sum of cosines)."""
    return pe @ pe.T


def cosine_similarity(pe: np.ndarray) -> np.ndarray:
    """cos(PE(i), PE(j)): compares a learned table with the sinusoids whatever their norms."""
    unit = pe / np.maximum(np.linalg.norm(pe, axis=1, keepdims=True), 1e-12)
    return unit @ unit.T
