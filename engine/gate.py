"""The input gate: what a visitor hands the engine is measured before anything parses it.

One function per kind of input checks the stated limits of that kind, in time linear in
the input and without building anything from it; parsers and models run only on input
that passed, so no visitor's input reaches a recursion limit, Python's 4,300-digit
integer limit, a NUL byte in a system call, or an allocation a file only claims.

- files: :func:`json_text` (bytes, nesting depth and number length measured on the raw
  text, so ``json.loads`` never recurses deeply or builds a huge integer) and
  :func:`npz_arrays` (bytes, every member's declared size read from its header, every
  kind of damage: bad zip, bad CRC, bad deflate, short member);
- stories: :func:`story_text` (characters) and :func:`line_number` (digits);
- paths: :func:`path_text` (NUL and other control characters, length);
- options: :func:`number` (what ``Param.check`` converts with: wrong types, numbers
  beyond float or int range, ±inf and NaN);
- attention inputs: :func:`scores` (finite q, k, v whose scores float32 can hold).

Every refusal is an :class:`~engine.errors.InputError` with a message id.
"""

from __future__ import annotations

import io
import json
import math
import re
import sys
import unicodedata
import zipfile
from typing import TYPE_CHECKING, Any

from engine.errors import InputError

if TYPE_CHECKING:
    import numpy as np

# -- files -----------------------------------------------------------------------------------
# A Trace file nests five levels (file → maps → map → labels → label); 64 leaves room.
JSON_MAX_DEPTH = 64
# json.dumps writes a float in at most 17 significant digits plus an exponent; a seed or
# a count fits in 20. Longer digit runs are not numbers this project ever writes.
JSON_MAX_DIGITS = 40
# A string runs to its closing quote, or to the end of an unterminated text: a pattern that
# had to find the closing quote would rescan the rest of the text from every quote
# (20,000 escaped quotes took 8.5 s), one that always matches reads each character once.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.DOTALL)
_DIGIT_RUN = re.compile(rf"\d{{{JSON_MAX_DIGITS + 1},}}")


def json_text(text: str | bytes, *, max_bytes: int) -> Any:
    """The parsed JSON of ``text`` once its size, nesting and numbers are within limits."""
    if len(text) > max_bytes:
        raise InputError("file.too_big", size=len(text) / 2**20, limit=max_bytes / 2**20)
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError("file.not_utf8", reason=str(exc)[:80]) from None
    # Strings may hold any bracket or digit; what is left is the document's structure.
    bare = _JSON_STRING.sub('""', text)
    depth = max_depth(bare)
    if depth > JSON_MAX_DEPTH:
        raise InputError("file.too_deep", depth=depth, limit=JSON_MAX_DEPTH)
    if _DIGIT_RUN.search(bare):
        raise InputError("file.long_number", limit=JSON_MAX_DIGITS)
    try:
        return json.loads(text)
    except ValueError as exc:  # JSONDecodeError is a ValueError
        raise InputError("file.not_json", reason=str(exc)[:120]) from None


def max_depth(bare: str) -> int:
    """Deepest bracket nesting of JSON text whose strings were emptied (one numpy pass)."""
    import numpy as np  # here: listing the cards (the home page) loads no numpy

    codes = np.frombuffer(bare.encode("utf-8"), dtype=np.uint8)
    step = np.isin(codes, (ord("["), ord("{"))).astype(np.int64)
    step -= np.isin(codes, (ord("]"), ord("}")))
    return int(np.cumsum(step).max(initial=0))


_NPY_MAGIC = b"\x93NUMPY"
# numpy reads a header before it checks its length (versions 2 and 3 allow 4 GiB); a
# member claiming a longer one than numpy would accept is refused before it is read.
NPY_MAX_HEADER = 10_000


def npz_arrays(data: bytes, *, max_bytes: int, max_unpacked: int) -> dict[str, np.ndarray]:
    """The arrays of an .npz (no pickle); any damage or an oversized member is an InputError.

    Each member's header is read first and its declared size checked against
    ``max_unpacked`` (all members together) before its data is read, so a small file
    cannot make the reader allocate what its header claims.
    """
    import numpy as np  # here: listing the cards (the home page) loads no numpy

    if len(data) > max_bytes:
        raise InputError("file.too_big", size=len(data) / 2**20, limit=max_bytes / 2**20)
    if data.startswith(_NPY_MAGIC):
        raise InputError("file.single_npy")
    arrays: dict[str, np.ndarray] = {}
    unpacked = 0
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                with zf.open(info) as member:
                    start = member.read(12)  # magic, version, header length
                if start[6:7] not in (b"", b"\x01") and len(start) == 12:
                    if int.from_bytes(start[8:12], "little") > NPY_MAX_HEADER:
                        raise ValueError(f"member {info.filename} claims an overlong header")
                with zf.open(info) as member:
                    shape, order, dtype = _npy_header(member)
                    nbytes = math.prod(shape) * dtype.itemsize
                    unpacked += nbytes
                    if unpacked > max_unpacked:
                        raise InputError("file.unpacks_too_big", limit=max_unpacked / 2**20)
                    raw = member.read(nbytes + 1)
                if len(raw) != nbytes:
                    raise ValueError(f"member {info.filename} holds {len(raw)} of {nbytes} bytes")
                name = info.filename.removesuffix(".npy")
                arrays[name] = np.frombuffer(raw, dtype=dtype).reshape(shape, order=order)
    except InputError:
        raise
    except Exception as exc:  # BadZipFile, zlib.error, a CRC mismatch, EOF: all damage
        raise InputError("file.npz_damaged", reason=f"{type(exc).__name__}: {exc}"[:160]) from None
    return arrays


def _npy_header(member) -> tuple[tuple[int, ...], str, np.dtype]:
    """(shape, order, dtype) of one .npy member; object dtypes (pickle) are refused."""
    import numpy as np  # here: listing the cards (the home page) loads no numpy

    version = np.lib.format.read_magic(member)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(member)
    else:
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(member)
    if dtype.hasobject:
        raise InputError("file.object_array")
    return tuple(shape), "F" if fortran else "C", dtype


# -- stories ---------------------------------------------------------------------------------
# A story restarts its numbering at 1 and holds at most a few thousand lines: nine digits
# are more than any real line number, and far below int()'s 4,300.
LINE_NUMBER_DIGITS = 9


def story_text(text: str, *, max_chars: int) -> str:
    """``text`` once it is a string within ``max_chars`` characters."""
    if not isinstance(text, str):
        raise InputError("story.not_text")
    if len(text) > max_chars:
        raise InputError("babi.too_long", limit=max_chars)
    return text


def line_number(digits: str, n: int) -> int:
    """The number a story's line ``n`` starts with, refused past LINE_NUMBER_DIGITS digits."""
    if len(digits) > LINE_NUMBER_DIGITS:
        raise InputError("story.long_number", n=n, digits=len(digits), limit=LINE_NUMBER_DIGITS)
    return int(digits)


# -- paths -----------------------------------------------------------------------------------
PATH_MAX_CHARS = 4096  # Linux's PATH_MAX


def path_text(path: Any) -> str:
    """A typed path as text, refused when it holds control characters (NUL included,
    which no system call accepts) or is longer than any path the system can open."""
    text = str(path)
    if len(text) > PATH_MAX_CHARS:
        raise InputError("path.too_long", n=len(text), limit=PATH_MAX_CHARS)
    bad = next((c for c in text if unicodedata.category(c) == "Cc"), None)
    if bad is not None:
        raise InputError("path.control_char", code=f"U+{ord(bad):04X}")
    return text


# -- options ---------------------------------------------------------------------------------
def number(value: Any, kind: type) -> int | float:
    """``value`` as ``kind`` (int or float), or ValueError when it is not a finite number:
    text that is not a number of that kind, ±inf, NaN, ints beyond float range, overlong
    digit strings, and bools (a tick box is not a count). A float for an int ``kind`` is
    truncated here; the caller says whether it was whole."""
    np = sys.modules.get("numpy")  # a numpy number exists only once numpy is loaded
    kinds = (int, float, str) if np is None else (int, float, str, np.number)
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise ValueError(f"{type(value).__name__} is not a number")
    if isinstance(value, str):
        if len(value) > JSON_MAX_DIGITS:
            raise ValueError("too many digits")
        value = kind(value)  # int("3.5"), float("three") raise ValueError
    try:
        finite = math.isfinite(float(value))
    except OverflowError:
        raise ValueError("beyond the range of a float") from None
    if not finite:
        raise ValueError("not finite")
    return kind(value)


def bounded(value: Any, lo: int | float, hi: int | float) -> int | float:
    """``value`` as a number of ``lo``'s kind within ``lo … hi``, else ValueError: a count
    must be whole (2.5 heads is refused, not truncated), and whatever :func:`number`
    refuses (text, NaN, ±inf, a bool, a list) is refused here too."""
    kind = float if isinstance(lo, float) else int
    found = number(value, kind)
    if not isinstance(value, (int, str)) and found != value:
        raise ValueError("not a whole number")
    if not lo <= found <= hi:
        raise ValueError("out of range")
    return found


def within(value: Any, lo: int | float, hi: int | float, message: str, /, **params) -> int | float:
    """:func:`bounded`, or the engine's InputError ``message`` (with ``params``) in place of
    its ValueError: the one way an entry point refuses a number with its own message."""
    try:
        return bounded(value, lo, hi)
    except ValueError:
        raise InputError(message, **params) from None


def is_whole(value: Any, lo: int, hi: int) -> bool:
    """True for an integer lo … hi that can index as it is (numpy's too; not 2.0, "x" or
    True): for a value used unconverted, as a slice bound or a config field."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        return False
    return lo <= value.__index__() <= hi


# -- attention inputs ------------------------------------------------------------------------
# The largest score bound accepted: s_ij = scale·q_i·k_j and its partial sums stay finite
# in float32 (max 3.4e38) with room for the sums over keys; beyond it a product overflows.
SCORE_LIMIT = 1e30


def scores(q_norm: float, k_norm: float, scale: float, *, name: str = "q, k") -> None:
    """Refuse inputs whose scores may not be finite: |s_ij| ≤ scale·max‖q_i‖·max‖k_j‖
    (Cauchy–Schwarz) must stay within SCORE_LIMIT. ``q_norm`` and ``k_norm`` are the
    largest row norms, measured in float64 so that the measure itself cannot overflow."""
    bound = scale * q_norm * k_norm
    if not math.isfinite(bound) or bound > SCORE_LIMIT:
        raise InputError("scores.too_large", name=name, bound=bound, limit=SCORE_LIMIT)
