"""Lesson decks: plain TOML files a teacher copies and edits (assets/decks/README.md).

A deck is a title, a summary and steps; each step has a title, a short explanation, a
question and a studio view written as the pages' own links (``alignment?model=…&text=…``).
``parse`` validates every field and raises ``DeckError`` naming the file and the line, so
a teacher fixing a deck at home sees where, not a traceback.

A number a deck states about a model is written ``{result:MODEL:KEY}`` (or
``{result:MODEL:KEY:FORMAT}``, a Python format spec such as ``.1f``) and read when the deck
is read, from the results the model's card reports (``KEY`` a dotted path into them,
``bleu_by_length.1-10.bleu``; a number picks an entry of a list): the text cannot drift
from the shipped evaluation, and a name or key that is not there fails the deck's load like
any other mistake.

No Streamlit and no engine here: the parser runs in tests, a CLI or a notebook alike; the
caller hands it the results lookup (``Results``). Model names in views are checked where
the view is drawn (the registry knows which are shipped).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

from kit.params import NAME, PAGES

DECKS = Path(__file__).resolve().parents[2] / "assets" / "decks"
MAX_BYTES = 64_000  # an uploaded deck: about twenty pages of text, far above any real deck
MAX_STEPS = 40
LIMITS = {"title": 120, "summary": 600, "explain": 1500, "question": 400, "view": 2500}
# {result:MODEL:KEY} or {result:MODEL:KEY:FORMAT}; anything else in braces is left alone
# (a formula's \frac{a}{b}, say).
RESULT = re.compile(r"\{result:(?P<model>[^:{}]*):(?P<key>[^:{}]*)(?::(?P<spec>[^{}]*))?\}")

# A model's name → what its card measured (``card.results()``), None when it has nothing.
Results = Callable[[str], dict | None]


class DeckError(ValueError):
    """A deck that cannot be used, with where: ``bahdanau.en.toml, line 12: …``."""


@dataclass(frozen=True)
class View:
    page: str  # the page's url path: alignment, memory, transformer, positional, variants
    params: dict[str, str] = field(default_factory=dict)

    def link(self, **extra: str) -> str:
        """The page's own link, ``extra`` (e.g. ``lang``) appended."""
        query = urlencode(self.params | extra)
        return self.page + ("?" + query if query else "")


@dataclass(frozen=True)
class Step:
    title: str
    explain: str
    question: str
    view: View
    predict: str | int | None = None  # a target word (alignment, transformer), a hop (memory)
    # or a compression ratio (chat's press curves: which press keeps the needle there)


@dataclass(frozen=True)
class Deck:
    name: str  # file stem without the language: "bahdanau"
    lang: str
    title: str
    summary: str
    steps: tuple[Step, ...]


def numbers(text: str, results: Results) -> str:
    """``text`` with every ``{result:MODEL:KEY[:FORMAT]}`` replaced by the measured value;
    ValueError names the first placeholder that cannot be read and why."""

    def value(found: re.Match) -> str:
        model, key, spec = found["model"], found["key"], found["spec"] or ""
        where = found[0]
        measured = results(model) if NAME.match(model) else None
        if measured is None:
            raise ValueError(f"{where}: no measured results for a model named {model!r}")
        for part in key.split("."):
            if isinstance(measured, list) and part.isdigit() and int(part) < len(measured):
                measured = measured[int(part)]  # one entry of a list (per hop, per layer …)
            elif isinstance(measured, dict) and part in measured:
                measured = measured[part]
            else:
                raise ValueError(f"{where}: {model}'s results have no {key!r}")
        if isinstance(measured, bool) or not isinstance(measured, int | float):
            raise ValueError(f"{where}: {key!r} is not a number")
        try:
            return format(measured, spec)
        except ValueError:
            raise ValueError(f"{where}: {spec!r} is not a number format such as .1f") from None

    return RESULT.sub(value, text)


# The pages a step can show (a lesson draws each inline: studios/lessons_views.VIEWS); what
# each accepts is its page's own table (kit.params.PAGES), so a deck's link opens its page.
SHOWN = ("alignment", "memory", "transformer", "positional", "variants", "chat", "retrieval")


def parse_view(link: str) -> View:
    """``alignment?model=…`` (or a full copied URL) → View; ValueError says what is wrong."""
    parts = urlsplit(link.strip())
    page = parts.path.strip("/").rsplit("/", 1)[-1]
    if page not in SHOWN:
        raise ValueError(f"unknown page {page!r}; a view starts with one of: " + ", ".join(SHOWN))
    table = PAGES[page]
    params: dict[str, str] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True, strict_parsing=False):
        if key in ("lang", "step", "deck"):  # a copied link's language or lesson position
            continue
        spec = table.params.get(key)
        if spec is None:
            raise ValueError(
                f"{page} has no parameter {key!r}; it takes " + ", ".join(table.params)
            )
        try:
            if not value.strip():
                raise ValueError("a value, not an empty one")
            spec.parse(value)
        except ValueError as exc:
            raise ValueError(f"{key}={value[:40]!r} should be {exc}") from None
        params[key] = value
    missing = [k for k in table.required if k not in params]
    if missing:
        raise ValueError(f"{page} views need " + " and ".join(missing))
    return View(page, params)


def _line_of(source: str, key: str, step: int | None) -> int:
    """The 1-based line where ``key`` is set (in the ``step``-th [[steps]] table, if given)."""
    lines = source.splitlines()
    start, end, seen = 0, len(lines), -1
    for i, line in enumerate(lines):
        if re.match(r"\s*\[\[\s*steps\s*\]\]", line):
            seen += 1
            if step is None:
                end = i
                break
            if seen == step:
                start = i
            elif seen == step + 1:
                end = i
                break
    for i in range(start, end):
        if re.match(rf"\s*[\"']?{re.escape(key)}[\"']?\s*=", lines[i]):
            return i + 1
    return start + 1


def parse(source: str | bytes, filename: str, results: Results) -> Deck:
    """Validate a deck's text; ``filename`` (``name.lang.toml``) names it in every message,
    ``results`` gives the measured values its ``{result:…}`` placeholders read."""
    if isinstance(source, bytes):
        if len(source) > MAX_BYTES:
            raise DeckError(f"{filename}: {len(source):,} bytes, over the {MAX_BYTES:,} limit")
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DeckError(f"{filename}: not UTF-8 text (byte {exc.start})") from None
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        # Python 3.11's message ends "(at line 3, column 9)"; newer ones also carry lineno.
        found = re.search(r"\(at line (\d+), column (\d+)\)$", str(exc))
        why = str(exc)[: found.start()].strip() if found else str(exc)
        where = f"line {found[1]}, column {found[2]}" if found else "somewhere"
        raise DeckError(f"{filename}, {where}: not valid TOML ({why})") from None
    except RecursionError:  # arrays nested past Python's recursion limit
        raise DeckError(f"{filename}: arrays or tables nested too deeply for a deck") from None

    def fail(key: str, step: int | None, why: str):
        where = f"step {step + 1}, " if step is not None else ""
        line = _line_of(source, key, step)
        raise DeckError(f"{filename}, line {line}: {where}{key}: {why}")

    name, _, lang = Path(filename).name.removesuffix(".toml").partition(".")
    for key in data:
        if key not in ("title", "summary", "steps"):
            fail(key, None, "unknown key; a deck has title, summary and [[steps]]")
    for key in ("title", "summary"):
        value = data.get(key, "" if key == "summary" else None)
        if not isinstance(value, str) or (key == "title" and not value.strip()):
            fail(key, None, "missing or not text")
        if len(value) > LIMITS[key]:
            fail(key, None, f"longer than {LIMITS[key]} characters")
        try:
            data[key] = numbers(value, results)
        except ValueError as exc:
            fail(key, None, str(exc))
    steps = data.get("steps")
    if not isinstance(steps, list) or not steps or not all(isinstance(s, dict) for s in steps):
        fail("steps", None, "a deck needs at least one [[steps]] table")
    if len(steps) > MAX_STEPS:
        fail("steps", None, f"{len(steps)} steps, more than {MAX_STEPS}")
    return Deck(
        name,
        lang or "en",
        data["title"],
        data.get("summary", ""),
        tuple(_step(s, i, fail, results) for i, s in enumerate(steps)),
    )


def _step(raw: dict, i: int, fail, results: Results) -> Step:
    for key in raw:
        if key not in ("title", "explain", "question", "view", "predict"):
            fail(key, i, "unknown key; a step has title, explain, question, view, predict")
    for key in ("title", "explain", "question", "view"):
        value = raw.get(key)
        if not isinstance(value, str) or not value.strip():
            fail(key, i, "missing or not text")
        if len(value) > LIMITS[key]:
            fail(key, i, f"longer than {LIMITS[key]} characters")
    texts = {}
    for key in ("title", "explain", "question"):
        try:
            texts[key] = numbers(raw[key], results)
        except ValueError as exc:
            fail(key, i, str(exc))
    try:
        view = parse_view(raw["view"])
    except ValueError as exc:
        fail("view", i, str(exc))
    predict = raw.get("predict")
    if predict is not None:
        kind = PAGES[view.page].predict
        if kind is None:
            fail("predict", i, f"a {view.page} view has nothing to predict")
        if not isinstance(predict, kind) or isinstance(predict, bool):
            what = "a hop number (1, 2 or 3)" if kind is int else "a target word, in quotes"
            fail("predict", i, f"should be {what}")
        if kind is int and not 1 <= predict <= 3:
            fail("predict", i, "should be a hop number (1, 2 or 3)")
    return Step(texts["title"], texts["explain"], texts["question"], view, predict)


def shipped() -> dict[str, dict[str, Path]]:
    """Deck name → language → file, for every deck in assets/decks."""
    found: dict[str, dict[str, Path]] = {}
    for path in sorted(DECKS.glob("*.toml")):
        name, _, lang = path.name.removesuffix(".toml").partition(".")
        found.setdefault(name, {})[lang or "en"] = path
    return found


def load(name: str, lang: str, results: Results) -> Deck:
    """A shipped deck in ``lang`` (English when that language has none)."""
    files = shipped().get(name)
    if not files:
        raise DeckError(f"no deck named {name!r}")
    path = files.get(lang) or files.get("en") or next(iter(files.values()))
    return parse(path.read_bytes(), path.name, results)
