"""Training timelines: a fixed probe set's Traces at log-spaced steps, saved beside a checkpoint.

How attention *comes to be* is read from snapshots taken while a model trains: at each of
≈ 16 log-spaced steps the training command runs its probe set (lesson sentences, a few
stories, a recall probe) through the model being trained and keeps the Traces it returns,
with the step's metrics (loss, accuracy, AER, …). A page reads a timeline like any other
Trace, with the step as one more axis (``Timeline.at``).

Files, beside the checkpoint ``<name>``:

- ``<name>-timeline.safetensors``: every map's weights as float16 (a map is drawn, not
  computed with; half the bytes), keyed ``s<step index>.p<probe index>.<map name>``;
- ``<name>-timeline.json``: format and version, the steps, the metrics (one value per
  step), named marks (e.g. where linear start ended), the probe Traces' metadata (labels,
  inputs, outputs, flags) and the command that reproduces the timeline with the checkpoint.

A missing, truncated or inconsistent timeline is an :class:`InputError` saying how to
rebuild it; a page shows that message and keeps showing the finished model.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.numpy import load_file, save_file

from engine import checkpoints, gate
from engine.errors import InputError
from engine.trace import Trace, TraceError

FORMAT = "attention-studio-timeline"
VERSION = 1
SNAPSHOTS = 16  # the issue asks for ≈ 12–20 per run
SUFFIX = checkpoints.TIMELINE_SUFFIX
META_MAX_BYTES = 64 * 2**20  # the JSON beside the weights: metrics and probe labels


def snapshot_steps(total: int, n: int = SNAPSHOTS, first: int = 10) -> list[int]:
    """Step 0 and ``n − 1`` log-spaced steps from ``first`` to ``total`` (fewer when two
    round to the same step). Learning is fast early and sudden at a phase change; a log
    axis keeps the early steps and the end equally visible."""
    if total <= first:
        return list(range(total + 1))
    logs = np.geomspace(first, total, n - 1)
    return sorted({0, *(int(round(s)) for s in logs)})


@dataclass
class Timeline:
    """Snapshots of one training run: ``probes[i]`` are the probe Traces at ``steps[i]``;
    ``metrics[name][i]`` the step's values (None where a metric was not measured)."""

    model: str
    steps: list[int]
    metrics: dict[str, list[float | None]] = field(default_factory=dict)
    probes: list[list[Trace]] = field(default_factory=list)
    marks: dict[str, int] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        steps = [int(s) for s in self.steps]
        if not steps or any(b <= a for a, b in zip(steps, steps[1:], strict=False)):
            raise ValueError("the saved steps are not an increasing list")
        self.steps = steps
        for name, values in self.metrics.items():
            if len(values) != len(steps):
                raise ValueError(f"metric {name} has {len(values)} values for {len(steps)} steps")
        if self.probes and len(self.probes) != len(steps):
            raise ValueError(f"{len(self.probes)} probe snapshots for {len(steps)} steps")

    def at(self, step: int) -> int:
        """Index of the saved step ``step``, or of the nearest saved one before it."""
        i = int(np.searchsorted(np.asarray(self.steps), int(step), side="right")) - 1
        return max(i, 0)

    def curve(self, metric: str) -> tuple[list[int], list[float]]:
        """(steps, values) of a metric, the steps where it was not measured left out."""
        values = self.metrics[metric]
        pairs = [(s, v) for s, v in zip(self.steps, values, strict=True) if v is not None]
        return [s for s, _ in pairs], [float(v) for _, v in pairs]


class Recorder:
    """Collects a timeline while a model trains: the training loop asks ``due(step)`` and,
    when it is, hands over the step's metrics and probe Traces (run under ``no_grad`` and
    with the random state restored, so that recording never changes the trained weights)."""

    def __init__(self, model: str, total_steps: int, n: int = SNAPSHOTS, first: int = 10):
        self.model = model
        self.wanted = set(snapshot_steps(total_steps, n, first))
        self.steps: list[int] = []
        self.metrics: dict[str, list] = {}
        self.probes: list[list[Trace]] = []
        self.marks: dict[str, int] = {}

    def due(self, step: int) -> bool:
        return step in self.wanted

    def add(self, step: int, metrics: dict[str, float], traces: list[Trace]) -> None:
        for name in metrics:  # in the caller's order, so the saved file is reproducible
            if name not in self.metrics:
                self.metrics[name] = [None] * len(self.steps)  # a metric that starts later
        for name, values in self.metrics.items():
            value = metrics.get(name)
            values.append(None if value is None else float(value))
        self.steps.append(int(step))
        self.probes.append(list(traces))

    def mark(self, name: str, step: int) -> None:
        self.marks[name] = int(step)

    def timeline(self, **meta) -> Timeline:
        return Timeline(self.model, self.steps, self.metrics, self.probes, self.marks, meta)


def paths(name: str, directory: Path) -> tuple[Path, Path]:
    """The timeline's (weights, JSON) files beside the checkpoint ``name``."""
    d = Path(directory)
    return d / f"{name}{SUFFIX}.safetensors", d / f"{name}{SUFFIX}.json"


def save(tl: Timeline, name: str, directory: Path) -> dict:
    """Write the two files; returns the JSON written. Maps go to float16."""
    arrays: dict[str, np.ndarray] = {}
    probes = []
    for i, traces in enumerate(tl.probes):
        row = []
        for j, trace in enumerate(traces):
            meta = trace._meta()
            for map_name, amap in trace.maps.items():
                arrays[f"s{i}.p{j}.{map_name}"] = amap.weights.astype(np.float16)
            row.append(meta)
        probes.append(row)
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "model": tl.model,
        "steps": tl.steps,
        "metrics": tl.metrics,
        "marks": tl.marks,
        "probes": probes,
        **tl.meta,
    }
    weights, meta_path = paths(name, directory)
    weights.parent.mkdir(parents=True, exist_ok=True)
    if not arrays:  # safetensors will not write an empty file: keep the step axis
        arrays["steps"] = np.asarray(tl.steps, dtype=np.int64)
    save_file(arrays, str(weights), metadata={"format": FORMAT})
    meta_path.write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return meta


def exists(name: str, directory: Path) -> bool:
    return all(p.exists() for p in paths(name, directory))


def stamp(name: str, directory: Path) -> tuple | None:
    """(size, mtime) of both files, or None when one is missing: a cache key that changes
    when the timeline is trained again."""
    try:
        return tuple((p.stat().st_size, p.stat().st_mtime_ns) for p in paths(name, directory))
    except OSError:
        return None


def load(name: str, directory: Path, command: str = "") -> Timeline:
    """The timeline saved beside checkpoint ``name``. Missing files, a truncated file or
    an inconsistent one are an :class:`InputError` (``timeline.missing`` /
    ``timeline.bad``) that names the command rebuilding it."""
    weights, meta_path = paths(name, directory)
    if not weights.exists() or not meta_path.exists():
        raise InputError("timeline.missing", name=name, command=command or "python -m engine.train")
    try:
        arrays = load_file(str(weights))
        meta = gate.json_text(meta_path.read_bytes(), max_bytes=META_MAX_BYTES)
        return _from(meta, arrays)
    # InputError (the gate's) is a ValueError; AttributeError: a list where a dict belongs
    except (
        OSError,
        ValueError,
        KeyError,
        TypeError,
        AttributeError,
        SafetensorError,
        TraceError,
    ) as exc:
        reason = str(exc)[:160]
        raise InputError(
            "timeline.bad", name=name, reason=reason, command=command or meta_command(meta_path)
        ) from None


def meta_command(meta_path: Path) -> str:
    try:
        return str(gate.json_text(meta_path.read_bytes(), max_bytes=META_MAX_BYTES)["command"])
    except (OSError, ValueError, TypeError, KeyError):
        return "python -m engine.train"


def _from(meta: dict, arrays: dict[str, np.ndarray]) -> Timeline:
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise ValueError(f"not a version-{VERSION} timeline")
    for key, kind in (("metrics", dict), ("marks", dict), ("probes", list), ("steps", list)):
        if not isinstance(meta.get(key), kind):
            raise ValueError(f"{key} is not a JSON {'object' if kind is dict else 'list'}")
    probes = []
    for i, row in enumerate(meta["probes"]):
        traces = []
        for j, tmeta in enumerate(row):
            tmeta = dict(tmeta, maps=dict(tmeta["maps"]))
            tmeta["_arrays"] = {}
            for k, map_name in enumerate(tmeta["maps"]):
                w = arrays[f"s{i}.p{j}.{map_name}"].astype(np.float32)
                if tmeta["maps"][map_name].get("normalized", True):
                    w = _renormalized(w)  # float16 rounding moves a long row's sum by ~1e-3
                tmeta["_arrays"][f"map{k}"] = w
            traces.append(Trace._from_meta(tmeta, json_payload=False))
        probes.append(traces)
    known = ("format", "version", "model", "steps", "metrics", "marks", "probes")
    rest = {k: v for k, v in meta.items() if k not in known}
    return Timeline(meta["model"], meta["steps"], meta["metrics"], probes, meta["marks"], rest)


def _renormalized(w: np.ndarray) -> np.ndarray:
    sums = w.sum(axis=-1, keepdims=True, dtype=np.float64)
    return np.where(sums > 0, w / np.where(sums > 0, sums, 1.0), w).astype(np.float32)


def quiet(fn):
    """Run ``fn()`` (a probe) without gradients and without touching the random state, so
    that a run that records a timeline trains the same weights as one that does not."""
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        state, py_state = np.random.get_state(), random.getstate()
        try:
            return fn()
        finally:
            np.random.set_state(state)
            random.setstate(py_state)
