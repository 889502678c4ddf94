"""Damaged and hand-made files into every documented loader: trace re-import (JSON, NPZ),
training timelines, uploaded Q/K/V and decks. Only a result or the loader's InputError
(DeckError for a deck, the app's own) may come back."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from kit import decks

from engine import timeline
from engine.trace import AttentionMap, Trace
from engine.variants import inputs
from tests.fuzz.strategies import (
    damaged,
    deep_json,
    json_values,
    mutate_json,
    npz_bytes,
    only_input_errors,
    qkv_arrays,
)

torch.set_num_threads(1)


def _trace() -> Trace:
    rng = np.random.default_rng(0)
    w = rng.random((2, 2, 3, 4))
    w /= w.sum(-1, keepdims=True)
    amap = AttentionMap(w, ["a", "b", "c"], ["w", "x", "y", "z"], "cross", note="n")
    return Trace(
        "m",
        "t",
        inputs={"text": "a b c", "n": 3},
        outputs={"out": [1, 2]},
        maps={"cross": amap},
        vectors={"v": rng.standard_normal((3, 2)).astype(np.float32)},
        metrics={"loss": 0.5},
    )


JSON = _trace().to_json()
NPZ = _trace().to_npz()


@given(st.data())
def test_trace_json_damaged_mutated_or_deep(data):
    text = data.draw(
        st.one_of(
            damaged(JSON.encode()),
            st.tuples(st.sampled_from(list(json.loads(JSON))), json_values).map(
                lambda kv: mutate_json(JSON, kv)
            ),
            st.integers(1, 200_000).map(deep_json),
            st.binary(max_size=200),
        )
    )
    with only_input_errors():
        assert isinstance(Trace.from_json(text), Trace)


@given(damaged(NPZ))
def test_trace_npz_damaged(data):
    with only_input_errors():
        assert isinstance(Trace.from_npz(data), Trace)


@given(st.tuples(st.sampled_from(list(json.loads(JSON))), json_values))
def test_trace_npz_with_a_mutated_meta(field_value):
    arrays = dict(np.load(__import__("io").BytesIO(NPZ)))
    arrays["__meta__"] = np.array(mutate_json(str(arrays["__meta__"]), field_value))
    with only_input_errors():
        Trace.from_npz(npz_bytes(**arrays))


@given(st.one_of(qkv_arrays().map(lambda a: npz_bytes(q=a[0], k=a[1], v=a[2])), st.data()))
def test_uploaded_qkv_npz(upload):
    if not isinstance(upload, bytes):  # damage a good upload
        good = np.random.default_rng(0).standard_normal((2, 6, 4)).astype(np.float32)
        upload = upload.draw(damaged(npz_bytes(q=good, k=good, v=good)))
    with only_input_errors():
        q, k, v = inputs.load_qkv_npz(upload)
        assert q.dtype == torch.float32 and torch.isfinite(q).all()


@pytest.fixture(scope="module")
def saved_timeline(tmp_path_factory):
    directory = tmp_path_factory.mktemp("timeline")
    rec = timeline.Recorder("toy", 100, n=4)
    for step in range(101):
        if rec.due(step):
            rec.add(step, {"loss": 1.0 / (step + 1)}, [_trace()])
    timeline.save(rec.timeline(command="python -m engine.train toy"), "toy", directory)
    return [p.read_bytes() for p in timeline.paths("toy", directory)]


@given(data=st.data())
def test_timeline_damaged_or_mutated(saved_timeline, data, tmp_path_factory):
    weights, meta = saved_timeline
    which = data.draw(st.sampled_from(["weights", "meta", "field"]))
    if which == "weights":
        weights = data.draw(damaged(weights))
    elif which == "meta":
        meta = data.draw(damaged(meta))
    else:
        kv = data.draw(st.tuples(st.sampled_from(list(json.loads(meta))), json_values))
        meta = mutate_json(meta.decode(), kv).encode()
    directory = tmp_path_factory.mktemp("damaged")
    w_path, m_path = timeline.paths("toy", directory)
    w_path.write_bytes(weights)
    m_path.write_bytes(meta)
    with only_input_errors():
        timeline.load("toy", directory)


DECKS = Path(decks.__file__).resolve().parents[2] / "assets" / "decks"
DECK = (DECKS / "memory.en.toml").read_bytes()


@given(st.one_of(damaged(DECK), st.integers(1, 50_000).map(lambda n: ("a = " + "[" * n).encode())))
def test_uploaded_deck_damaged_or_deep(data):
    with only_input_errors(), contextlib.suppress(decks.DeckError):
        decks.parse(data, "mine.en.toml", lambda name: None)
