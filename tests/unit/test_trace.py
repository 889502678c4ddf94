import numpy as np
import pytest

from engine.trace import AttentionMap, Trace, TraceError


def _rows(rng, *shape):
    w = rng.random(shape).astype(np.float32)
    return w / w.sum(-1, keepdims=True)


def _trace(rng) -> Trace:
    amap = AttentionMap(
        _rows(rng, 2, 3, 4, 5), list("abcd"), list("vwxyz"), "self", head_labels=["h0", "h1", "h2"]
    )
    pooled = AttentionMap(
        _rows(rng, 1, 1, 2, 2),
        ["0-63", "64-127"],
        ["0-63", "64-127"],
        "pattern",
        exact=False,
        implied=True,
        pooling=64,
        note="x",
    )
    return Trace(
        model="m",
        task="t",
        inputs={"text": "le </script> \u2028 naïve"},
        outputs={"translation": ["a", "b"], "p": np.float32(0.25)},
        maps={"enc": amap, "pooled": pooled},
        vectors={
            "q": rng.standard_normal((4, 8)).astype(np.float32),
            "ids": np.arange(5, dtype=np.int64),
        },
        metrics={"bleu": 91.5},
        timings={"total_s": 0.01},
    )


def _same(a: Trace, b: Trace):
    assert (a.model, a.task, a.inputs, a.outputs, a.metrics, a.timings) == (
        b.model,
        b.task,
        b.inputs,
        b.outputs,
        b.metrics,
        b.timings,
    )
    assert a.maps.keys() == b.maps.keys()
    for name in a.maps:
        x, y = a.maps[name], b.maps[name]
        assert np.array_equal(x.weights, y.weights) and x.weights.dtype == np.float32
        assert x._meta() == y._meta()
    for name in a.vectors:
        assert np.array_equal(a.vectors[name], b.vectors[name])
        assert a.vectors[name].dtype == b.vectors[name].dtype


@pytest.mark.parametrize("fmt", ["json", "npz"])
def test_round_trip_is_lossless(fmt):
    t = _trace(np.random.default_rng(0))
    back = Trace.from_json(t.to_json()) if fmt == "json" else Trace.from_npz(t.to_npz())
    _same(t, back)


def test_labels_must_match_shape():
    w = np.full((1, 1, 2, 3), 1 / 3, np.float32)
    with pytest.raises(TraceError, match="3 query labels for 2"):
        AttentionMap(w, ["a", "b", "c"], ["x", "y", "z"], "self")
    with pytest.raises(TraceError, match="2 key labels for 3"):
        AttentionMap(w, ["a", "b"], ["x", "y"], "self")


def test_non_finite_refused():
    w = np.full((1, 1, 2, 2), 0.5, np.float32)
    w[0, 0, 1, 1] = np.nan
    with pytest.raises(TraceError, match="non-finite"):
        AttentionMap(w, ["a", "b"], ["x", "y"], "self", normalized=False)


def test_rows_must_sum_to_one_unless_unnormalised():
    w = np.full((1, 1, 2, 2), 0.4, np.float32)
    with pytest.raises(TraceError, match="sum to 1"):
        AttentionMap(w, ["a", "b"], ["x", "y"], "self")
    AttentionMap(w, ["a", "b"], ["x", "y"], "self", normalized=False)


def test_fully_masked_rows_may_be_zero():
    w = np.zeros((1, 1, 2, 2), np.float32)
    w[0, 0, 0] = [1, 0]
    AttentionMap(w, ["a", "pad"], ["x", "y"], "self")


def test_flags_and_kind():
    w = np.full((1, 1, 1, 2), 0.5, np.float32)
    m = AttentionMap(w, ["q"], ["a", "b"], "hidden", exact=False, implied=True, pooling=4)
    assert m.flags == ["approximate", "implied", "pooled ×4"]
    with pytest.raises(TraceError, match="kind"):
        AttentionMap(w, ["q"], ["a", "b"], "nonsense")
    with pytest.raises(TraceError, match="both exact and implied"):
        AttentionMap(w, ["q"], ["a", "b"], "self", implied=True)
    with pytest.raises(TraceError, match=r"\[L, H, Q, K\]"):
        AttentionMap(w[0], ["q"], ["a", "b"], "self")


@pytest.mark.parametrize("payload", [b"not json", b'{"format": "other"}', b"\xff\xfe"])
def test_malformed_json_files_are_refused_clearly(payload):
    with pytest.raises(TraceError):
        Trace.from_json(payload)


def test_malformed_npz_refused():
    with pytest.raises(TraceError, match="NPZ"):
        Trace.from_npz(b"PK\x03\x04 not really a zip")


def test_damaged_json_trace_refused():
    t = _trace(np.random.default_rng(1))
    import json

    d = json.loads(t.to_json())
    weights = d["maps"]["enc"]["weights"]["base64"]
    for damaged in (weights[:-8], weights[:-1], "!" + weights[1:], {"hex": weights}, [1.0]):
        d["maps"]["enc"]["weights"] = (
            damaged if isinstance(damaged, dict | list) else {"base64": damaged}
        )
        with pytest.raises(TraceError):
            Trace.from_json(json.dumps(d))


def test_json_export_is_exact_and_compact_and_reads_older_files():
    """Arrays travel as base64 bytes: bit-exact, a fraction of decimal text's size, and a
    file of the earlier list format still reads back."""
    import json

    t = _trace(np.random.default_rng(2))
    text = t.to_json()
    back = Trace.from_json(text)
    for name, m in t.maps.items():
        assert back.maps[name].weights.tobytes() == m.weights.tobytes()
    legacy = json.loads(text)
    for name, m in t.maps.items():
        legacy["maps"][name]["weights"] = m.weights.ravel().tolist()
    for name, v in t.vectors.items():
        legacy["vectors"][name]["values"] = v.ravel().tolist()
    old = json.dumps(legacy)
    assert len(text) < len(old) / 2, (len(text), len(old))
    assert Trace.from_json(old).to_json() == text
    assert abs(t.export_bytes() - len(text.encode())) < 0.05 * len(text.encode())


def test_outputs_must_be_json():
    with pytest.raises(TraceError, match="JSON"):
        Trace(model="m", task="t", outputs={"x": object()})
