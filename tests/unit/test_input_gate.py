"""Issue 34, engine side: each input that broke a page or a documented loader, reproduced,
now answered with a result or an InputError; and the exact core's map is the softmax of
the scores at any size of score."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
import torch

from engine import gate, kernels, timeline
from engine.data import babi
from engine.errors import InputError
from engine.kernels import reference
from engine.masks import softmax_from_lse
from engine.models import chat, registry
from engine.models import pretrained as hf
from engine.params import Param
from engine.trace import AttentionMap, Trace, TraceError
from engine.variants import inputs
from engine.variants.registry import REGISTRY, get

torch.set_num_threads(1)


def _qkv(magnitude: float, n: int = 48, d: int = 32, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return ((torch.rand(3, 1, 2, n, d, generator=g) * 2 - 1) * magnitude).unbind(0)


def _softmax64(q, k, causal: bool) -> torch.Tensor:
    s = (q.double() @ k.double().transpose(-2, -1)) / q.shape[-1] ** 0.5
    if causal:
        n = q.shape[-2]
        s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))
    return torch.softmax(s, dim=-1)


# -- stable maps -----------------------------------------------------------------------------
@pytest.mark.parametrize("logit", [1e2, 1e4])
@pytest.mark.parametrize("causal", [False, True])
def test_the_exact_map_is_the_softmax_of_the_scores_at_large_logits(logit, causal):
    """Scaled so that the largest |s_ij| is ``logit``: rows sum to 1 within 1e-5 in float32
    and match a float64 softmax (before the fix: 0.6–0.97 at 1e4)."""
    q, k, _ = _qkv(1.0)
    s_max = ((q @ k.transpose(-2, -1)) / q.shape[-1] ** 0.5).abs().max()
    q = q * (logit / s_max)
    v = torch.randn_like(k)
    _, lse = kernels.attention(q, k, v, causal=causal)
    expected = _softmax64(q, k, causal)
    for p in (
        reference.attention_probabilities(q, k, lse, causal=causal),
        softmax_from_lse(q, k, lse, causal=causal),
    ):
        assert p.dtype == torch.float32
        assert (p.double().sum(-1) - 1).abs().max() < 1e-5
        # an entry's error is eps·|s| in the exponent, whatever its reference
        assert (p.double() - expected).abs().max() < 5e-3 * max(1.0, logit / 1e2)


@pytest.mark.parametrize("magnitude", [1e2, 1e4])
def test_an_upload_of_large_values_draws_every_variant(magnitude):
    """Q/K/V of values ±100 (logits ≈ 1e4) and ±1e4: every variant gives a Trace whose
    softmax-kind maps sum to 1 ± 1e-5 (signed and implied maps keep their flags)."""
    q, k, v = _qkv(magnitude)
    for name, variant in REGISTRY.items():
        causal = variant.causal_support == "always"
        tr = variant.trace(q, k, v, causal=causal)  # Performer's features underflowed: NaN
        m = tr.maps["attention"]
        assert (m.normalized, m.signed) == (variant.map_normalized, variant.map_signed), name
        if m.normalized:
            sums = m.weights.sum(-1, dtype=np.float64)
            ok = (np.abs(sums - 1) <= 1e-5) | (sums == 0)  # 0: a query that met no key
            assert ok.all(), (name, np.abs(sums - 1).max())


def test_performers_log_space_map_is_its_ordinary_map_where_both_exist():
    from engine.variants.performer import implied_map_log, orthogonal_features

    q, k, v = _qkv(1.0)
    W = orthogonal_features(128, q.shape[-1], 0)
    ordinary = get("performer").run(q, k, v, want_map=True).weights
    scale = q.shape[-1] ** -0.25
    assert torch.allclose(implied_map_log(q * scale, k * scale, W), ordinary, atol=1e-6)


@pytest.mark.parametrize("bad", ["q", "k", "v"])
def test_scores_that_are_not_finite_are_refused_naming_the_input(bad):
    q, k, v = _qkv(1.0)
    arrays = {"q": q, "k": k, "v": v}
    arrays[bad] = arrays[bad].clone()
    arrays[bad][0, 0, 3, 1] = float("nan")
    with pytest.raises(InputError) as err:
        get("full").trace(arrays["q"], arrays["k"], arrays["v"])
    assert err.value.message.key == "variant.input_not_finite" and bad in str(err.value)
    with pytest.raises(InputError) as err:
        get("full").trace(q * 1e17, k * 1e17, v)  # finite, but q·k overflows float32
    assert err.value.message.key == "scores.too_large" and "q, k" in str(err.value)


# -- the page breakers -----------------------------------------------------------------------
def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def test_an_npz_with_a_damaged_byte_inside_a_member_is_an_input_error():
    a = np.random.default_rng(0).standard_normal((2, 16, 8)).astype(np.float32)
    data = bytearray(_npz(q=a, k=a, v=a))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = zf.infolist()[0]
    inside = info.header_offset + 30 + len(info.filename) + 40  # within q's deflate stream
    data[inside] ^= 0xFF
    with pytest.raises(InputError) as err:  # was zipfile.BadZipFile (bad CRC) or zlib.error
        inputs.load_qkv_npz(bytes(data))
    assert err.value.message.key == "npz.unreadable"


def test_an_npz_whose_values_overflow_float32_or_the_scores_is_refused():
    big = np.full((1, 8, 4), 1e300)  # finite in float64, inf in float32
    with pytest.raises(InputError, match="NaN or infinite"):
        inputs.load_qkv_npz(_npz(q=big, k=big, v=big))
    huge = np.full((1, 8, 4), 1e20, dtype=np.float32)  # q·k ≈ 1e40: was NaN in every map
    with pytest.raises(InputError) as err:
        inputs.load_qkv_npz(_npz(q=huge, k=huge, v=huge))
    assert err.value.message.key == "scores.too_large"


def test_a_member_claiming_a_huge_array_is_refused_before_it_is_read():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "<f4", "fortran_order": False, "shape": (10**6, 10**6)}
        )
        zf.writestr("q.npy", b"\x93NUMPY\x01\x00" + header.getvalue()[8:] + b"\0" * 16)
    with pytest.raises(InputError, match="unpacks to more than"):
        gate.npz_arrays(buf.getvalue(), max_bytes=2**20, max_unpacked=2**20)


def test_hiding_the_sinks_of_a_text_of_only_sinks_is_an_input_error():
    w = np.full((1, 1, 2, 2), 0.5)
    amap = AttentionMap(w, ["[CLS]", "[SEP]"], ["[CLS]", "[SEP]"], "self")
    with pytest.raises(InputError) as err:  # was a ValueError: "Something went wrong"
        amap.hide_sinks(["[CLS]", "[SEP]"])
    assert err.value.message.key == "rollout.nothing_left"


def test_a_line_number_of_thousands_of_digits_is_refused_with_its_bound():
    story = "9" * 5000 + " Mary went home.\n"
    with pytest.raises(InputError) as err:  # was Python's 4,300-digit ValueError
        babi.parse(story)
    assert err.value.message.key == "story.long_number"
    assert str(gate.LINE_NUMBER_DIGITS) in str(err.value)
    with pytest.raises(InputError):
        babi.parse("1 Mary went home.\n2 Where is Mary?\thome\t" + "1" * 5000 + "\n")


def test_a_model_path_with_a_nul_byte_is_an_input_error():
    with pytest.raises(InputError) as err:  # was ValueError: embedded null byte
        hf.check_model_dir("/tmp/model\x00dir")
    assert err.value.message.key == "path.control_char" and "U+0000" in str(err.value)
    with pytest.raises(InputError, match="characters"):
        hf.check_model_dir("a" * (gate.PATH_MAX_CHARS + 1))


# -- the API gaps ----------------------------------------------------------------------------
def _small_trace() -> Trace:
    w = np.full((1, 1, 2, 2), 0.5, dtype=np.float32)
    return Trace("m", "t", maps={"a": AttentionMap(w, ["x", "y"], ["x", "y"], "self")})


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,  # was RecursionError
        '{"format": "attention-studio-trace", "version": 1, "n": ' + "7" * 5000 + "}",
        json.dumps({**json.loads(_small_trace().to_json()), "maps": True}),  # AttributeError
        json.dumps({**json.loads(_small_trace().to_json()), "maps": {"a": [1]}}),
        '{"format": "attention-studio-trace", "version": 1e400}',
        b"\xff\xfe not utf-8",
    ],
)
def test_trace_from_json_refuses_what_is_not_a_trace(text):
    with pytest.raises(InputError) as err:
        Trace.from_json(text)
    assert isinstance(err.value, TraceError)  # the documented error type still holds


def test_trace_from_json_keeps_brackets_and_digits_inside_strings():
    tr = _small_trace()
    tr.inputs["text"] = "[" * 500 + "9" * 500
    assert Trace.from_json(tr.to_json()).inputs == tr.inputs


@pytest.mark.parametrize(
    "meta",
    [
        "true",
        '{"format": "attention-studio-trace", "version": 1, "maps": true}',
        '{"format": "attention-studio-trace", "version": 1, "maps": {"a": 3}, "vectors": {}}',
        "[" * 10_000,
    ],
)
def test_trace_from_npz_with_a_mutated_meta_is_an_input_error(meta):
    with zipfile.ZipFile(io.BytesIO(_small_trace().to_npz())) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    buf = io.BytesIO()
    np.save(buf, np.array(meta))
    members["__meta__.npy"] = buf.getvalue()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    with pytest.raises(InputError):  # was AttributeError
        Trace.from_npz(out.getvalue())


@pytest.mark.parametrize("metrics", [[1, 2], 3, "loss", None])
def test_a_timeline_whose_metrics_are_not_an_object_is_timeline_bad(tmp_path, metrics):
    rec = timeline.Recorder("toy", 100, n=3)
    for step in range(101):
        if rec.due(step):
            rec.add(step, {"loss": 1.0 / (step + 1)}, [_small_trace()])
    timeline.save(rec.timeline(), "toy", tmp_path)
    _, meta_path = timeline.paths("toy", tmp_path)
    meta = json.loads(meta_path.read_text())
    meta["metrics"] = metrics
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(InputError) as err:  # was AttributeError
        timeline.load("toy", tmp_path)
    assert err.value.message.key == "timeline.bad"


@pytest.fixture(scope="module")
def minilm():
    return registry.get(registry.MINILM).load()


@pytest.mark.parametrize("name", ["differential", "retnet", "gla", "sinks"])
def test_minilm_with_a_signed_or_unnormalised_variant_carries_its_flags(minilm, name):
    variant = get(name)
    tr = hf.trace(minilm, "Mary went to the kitchen.", attend=name)
    m = tr.maps["encoder_self"]  # was TraceError: rows must sum to 1
    assert (m.normalized, m.signed) == (variant.map_normalized, variant.map_signed)
    assert variant.title in m.note


@pytest.mark.parametrize("temperature", [1e-39, 1e-20, 0.01])
def test_a_temperature_below_the_floor_is_refused(temperature):
    with pytest.raises(InputError) as err:  # 1e-39: logits / T overflowed to NaN
        chat.Writing(None, "hello", temperature=temperature)
    assert err.value.message.key == "chat.temperature_floor"


@pytest.mark.parametrize(
    "value",
    [float("inf"), float("-inf"), float("nan"), 10**5000, "9" * 5000, [3], None, True],
    ids=["inf", "-inf", "nan", "huge-int", "huge-text", "list", "none", "bool"],
)
def test_param_check_answers_any_value_with_an_input_error(value):
    for default in (4, 0.5):
        with pytest.raises(InputError):  # ±inf for an int was OverflowError
            Param("n", "N", default, 0, 10).check(value)


def test_variant_seed_goes_through_the_gate():
    for seed in ("x", float("inf"), 10**5000, -1, [1]):
        with pytest.raises(InputError):  # was a bare int(): ValueError, OverflowError
            get("performer").resolve({"seed": seed})
    assert get("performer").resolve({"seed": "7"})["seed"] == 7


def test_the_json_gate_reads_a_text_once_whatever_its_quotes():
    import time

    start = time.process_time()
    with pytest.raises(InputError):
        gate.json_text('"' + '\\"' * 500_000, max_bytes=2**24)  # was quadratic: hours
    assert time.process_time() - start < 1.0


def test_a_member_claiming_an_overlong_header_is_refused_before_it_is_read():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        # version 2: a 4-byte header length, here 3 GiB of spaces that deflate to little
        with zf.open("q.npy", "w") as member:
            member.write(b"\x93NUMPY\x02\x00" + (3 * 2**30).to_bytes(4, "little"))
            member.write(b" " * 2**20)
    with pytest.raises(InputError, match="overlong header"):
        gate.npz_arrays(buf.getvalue(), max_bytes=2**20, max_unpacked=2**20)
