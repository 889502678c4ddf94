"""What a visitor can hand the engine, as Hypothesis strategies, and the one rule every
entry point is held to: a result or the engine's InputError comes back, nothing else."""

from __future__ import annotations

import contextlib
import io
import json
import math

import numpy as np
from hypothesis import event
from hypothesis import strategies as st

from engine.errors import InputError

SPECIAL_TOKENS = (
    "[CLS]",
    "[SEP]",
    "[PAD]",
    "[MASK]",
    "[UNK]",
    "<|im_start|>",
    "<|im_end|>",
    "<|endoftext|>",
    "</script>",
    "<s>",
    "</s>",
    "##",
    "▁",
)

# Any code point, control characters and lone surrogates' neighbours included.
any_char = st.characters(codec="utf-8")
control_chars = st.characters(max_codepoint=31) | st.sampled_from("\x7f\u200b\ufeff")
long_word = st.integers(200, 5000).map(lambda n: "a" * n) | st.integers(50, 800).map(
    lambda n: "antidisestablishment" * n
)
word = st.sampled_from(
    ("Mary", "went", "to", "the", "kitchen", "May", "1979", "Where", "is", "?", ".", ",", "3")
)
text_pieces = st.one_of(
    word, st.sampled_from(SPECIAL_TOKENS), st.text(any_char, max_size=12), control_chars, long_word
)
texts = st.one_of(
    st.text(any_char, max_size=200),
    st.lists(text_pieces, max_size=30).map(" ".join),
    st.lists(text_pieces, max_size=8).map("".join),
)

# Numbered bAbI-style lines: good ones, wrong numbering, long numbers, tabs in odd places.
long_numbers = st.integers(4_000, 6_000).map(lambda n: "9" * n)  # past int()'s 4,300 digits
line_numbers = st.one_of(
    st.integers(0, 12).map(str),
    long_numbers,
    st.text(st.characters(categories=["Nd"]), min_size=1, max_size=12),
)
sentences = st.lists(word, min_size=1, max_size=8).map(" ".join)


@st.composite
def numbered_story(draw) -> str:
    """Lines numbered 1, 2, 3, … as bAbI writes them, questions with answer and support
    ids, and now and then a flaw: a wrong or huge number, a bad tab field, any text."""
    lines = []
    for i in range(1, draw(st.integers(1, 10)) + 1):
        flaw = draw(st.sampled_from(("none",) * 5 + ("number", "long number", "body", "tabs")))
        number = {"number": line_numbers, "long number": long_numbers}.get(flaw, st.just(str(i)))
        number = draw(number)
        body = draw(texts) if flaw == "body" else draw(sentences)
        if flaw == "tabs":
            body += "\t" + "\t".join(draw(st.lists(line_numbers | texts, max_size=3)))
        elif i > 1 and draw(st.booleans()):
            support = draw(st.lists(st.integers(1, i - 1).map(str), max_size=2))
            body = f"Where is Mary?\t{draw(word)}\t{' '.join(support)}"
        lines.append(f"{number} {body}")
    return "\n".join(lines)


stories = numbered_story() | texts

# Option values: right and wrong types, the float edges, integers past every range.
huge_ints = st.integers(4_400, 6_000).map(lambda n: 10**n)


class Digits(str):
    """An integer of thousands of digits, written into JSON text as it stands (json.dumps
    itself refuses to write one)."""


huge_json_ints = st.integers(4_400, 6_000).map(lambda n: Digits("9" * n))
option_values = st.one_of(
    st.integers(),
    st.floats(),  # ±inf and NaN included
    st.sampled_from([math.inf, -math.inf, math.nan, 0, -0.0, 1e308, 5e-324, 2**63, -(2**63)]),
    huge_ints,
    st.text(max_size=20),
    st.sampled_from(["inf", "nan", "1e999", "0x10", "1_000", " 7 ", "9" * 5000]),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def option_dicts(names: list[str]):
    """Dicts of known and unknown option names with any value."""
    keys = st.sampled_from(names) | st.text(max_size=10) if names else st.text(max_size=10)
    return st.dictionaries(keys, option_values, max_size=4)


# Q/K/V: odd shapes, and values from tiny to 1e20 (and past float32's range).
magnitudes = st.sampled_from([1.0, 1e2, 1e4, 0.0, 1e-30, 1e39, 1e20, 1e-3, 1e10])


@st.composite
def qkv_arrays(draw, max_n: int = 24, max_d: int = 12):
    """(q, k, v) float arrays ``[B, H, N, D]``; sometimes of different shapes, with NaN or inf."""
    b, h = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    n, d = draw(st.integers(1, max_n)), draw(st.integers(1, max_d))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    arrays = []
    for _ in range(3):
        # Mostly well-formed, so that most examples reach the computation.
        flaw = draw(st.sampled_from(("none",) * 8 + ("shape", "not finite")))
        shape = (b, h, n, d + 1) if flaw == "shape" else (b, h, n, d)
        a = rng.standard_normal(shape) * draw(magnitudes)
        if flaw == "not finite":
            a.flat[draw(st.integers(0, a.size - 1))] = draw(st.sampled_from([np.nan, np.inf]))
        arrays.append(a)
    return tuple(arrays)


# Damage to a file's bytes: flips, truncation, insertion.
@st.composite
def damaged(draw, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "truncate", "insert"]))
        if not out:
            break
        at = draw(st.integers(0, len(out) - 1))
        if kind == "flip":
            out[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "truncate":
            del out[at:]
        else:
            out[at:at] = draw(st.binary(min_size=1, max_size=16))
    return bytes(out)


def deep_json(depth: int) -> str:
    """JSON nested ``depth`` levels deep, lists and objects mixed."""
    return "".join('{"a":[' for _ in range(depth)) + "1" + "".join("]}" for _ in range(depth))


json_values = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | huge_json_ints | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


def npz_bytes(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def json_text(value) -> str:
    """JSON text of ``value``; a :class:`Digits` is written as the bare number it holds."""
    if isinstance(value, Digits):
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {json_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(json_text(v) for v in value) + "]"
    return json.dumps(value)


def mutate_json(text: str, path_value) -> str:
    """The JSON object ``text`` with one top-level field replaced by any JSON value."""
    meta = json.loads(text)
    key, value = path_value
    meta[key if key in meta else next(iter(meta))] = value
    return json_text(meta)


@contextlib.contextmanager
def only_input_errors():
    """The rule: whatever happens inside is a result or an InputError (which passes).
    Each outcome is counted (``--hypothesis-show-statistics``), so a strategy whose every
    example is refused at the door shows as such."""
    try:
        yield
    except InputError as exc:
        key = getattr(exc.message, "key", "text")
        event(f"refused: {key}")
    else:
        event("result")
