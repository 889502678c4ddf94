"""The one shape that flows from the engine to every view.

An `AttentionMap` is a labelled float32 tensor ``[L, H, Q, K]`` (L = layers, hops or
decoding steps; H = heads, 1 where a model has none) plus honest flags saying what
kind of thing it is: exact weights, an *implied* map of a method that never forms
one (Performer, Linformer, Mamba), a *pooled* map of a long sequence, or a
*masked-only* pattern (which keys a variant may see, not how much it looks).

A `Trace` is what one run of a model returns: inputs, outputs, the maps, optional
vectors (queries, keys, memory embeddings), metrics and timings. It round-trips
losslessly through NPZ and JSON, which is also the export users download.
"""

from __future__ import annotations

import base64
import io
import json
import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from engine import gate
from engine.errors import InputError
from engine.rollout import HeadReadings

KINDS = ("alignment", "self", "cross", "memory", "hidden", "pattern")
FORMAT_VERSION = 1
_ROW_SUM_TOL = 1e-3
# What a trace file may be: a JSON export of a 512-token map is ≈ 5 MB.
FILE_MAX_BYTES = 64 * 2**20
NPZ_MAX_UNPACKED = 256 * 2**20


class TraceError(ValueError):
    """A Trace or AttentionMap that breaks the contract; the message says how."""


class TraceFileError(InputError, TraceError):
    """A trace file (a user's download, imported again) that cannot be read: the user's
    input, so an InputError with a message id, and a TraceError for the contract."""


def _labels(values: Any, name: str) -> tuple[str, ...]:
    if isinstance(values, str):
        raise TraceError(f"{name} must be a sequence of strings, not one string")
    return tuple(str(v) for v in values)


@dataclass(frozen=True)
class AttentionMap(HeadReadings):
    """Attention weights ``[L, H, Q, K]`` with labels and honesty flags.

    ``normalized`` says each row is a distribution (sums to 1); a row may also be
    all zeros when every key is masked for that query (padding). ``pooling`` is the
    block size a long map was averaged over (1 = not pooled). ``implied`` marks
    maps reconstructed for a method that never materialises them. ``signed`` marks maps
    whose weights can be negative: drawn on a diverging scale, never read as a distribution.
    """

    weights: np.ndarray
    query_labels: tuple[str, ...]
    key_labels: tuple[str, ...]
    kind: str
    exact: bool = True
    implied: bool = False
    pooling: int = 1
    masked_only: bool = False
    normalized: bool = True
    signed: bool = False  # weights may be negative (a difference of maps, a signed kernel)
    layer_labels: tuple[str, ...] = ()
    head_labels: tuple[str, ...] = ()
    note: str = ""

    def __post_init__(self) -> None:
        w = np.asarray(self.weights)
        if w.ndim != 4:
            raise TraceError(f"weights must be [L, H, Q, K]; got {w.ndim} dimensions {w.shape}")
        w = np.ascontiguousarray(w, dtype=np.float32)
        object.__setattr__(self, "weights", w)
        q = _labels(self.query_labels, "query_labels")
        k = _labels(self.key_labels, "key_labels")
        object.__setattr__(self, "query_labels", q)
        object.__setattr__(self, "key_labels", k)
        L, H, Q, K = w.shape
        if len(q) != Q:
            raise TraceError(f"{len(q)} query labels for {Q} query rows")
        if len(k) != K:
            raise TraceError(f"{len(k)} key labels for {K} key columns")
        ll = _labels(self.layer_labels, "layer_labels") or tuple(f"L{i}" for i in range(L))
        hl = _labels(self.head_labels, "head_labels") or tuple(f"H{i}" for i in range(H))
        if len(ll) != L:
            raise TraceError(f"{len(ll)} layer labels for {L} layers")
        if len(hl) != H:
            raise TraceError(f"{len(hl)} head labels for {H} heads")
        object.__setattr__(self, "layer_labels", ll)
        object.__setattr__(self, "head_labels", hl)
        if self.kind not in KINDS:
            raise TraceError(f"kind {self.kind!r} is not one of {', '.join(KINDS)}")
        if int(self.pooling) < 1:
            raise TraceError(f"pooling factor must be >= 1, got {self.pooling}")
        object.__setattr__(self, "pooling", int(self.pooling))
        if not np.isfinite(w).all():
            bad = int((~np.isfinite(w)).sum())
            raise TraceError(f"weights hold {bad} non-finite values (NaN or inf)")
        if self.exact and self.implied:
            raise TraceError("a map cannot be both exact and implied")
        if self.normalized and w.size:
            sums = w.sum(axis=-1, dtype=np.float64)
            ok = (np.abs(sums - 1.0) <= _ROW_SUM_TOL) | (np.abs(sums) <= _ROW_SUM_TOL)
            if not ok.all():
                idx = tuple(int(i) for i in np.argwhere(~ok)[0])
                raise TraceError(
                    f"rows must sum to 1 (or 0 when fully masked); row {idx} sums to "
                    f"{sums[idx]:.6f}"
                )

    @property
    def shape(self) -> tuple[int, int, int, int]:
        return tuple(self.weights.shape)  # type: ignore[return-value]

    @property
    def flags(self) -> list[str]:
        """Short words a figure shows so nobody mistakes one kind of map for another."""
        out = ["exact" if self.exact else "approximate"]
        if self.implied:
            out.append("implied")
        if self.pooling > 1:
            out.append(f"pooled ×{self.pooling}")
        if self.masked_only:
            out.append("masked-only")
        if self.signed:
            out.append("signed")
        return out

    def head(self, layer: int, head: int) -> np.ndarray:
        return self.weights[layer, head]

    def mean_over_heads(self) -> np.ndarray:
        return self.weights.mean(axis=1)

    def pooled(self, side: int = 64) -> AttentionMap:
        """This map averaged over square blocks so neither side exceeds ``side``: P̄_IJ is
        the block's mean, so rows no longer sum to 1 and the map says ``pooled ×f``."""
        w, f = block_mean(self.weights, side)
        if f == 1:
            return self
        q, k = block_labels(self.query_labels, f), block_labels(self.key_labels, f)
        pooling = self.pooling * f
        return replace(
            self, weights=w, query_labels=q, key_labels=k, pooling=pooling, normalized=False
        )

    def _meta(self) -> dict[str, Any]:
        return {
            "query_labels": list(self.query_labels),
            "key_labels": list(self.key_labels),
            "kind": self.kind,
            "exact": self.exact,
            "implied": self.implied,
            "pooling": self.pooling,
            "masked_only": self.masked_only,
            "normalized": self.normalized,
            "signed": self.signed,
            "layer_labels": list(self.layer_labels),
            "head_labels": list(self.head_labels),
            "note": self.note,
            "shape": list(self.weights.shape),
        }

    @classmethod
    def _from_meta(cls, meta: dict[str, Any], weights: np.ndarray) -> AttentionMap:
        meta = dict(meta)
        shape = meta.pop("shape", None)
        weights = np.asarray(weights, dtype=np.float32)
        if shape is not None:
            if int(np.prod(shape)) != weights.size:
                raise TraceError(f"stored shape {shape} does not match {weights.size} values")
            weights = weights.reshape(shape)
        return cls(weights=weights, **meta)


def block_mean(w: np.ndarray, side: int) -> tuple[np.ndarray, int]:
    """``w [..., Q, K]`` averaged over f × f blocks (f the least making both sides ≤
    ``side``; edge blocks over the cells they hold; NaN cells left out); returns (w, f)."""
    q, k = w.shape[-2:]
    f = max(1, math.ceil(max(q, k) / side))
    if f == 1:
        return w, 1
    pad = [(0, 0)] * (w.ndim - 2) + [(0, -q % f), (0, -k % f)]
    blocks = np.pad(np.asarray(w, np.float64), pad, constant_values=np.nan)
    blocks = blocks.reshape(*w.shape[:-2], blocks.shape[-2] // f, f, blocks.shape[-1] // f, f)
    cells = np.isfinite(blocks).sum(axis=(-3, -1))
    sums = np.nansum(blocks, axis=(-3, -1))
    with np.errstate(invalid="ignore"):  # a block with no cell (all hidden) stays NaN
        return (sums / np.where(cells, cells, np.nan)).astype(np.float32), f


def block_labels(labels, f: int) -> list[str]:
    """The labels of f-blocks: the positions each spans ("0–3")."""
    return [f"{i}–{min(i + f, len(labels)) - 1}" for i in range(0, len(labels), f)]


def renormalized(w: np.ndarray) -> np.ndarray:
    """Rows within the contract's tolerance of summing to 1, divided by their sums in
    float64: a map assembled from pieces in float32 (blocks, rounds, a kernel's lse)
    then sums to 1 to float32 rounding. A row further off is left for the contract to
    refuse, and an all-zero row (every key masked) stays 0."""
    sums = w.sum(axis=-1, keepdims=True, dtype=np.float64)
    near = np.abs(sums - 1.0) <= _ROW_SUM_TOL
    return np.where(near, w / np.where(near, sums, 1.0), w).astype(np.float32)


def _b64(a: np.ndarray) -> dict[str, str]:
    """An array's values as base64 of its little-endian bytes (its dtype is in the meta)."""
    data = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
    return {"base64": base64.b64encode(data).decode("ascii")}


def _array(values: Any, dtype: np.dtype) -> np.ndarray:
    """The flat values of a JSON export: base64 bytes (this format) or a list of numbers
    (files written before it)."""
    if isinstance(values, dict):
        text = values.get("base64")
        if not isinstance(text, str):
            raise TraceError("an array must be a list of numbers or {'base64': text}")
        raw = base64.b64decode(text, validate=True)
        little = dtype.newbyteorder("<")
        if len(raw) % little.itemsize:
            raise TraceError("an array's bytes do not divide into its dtype")
        return np.frombuffer(raw, dtype=little).astype(dtype)
    return np.asarray(values, dtype=dtype)


def _jsonable(value: Any, where: str) -> Any:
    """Outputs, inputs and metrics must survive JSON; numpy scalars are unwrapped."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        raise TraceError(f"{where} holds a non-finite number")
    if isinstance(value, dict):
        return {str(k): _jsonable(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, f"{where}[]") for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TraceError(f"{where} holds {type(value).__name__}, which JSON cannot carry")


@dataclass
class Trace:
    """What one run of a model returns, from engine to views and to the export file."""

    model: str
    task: str
    inputs: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    maps: dict[str, AttentionMap] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.inputs = _jsonable(self.inputs, "inputs")
        self.outputs = _jsonable(self.outputs, "outputs")
        self.metrics = _jsonable(self.metrics, "metrics")
        self.timings = _jsonable(self.timings, "timings")
        for name, m in self.maps.items():
            if not isinstance(m, AttentionMap):
                raise TraceError(f"maps[{name!r}] is {type(m).__name__}, not an AttentionMap")
        vecs = {}
        for name, v in self.vectors.items():
            arr = np.asarray(v)
            if arr.dtype.kind not in "fiub":
                raise TraceError(f"vectors[{name!r}] has dtype {arr.dtype}; numbers only")
            if arr.dtype.kind == "f" and not np.isfinite(arr).all():
                raise TraceError(f"vectors[{name!r}] holds non-finite values")
            vecs[name] = arr
        self.vectors = vecs

    # -- export ---------------------------------------------------------------------
    def _meta(self) -> dict[str, Any]:
        return {
            "format": "attention-studio-trace",
            "version": FORMAT_VERSION,
            "model": self.model,
            "task": self.task,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "metrics": self.metrics,
            "timings": self.timings,
            "maps": {name: m._meta() for name, m in self.maps.items()},
            "vectors": {
                name: {"dtype": str(v.dtype), "shape": list(v.shape)}
                for name, v in self.vectors.items()
            },
        }

    def to_json(self) -> str:
        """JSON text; every array as base64 of its little-endian bytes: exact, and about a
        third of the size of decimal text (a 5-sentence retrieval trace: 34 MB as text)."""
        meta = self._meta()
        for name, m in self.maps.items():
            meta["maps"][name]["weights"] = _b64(m.weights)
        for name, v in self.vectors.items():
            meta["vectors"][name]["values"] = _b64(v)
        return json.dumps(meta, ensure_ascii=False)

    def export_bytes(self) -> int:
        """About how many bytes :meth:`to_json` writes, from the shapes alone (the arrays'
        base64 plus the metadata), so a button can say its size before anything is built."""
        arrays = [m.weights for m in self.maps.values()] + list(self.vectors.values())
        meta = json.dumps(self._meta(), ensure_ascii=False).encode()
        return sum(4 * ((a.nbytes + 2) // 3) + len('"": {"base64": ""}, ') for a in arrays) + len(
            meta
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> Trace:
        """The Trace of :meth:`to_json`'s text; anything else is a :class:`TraceFileError`."""
        try:
            meta = gate.json_text(text, max_bytes=FILE_MAX_BYTES)
        except InputError as exc:
            raise TraceFileError("trace.not_json", reason=exc.message) from None
        return cls._from_meta(meta, json_payload=True)

    def to_npz(self) -> bytes:
        """NPZ bytes: arrays stored natively, metadata as a unicode array (no pickle)."""
        arrays: dict[str, np.ndarray] = {"__meta__": np.array(json.dumps(self._meta()))}
        for i, m in enumerate(self.maps.values()):
            arrays[f"map{i}"] = m.weights
        for i, v in enumerate(self.vectors.values()):
            arrays[f"vec{i}"] = v
        buf = io.BytesIO()
        np.savez_compressed(buf, **arrays)
        return buf.getvalue()

    @classmethod
    def from_npz(cls, data: bytes) -> Trace:
        """The Trace of :meth:`to_npz`'s bytes; anything else is a :class:`TraceFileError`."""
        try:
            arrays = gate.npz_arrays(data, max_bytes=FILE_MAX_BYTES, max_unpacked=NPZ_MAX_UNPACKED)
            text = arrays.pop("__meta__", None)
            if text is None or text.dtype.kind != "U" or text.ndim != 0:
                raise InputError("trace.not_ours")
            meta = gate.json_text(str(text), max_bytes=FILE_MAX_BYTES)
        except InputError as exc:
            raise TraceFileError("trace.not_npz", reason=exc.message) from None
        if isinstance(meta, dict):
            meta["_arrays"] = arrays
        return cls._from_meta(meta, json_payload=False)

    @classmethod
    def _from_meta(cls, meta: Any, *, json_payload: bool) -> Trace:
        if not isinstance(meta, dict) or meta.get("format") != "attention-studio-trace":
            raise TraceFileError("trace.not_ours")
        if meta.get("version") != FORMAT_VERSION:
            version = str(meta.get("version"))[:20]
            raise TraceFileError("trace.version", version=version, supported=FORMAT_VERSION)
        arrays = meta.get("_arrays", {})
        try:
            # What a view reads as text or as a table must be one, whatever the file says.
            for key, kind in (("model", str), ("task", str), ("inputs", dict), ("outputs", dict)):
                if not isinstance(meta[key], kind):
                    raise TraceError(f"{key} must be {'text' if kind is str else 'an object'}")
            for key in ("metrics", "timings"):
                if not isinstance(meta[key], dict) or not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool)
                    for v in meta[key].values()
                ):
                    raise TraceError(f"{key} must map names to numbers")
            maps = {}
            for i, (name, m) in enumerate(meta["maps"].items()):
                m = dict(m)
                w = (
                    _array(m.pop("weights"), np.dtype(np.float32))
                    if json_payload
                    else arrays[f"map{i}"]
                )
                maps[name] = AttentionMap._from_meta(m, w)
            vectors = {}
            for i, (name, v) in enumerate(meta["vectors"].items()):
                if json_payload:
                    dtype = np.dtype(v["dtype"])
                    if dtype.kind not in "fiub":  # a "S2000000000" would allocate 2 GB
                        raise TraceError(f"vectors[{name!r}] has dtype {dtype}; numbers only")
                    arr = _array(v["values"], dtype).reshape(v["shape"])
                else:
                    arr = arrays[f"vec{i}"]
                vectors[name] = arr
            return cls(
                model=meta["model"],
                task=meta["task"],
                inputs=meta["inputs"],
                outputs=meta["outputs"],
                maps=maps,
                vectors=vectors,
                metrics=meta["metrics"],
                timings=meta["timings"],
            )
        except TraceFileError:
            raise
        # Whatever a damaged or hand-edited file holds (a list where a dict belongs, a
        # shape that does not fit, a map breaking the contract) ends here, named.
        except (
            TraceError,
            KeyError,
            TypeError,
            ValueError,
            AttributeError,
            IndexError,
            OverflowError,
        ) as exc:
            reason = f"{type(exc).__name__}: {exc}"[:160]
            raise TraceFileError("trace.damaged", reason=reason) from None
