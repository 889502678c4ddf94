"""Visual review: every page × section × lesson step, as a teacher and a researcher see it.

    python -m bench.screens [--quick] [--pages basics,chat] [--viewports presenter,desktop]
                            [--langs en,zh] [--out bench/gallery] [--budget-s 3000]

Starts the real server (every request outside localhost cut, as in tests/e2e), opens each
view in Chromium at 1024 × 768 in presenter mode (``?present=1``) and at 1440 × 1000, in
English and 中文 (``?lang=zh``), saves the first screen as a PNG (and the whole page at
1440 × 1000, and the revealed step where presenter mode waits for a guess), and runs
checks on the page as drawn (bench/screens_checks.js, evaluated in the page):

- overlaps: pairs of text labels inside one Plotly chart whose glyph boxes intersect by more
  than 4 px² (ticks, titles, annotations, legends, point labels; rotated boxes stay rotated),
  and the same for the labels of the HTML map grids;
- uniform: heatmap panels whose values use under a quarter of their colour scale (from the
  chart's own data, ``gd._fullData``: z against zmin/zmax or the colour axis);
- first_screen (presenter views): no figure starts above the fold, and no pending predict
  box does either (a revealed figure must then follow its box directly). A view whose
  figure waits for heavy work (a live training run, a queued job: its button is keyed
  ``…-run`` or ``…-train``) is started like a reveal, and its figure must then follow the
  button directly. On a view that draws only tables (a vocabulary, measured numbers) the
  first table is the figure, as in tests/e2e/test_presenter.py;
- truncated: chart titles wider than the chart, cut by its edge or ending in "…", HTML
  titles cut with an ellipsis, and tables whose columns run off the page (sideways);
- scales: value axes (linear, log or date) a trace is drawn on, tick labels shown, that
  name fewer than two values: one label gives no scale to read a value by;
- small_type (presenter views): a chart's titles, axis titles, legends and notes (panel
  titles, named steps) drawn under 14 px, which read as specks from the back of a room
  (tick labels and the numbers in cells and on bars are laid out by their rows: not counted);
- cell_numbers: heatmaps whose numbers in cells plotly.js shrank to fit them under 10 px
  (12 on a projector): specks that fill a map, where its colour and hover say more;
- ragged_numbers: table columns of numbers (a gap shown as "–") whose cells are not set
  flush right: st.table aligns a cell by its column's type, and a gap makes it text;
- stretched: panels of a grid of square maps (two or more heatmaps, as many rows as
  columns each: a head per panel) drawn over 1.25 times wider than tall or taller than
  wide: a pattern's diagonals and stripes flatten (a lone map is laid out by its labels);
- untranslated (中文 views): visible text that is an English interface string with a
  different Chinese one (app/locales, the decks), or a snake_case identifier;
- widgets: each URL-state widget (``url_choice`` / ``url_number`` calls, read from the
  page's source) shows the value its ``?param=`` holds, and the view asked for is the view
  drawn (a section or step the page dropped is a disagreement).

Sections come from each page's source (its ``SECTIONS`` and the ``url_choice`` that offers
them), lesson steps from assets/decks/. ``--quick`` visits each page's default view only;
``--budget-s`` (or SIGTERM) stops early and reports the views seen.
Prints one line per view and one JSON object last; a run over every view (no ``--pages``,
``--quick`` or early stop, both viewports and languages) saves it to
bench/results/screens.json, a partial run only to its gallery.
The gallery (index.html, the PNGs, findings.json) is for people; tests/e2e/test_screens.py
runs the checks in CI.
"""

from __future__ import annotations

import argparse
import ast
import functools
import html
import json
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlparse

ROOT = Path(__file__).resolve().parents[1]
# Not bench/ itself: its coverage.py would shadow a package of that name (numba imports
# `coverage`) in any process that imports this module, the test suite's included.
sys.path[:0] = [str(ROOT), str(ROOT / "app")]

from bench._save import save  # noqa: E402 - the paths are added above
from bench.interaction import FIGURE_SIGNATURE, IDLE  # noqa: E402
from tests.e2e.support import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    free_port,
    is_local,
    start_server,
    wait_for_health,
)

CHECKS = (
    *("overlaps", "uniform", "first_screen", "truncated", "scales", "small_type"),
    *("cell_numbers", "ragged_numbers", "stretched", "untranslated", "widgets"),
)
CHECKS_JS = (Path(__file__).with_name("screens_checks.js")).read_text()
STUDIOS = ROOT / "app" / "studios"
DECKS = ROOT / "assets" / "decks"
GALLERY = ROOT / "bench" / "gallery"
# A revealed figure "directly after" its predict box: at most one line of text between them.
REVEAL_GAP_PX = 120
FULL_PAGE_MAX_PX = 8000

# A script run has ended and drawn something: a title, or an error in its place.
READY = """() => {
  const app = document.querySelector('[data-testid=stApp]');
  return app && app.getAttribute('data-test-script-state') === 'notRunning'
      && !document.querySelector('[data-testid=stStatusWidget]')
      && !!(document.querySelector('[data-testid=stMain] h1')
            || document.querySelector('[data-testid=stException], [data-testid=stAlert]'));
}"""


# Streamlit draws a skeleton while an element's code loads (Plotly's, on a page's first
# chart): drawn means no skeleton left and an SVG in every chart. The count of elements
# tells a later fragment's output apart.
DRAWN = """() => {
  if (document.querySelector('[data-testid=stSkeleton]')) return null;
  for (const c of document.querySelectorAll('[data-testid=stPlotlyChart]')) {
    if (!c.querySelector('.main-svg')) return null;
  }
  return document.querySelectorAll('[data-testid=stElementContainer]').length;
}"""


@dataclass(frozen=True)
class Viewport:
    name: str
    width: int
    height: int
    presenter: bool


VIEWPORTS = {
    "presenter": Viewport("presenter", 1024, 768, True),
    "desktop": Viewport("desktop", 1440, 1000, False),
    # The narrowest page the figures are sized for (views.heatmap.NARROW_PX: a 1024-px window,
    # sidebar open): asked for by name, not part of the saved review.
    "narrow": Viewport("narrow", 1024, 768, False),
}
REVIEWED = ("presenter", "desktop")  # the views a saved (whole) review has seen


@dataclass(frozen=True)
class View:
    """One view of a page: its section (or lesson step) and the URL parameters that pick it."""

    page: str
    section: str
    query: tuple[tuple[str, str], ...] = ()

    @property
    def name(self) -> str:
        return f"{self.page}/{self.section}"


# ---- which views exist: read from the pages' source and the decks ----------------------


def _calls(tree: ast.AST, *names: str):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            name = fn.id if isinstance(fn, ast.Name) else getattr(fn, "attr", None)
            if name in names:
                yield node


def _const(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _dict_keys(tree: ast.AST, name: str) -> list[str]:
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            return [k for k in map(_const, node.value.keys) if k is not None]
    return []


def _list_len(module_file: Path, name: str) -> int:
    tree = ast.parse(module_file.read_text())
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
            and isinstance(node.value, ast.List | ast.Tuple)
        ):
            return len(node.value.elts)
    return 0


def _imported(tree: ast.AST, alias: str) -> Path | None:
    """The app module a page imports as ``alias`` (``from views import walkthrough as view``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                if (a.asname or a.name) == alias:
                    path = ROOT / "app" / node.module.replace(".", "/") / f"{a.name}.py"
                    return path if path.exists() else None
    return None


def sections(page: str) -> tuple[str | None, list[str]]:
    """(URL parameter, section ids) of the page's one section control, from its source.

    The control is the ``url_choice`` whose options are the page's ``SECTIONS`` (or, on the
    basics page, a list of steps named by position: ``ids=range(len(view.STEPS))``).
    """
    path = STUDIOS / f"{page}.py"
    if not path.exists():
        return None, []
    tree = ast.parse(path.read_text())
    keys = _dict_keys(tree, "SECTIONS")
    for call in _calls(tree, "url_choice"):
        if len(call.args) < 4 or _const(call.args[1]) is None:
            continue
        param = _const(call.args[1])
        mentions = any(isinstance(n, ast.Name) and n.id == "SECTIONS" for n in ast.walk(call))
        if keys and (mentions or param == "section"):
            return param, keys
        ids = next((k.value for k in call.keywords if k.arg == "ids"), None)
        if param in ("section", "step") and _positional(ids):
            seq = ids.args[0].args[0]  # range(len(<seq>))
            if isinstance(seq, ast.Attribute) and isinstance(seq.value, ast.Name):
                module = _imported(tree, seq.value.id)
                n = _list_len(module, seq.attr) if module else 0
            else:
                n = _list_len(path, getattr(seq, "id", ""))
            if n:
                return param, [str(i) for i in range(n)]
    return None, []


def _positional(ids) -> bool:
    return (
        isinstance(ids, ast.Call)
        and getattr(ids.func, "id", None) == "range"
        and len(ids.args) == 1
        and isinstance(ids.args[0], ast.Call)
        and getattr(ids.args[0].func, "id", None) == "len"
    )


def deck_steps(lang: str) -> dict[str, int]:
    """Deck name → number of steps in ``lang``'s file (English where it has none)."""
    from kit.decks import shipped

    steps = {}
    for name, files in shipped().items():
        path = files.get(lang) or files.get("en")
        if path is not None:
            with path.open("rb") as f:
                steps[name] = len(tomllib.load(f).get("steps", []))
    return steps


def views(pages: list[str], lang: str, quick: bool, decks: set[str] = frozenset()) -> list[View]:
    """Every view of ``pages``: each section (each lesson step of ``decks``, default every
    deck); ``quick``: the default only."""
    found = []
    for page in pages:
        if quick:
            found.append(View(page, "default"))
        elif page == "lessons":
            for deck, n in deck_steps(lang).items():
                if decks and deck not in decks:
                    continue
                found += [
                    View(page, f"{deck}-{i}", (("deck", deck), ("step", str(i))))
                    for i in range(1, n + 1)
                ]
        else:
            param, ids = sections(page)
            found += [View(page, s, ((param, s),)) for s in ids] or [View(page, "default")]
    return found


# ---- the language check ---------------------------------------------------------------

WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
MARKUP = re.compile(r"\*\*|__|`|^#+\s*|\[|\]\([^)]*\)")
CJK = re.compile(r"[\u4e00-\u9fff]")
SHINGLE = 4  # words: a run sharing four words in a row with an English-only string


def _words(text: str) -> list[str]:
    return [w.lower() for w in WORD.findall(text)]


def _shingles(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}


def _plain(text: str) -> str:
    return " ".join(MARKUP.sub("", text).split())


@functools.cache
def catalog(lang: str) -> dict[str, str]:
    from kit.i18n import catalog as read

    return read(lang)


@functools.cache
def _english_only() -> tuple[set, set[str], set[str], set[str]]:
    """(4-word shingles, whole short strings, snake_case names known in 中文, English-only
    words) of English interface text with a different Chinese one; anything also found in
    the Chinese sources is out."""
    en, zh = catalog("en"), catalog("zh")
    english = [v for k, v in en.items() if zh.get(k, "") != v]
    chinese = list(zh.values())
    for path in DECKS.glob("*.toml"):
        (chinese if path.name.endswith(".zh.toml") else english).append(path.read_text())
    zh_shingles = set().union(*(_shingles(_words(z)) for z in chinese))
    zh_text = "\n".join(chinese)
    shingles = set()
    short = set()
    for value in english:
        for piece in re.split(r"\{[^}]*\}", value):
            shingles |= _shingles(_words(piece)) - zh_shingles
        plain = _plain(value)
        if "{" not in value and 1 <= len(_words(plain)) <= 3 and len(plain) >= 3:
            if plain not in zh_text:
                short.add(plain)
    names = set(SNAKE.findall(zh_text))
    zh_words = set(_words(zh_text))
    words = {w for v in english for w in _words(_plain(v)) if len(w) >= 5} - zh_words
    return shingles, short, names, words


def _named(identifier: str) -> bool:
    """Two or more worded parts (``kv_cache``, ``unigram_f1``), not ``x86_64``."""
    return sum(any(c.isalpha() for c in part) for part in identifier.split("_")) > 1


def untranslated(texts: list[dict]) -> list[dict]:
    """The text runs of a 中文 view that are English interface text (one finding per run)."""
    shingles, short, known_names, english_words = _english_only()
    found, seen = [], set()
    for run in texts:
        text = run["text"]
        if text in seen:
            continue
        seen.add(text)
        why = None
        if _plain(text) in short:
            why = "an English interface string"
        else:
            hit = _shingles(_words(text)) & shingles
            if hit:
                why = "English interface text: " + " ".join(sorted(hit)[0])
            else:
                names = [n for n in SNAKE.findall(text) if n not in known_names and _named(n)]
                # An English word inside a Chinese sentence ("adjacent 权重共享").
                loose = [w for w in _words(text) if w in english_words] if CJK.search(text) else []
                if names:
                    why = "an identifier shown as a name: " + ", ".join(names[:3])
                elif loose:
                    why = "English words in a Chinese sentence: " + ", ".join(loose[:3])
        if why:
            found.append({"text": text[:120], "where": run["where"], "why": why})
    return found


# ---- widget ↔ URL agreement ---------------------------------------------------------------

# Streamlit widget → the kind the page script reports for it (bench/screens_checks.js).
DOM_KIND = {
    "selectbox": "selectbox",
    "segmented_control": "buttongroup",
    "pills": "buttongroup",
    "radio": "radio",
    "slider": "slider",
    "select_slider": "slider",
    "number_input": "numberinput",
}


@dataclass(frozen=True)
class UrlWidget:
    """A widget whose value lives in ``?param=`` (a url_choice or url_number call)."""

    param: str
    kind: str
    label_key: str | None  # a locale key (``t("chat.layer")``), or None with ``label``
    label: str | None = None  # a literal label
    option_key: str | None = None  # ``t(f"chat.section_{s}")``: "chat.section_{}"
    positional: bool = False  # ``ids=range(len(...))``: the URL holds the option's position
    identity: bool = False  # no ids, no format_func: the option shown is the URL's value
    number: bool = False


def _option_key(fn) -> str | None:
    """``lambda s: t(f"prefix{s}suffix")`` → ``"prefix{}suffix"``."""
    if not (isinstance(fn, ast.Lambda) and isinstance(fn.body, ast.Call)):
        return None
    call = fn.body
    if getattr(call.func, "id", None) != "t" or not call.args or call.keywords:
        return None
    arg = call.args[0]
    if not isinstance(arg, ast.JoinedStr) or len(arg.values) > 3:
        return None
    parts = []
    for v in arg.values:
        if isinstance(v, ast.Constant):
            parts.append(v.value)
        elif isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name):
            parts.append("{}")
        else:
            return None
    key = "".join(parts)
    return key if key.count("{}") == 1 else None


def _t_key(node) -> str | None:
    """``t("area.key", …)`` → ``"area.key"``."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "t" and node.args:
        return _const(node.args[0])
    return None


def _scopes(tree: ast.AST):
    """(scope, its url_choice / url_number calls, its ``name = t("key")`` assignments)."""
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))]:
        body = scope.body
        nodes = [n for stmt in body for n in ast.walk(stmt)]
        if scope is tree:  # the module's own statements, not its functions'
            nodes = [
                n for stmt in body if not isinstance(stmt, ast.FunctionDef) for n in ast.walk(stmt)
            ]
        names = sorted(  # (line, name, key): a name may be reassigned between widgets
            (n.lineno, t.id, _t_key(n.value))
            for n in nodes
            if isinstance(n, ast.Assign) and _t_key(n.value)
            for t in n.targets
            if isinstance(t, ast.Name)
        )
        calls = [
            n
            for n in nodes
            if isinstance(n, ast.Call)
            and getattr(n.func, "id", getattr(n.func, "attr", None)) in ("url_choice", "url_number")
        ]
        yield calls, names


def url_widgets(page: str) -> list[UrlWidget]:
    """Every URL-state widget in the page's source and its helper (``<page>_*.py``)."""
    found = []
    for path in sorted(STUDIOS.glob(f"{page}.py")) + sorted(STUDIOS.glob(f"{page}_*.py")):
        tree = ast.parse(path.read_text())
        for calls, names in _scopes(tree):
            found += [w for w in map(_url_widget, calls, [names] * len(calls)) if w]
    return found


def _url_widget(call: ast.Call, names: list[tuple[int, str, str]]) -> UrlWidget | None:
    if len(call.args) < 3 or _const(call.args[1]) is None:
        return None
    widget = getattr(call.args[0], "attr", getattr(call.args[0], "id", ""))
    if widget not in DOM_KIND:
        return None
    label = call.args[2]
    label_key = _t_key(label)
    if isinstance(label, ast.Name):  # the last ``label = t("…")`` above the call
        keys = [k for line, name, k in names if name == label.id and line < call.lineno]
        label_key = keys[-1] if keys else None
    literal = None if label_key else _const(label)
    if label_key is None and literal is None:
        return None
    kw = {k.arg: k.value for k in call.keywords}
    number = getattr(call.func, "id", getattr(call.func, "attr", "")) == "url_number"
    return UrlWidget(
        param=_const(call.args[1]),
        kind=DOM_KIND[widget],
        label_key=label_key,
        label=literal,
        option_key=_option_key(kw.get("format_func")),
        positional=_positional(kw.get("ids")),
        identity=not number and not {"ids", "format_func", None} & set(kw),
        number=number,
    )


def _text(key: str, lang: str) -> str | None:
    return catalog(lang).get(key) or catalog("en").get(key)


def _label_pattern(w: UrlWidget, lang: str) -> re.Pattern | None:
    template = w.label if w.label is not None else _text(w.label_key, lang)
    if template is None:
        return None
    pieces = re.split(r"\{[^}]*\}", _plain(template))
    if len(re.findall(r"\w", "".join(pieces))) < 4:  # "{label} ({lo} … {hi})" matches anything
        return None
    return re.compile(".+?".join(re.escape(p) for p in pieces))


def _same_number(a: str, b: str) -> bool:
    try:
        return abs(float(a.replace(",", "")) - float(b)) <= 1e-9 * max(1.0, abs(float(b)))
    except ValueError:
        return False


def widget_disagreements(page: str, shown: list[dict], url: str, asked: dict, lang: str):
    """Widgets whose shown value is not their URL value, and asked values the page dropped."""
    params = dict(parse_qsl(urlparse(url).query, keep_blank_values=True))
    found = []
    for param, value in asked.items():
        if params.get(param) != value:
            found.append(
                {
                    "param": param,
                    "url": params.get(param),
                    "asked": value,
                    "why": "asked view not drawn",
                }
            )
    widgets = url_widgets(page)
    patterns = [_label_pattern(w, lang) for w in widgets]
    for w, pattern in zip(widgets, patterns, strict=True):
        if pattern is None:
            continue
        # Two parameters whose widgets read the same (the chat page's two "Tokens of the
        # text"): the one in the URL is the one drawn.
        twins = [
            o.param
            for o, p in zip(widgets, patterns, strict=True)
            if p is not None and p.pattern == pattern.pattern and o.param != w.param
        ]
        if w.param not in params and any(t in params for t in twins):
            continue
        matches = [
            s for s in shown if s["kind"] == w.kind and pattern.fullmatch(_plain(s["label"]))
        ]
        if len(matches) != 1:
            continue  # not on this view (another section's widget), or ambiguous
        s = matches[0]
        value = params.get(w.param)
        record = {"param": w.param, "label": s["label"], "shown": s["shown"], "url": value}
        if value is None:
            found.append(record | {"why": f"widget shown, ?{w.param}= missing"})
        elif w.number:
            if not _same_number(s["shown"] or "", value):
                found.append(record | {"why": "number differs"})
        elif w.positional:
            if str(s["index"]) != value:
                found.append(
                    record | {"why": f"option {s['index']} shown, position {value} in URL"}
                )
        elif w.option_key:
            expected = _text(w.option_key.format(value), lang)
            if expected is not None and _plain(expected) != _plain(s["shown"] or ""):
                found.append(record | {"why": f"shows {s['shown']!r}, URL means {expected!r}"})
        elif w.identity and (s["shown"] or "") != value:
            found.append(record | {"why": "shown option is not the URL's"})
    # One widget on screen, read by several calls in the source that share its parameter and
    # label (the Variants lab's layer inputs): one finding.
    return [f for i, f in enumerate(found) if f not in found[:i]]


# ---- one view ---------------------------------------------------------------------------


def settle(page, timeout_s: float = 240, quiet_s: float = 1.0, max_s: float = 60) -> None:
    """The first run has ended, every lazily loaded element is drawn and the figures have
    stopped changing (or ``max_s`` passed: a live view may redraw for ever)."""
    page.wait_for_function(READY, timeout=timeout_s * 1000)
    last, since, deadline = None, time.monotonic(), time.monotonic() + max_s
    while time.monotonic() < deadline:
        drawn = page.evaluate(DRAWN)
        signature = (drawn, page.evaluate(FIGURE_SIGNATURE))
        if drawn is None or signature != last or not page.evaluate(IDLE):
            last, since = signature, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return
        page.wait_for_timeout(250)


def first_screen(first: dict, revealed: dict | None, viewport: Viewport) -> list[dict]:
    """Presenter mode's promise: a figure, or a pending predict box (or the button that
    starts the view's work) followed by its figure, starts on the first screen."""
    figure, pending = first["figure"], first["pending"] or first.get("start")
    if figure is not None and figure["top"] < viewport.height:
        return []
    if pending is not None and pending["top"] < viewport.height:
        if revealed is None:  # not pressed: the pending box alone keeps the promise
            return []
        shown = revealed["figure"]
        if shown is None:
            pressed = revealed.get("pressed", "Reveal")
            return [{"why": f"no figure appeared after pressing {pressed}"}]
        gap = shown["top"] - revealed["box_bottom"]
        if shown["top"] >= viewport.height and gap > REVEAL_GAP_PX:
            return [{"why": f"revealed figure at y = {shown['top']} px, {gap} px below its box"}]
        return []
    if figure is None:
        return [
            {"why": "no figure on the page" + (" (predict box below the fold)" if pending else "")}
        ]
    return [{"why": f"first {figure['kind']} starts at y = {figure['top']} px"}]


@dataclass
class Result:
    view: View
    viewport: str
    lang: str
    url: str = ""
    seconds: float = 0.0
    charts: int = 0
    findings: dict[str, list] = field(default_factory=lambda: {c: [] for c in CHECKS})
    error: str | None = None
    shots: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.view.name} {self.lang} {self.viewport}"

    def counts(self) -> dict[str, int]:
        return {c: len(v) for c, v in self.findings.items()}

    def line(self) -> str:
        found = ", ".join(f"{c} {n}" for c, n in self.counts().items() if n)
        tail = f"ERROR {self.error}" if self.error else (found or "clean")
        return f"{self.name}: {self.seconds:.1f} s, {self.charts} charts; {tail}"


def _stem(view: View, viewport: Viewport, lang: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{view.page}-{view.section}-{lang}-{viewport.name}")


def _full_page(page, path: Path, viewport: Viewport) -> None:
    """The whole page: the window made as tall as the page's scrolling area, then back."""
    height = page.evaluate(
        "() => (document.querySelector('[data-testid=stMain]') || document.body).scrollHeight"
    )
    tall = min(max(int(height), viewport.height), FULL_PAGE_MAX_PX)
    page.set_viewport_size({"width": viewport.width, "height": tall})
    page.wait_for_timeout(600)
    page.screenshot(path=str(path))
    page.set_viewport_size({"width": viewport.width, "height": viewport.height})


ANSI = re.compile(r"\x1b\[[0-9;]*m")
RAISED = re.compile(r"^([A-Z]\w*(?:Error|Exception)): (.*)$", re.M)


def _raised(log: Path | None, since: int) -> str:
    """The last exception the server logged after byte ``since`` (the page shows it
    redacted: ``client.showErrorDetails = "none"``)."""
    if log is None or not log.exists():
        return ""
    with log.open("rb") as f:
        f.seek(since)
        found = RAISED.findall(ANSI.sub("", f.read().decode(errors="replace")))
    return ": ".join(found[-1]).strip()[:200] if found else ""


def check_view(
    page,
    base: str,
    view: View,
    viewport: Viewport,
    lang: str,
    out: Path | None = None,
    log: Path | None = None,
):
    """Open ``view``, run every check on it and (with ``out``) save its screenshots; ``log``,
    the server's log, names the exception behind an error on the page."""
    result = Result(view, viewport.name, lang)
    since = log.stat().st_size if log is not None and log.exists() else 0
    query = dict(view.query)
    if lang != "en":
        query["lang"] = lang
    if viewport.presenter:
        query["present"] = "1"
    path = "" if view.page == "home" else view.page
    result.url = f"{base}/{path}" + (f"?{urlencode(query)}" if query else "")
    t0 = time.perf_counter()
    try:
        page.set_viewport_size({"width": viewport.width, "height": viewport.height})
        page.goto(result.url)
        settle(page)
        labels = {
            "revealLabel": _text("reveal.button", lang),
            "againLabel": _text("reveal.again", lang),
        }
        found = page.evaluate(CHECKS_JS, {"presenter": viewport.presenter, **labels})
        if page.locator("[data-testid=stException]").count():
            shown = page.locator("[data-testid=stException]").first.inner_text()
            result.error = "exception on the page: " + (_raised(log, since) or shown[:200])
        result.charts = found["charts"]
        f = result.findings
        f["overlaps"] = found["overlaps"]
        f["uniform"] = found["uniform"]
        f["truncated"] = found["truncated"]
        f["scales"] = found["scales"]
        f["small_type"] = found["small"]
        f["cell_numbers"] = found["cells"]
        f["ragged_numbers"] = found["ragged"]
        f["stretched"] = found["stretched"]
        if lang != "en":
            f["untranslated"] = untranslated(found["texts"])
        f["widgets"] = widget_disagreements(view.page, found["widgets"], found["url"], query, lang)
        stem = _stem(view, viewport, lang)
        if out is not None:  # the first screen; the whole page at the researcher's size
            page.screenshot(path=str(out / f"{stem}.png"))
            result.shots = [f"{stem}.png"]
            if not viewport.presenter:
                _full_page(page, out / f"{stem}-full.png", viewport)
                result.shots.append(f"{stem}-full.png")
        revealed = None
        if viewport.presenter:
            revealed = _press_pending(page, found["first"], labels, viewport)
            if revealed is not None and out is not None:
                page.screenshot(path=str(out / f"{stem}-revealed.png"))
                result.shots.append(f"{stem}-revealed.png")
            if result.error is None:  # a page that failed is its error, not a layout
                f["first_screen"] = first_screen(found["first"], revealed, viewport)
    except Exception as exc:  # one broken view must not hide the others
        result.error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    result.seconds = time.perf_counter() - t0
    return result


def _press_pending(page, first: dict, labels: dict, viewport: Viewport) -> dict | None:
    """With no figure on the first screen: press Reveal on a pending predict box, then the
    button that starts the view's work if there is still no figure; what the last press
    showed (None when nothing was pressed)."""
    shown = None
    if first["pending"] is not None and _below(first, viewport):
        button = page.locator("[data-testid=stMain]").get_by_role(
            "button", name=labels["revealLabel"], exact=True
        )
        shown = _press(page, button.first, "pending", {"revealLabel": labels["againLabel"]})
    now = shown or first
    if now.get("start") is not None and _below(now, viewport):
        button = page.locator(f".{now['start']['key']} button").first
        shown = _press(page, button, "start", {"revealLabel": labels["againLabel"]})
    return shown


def _below(first: dict, viewport: Viewport) -> bool:
    """No figure starts on the first screen."""
    return first["figure"] is None or first["figure"]["top"] >= viewport.height


def _press(page, button, box: str, opts: dict) -> dict:
    """Press ``button`` and wait for the page to settle; the first screen's reading after
    it, with the bottom of the pressed button's box (``box``: "pending" or "start")."""
    name = button.inner_text().strip()
    button.click()
    settle(page)
    found = page.evaluate(CHECKS_JS, opts)["first"]
    pressed = found[box]
    return found | {"box_bottom": pressed["bottom"] if pressed else 0, "pressed": repr(name)}


# ---- the whole run ------------------------------------------------------------------------


def summary(results: list[Result], wall_s: float, out: Path | None, options: dict) -> dict:
    totals = Counter()
    with_finding = Counter()
    pages: dict[str, Counter] = {}
    for r in results:
        counts = r.counts()
        totals.update(counts)
        with_finding.update({c: 1 for c, n in counts.items() if n})
        pages.setdefault(r.view.page, Counter()).update(counts)
    worst = sorted(results, key=lambda r: -sum(r.counts().values()))[:10]
    return {
        "bench": "screens",
        "views": len(results),
        "wall_s": round(wall_s, 1),
        "checks": {c: totals[c] for c in CHECKS},
        "views_with": {c: with_finding[c] for c in CHECKS},
        "pages": {p: {c: n[c] for c in CHECKS} for p, n in pages.items()},
        "worst": [
            {"view": r.name, **{c: n for c, n in r.counts().items() if n}}
            for r in worst
            if sum(r.counts().values())
        ],
        "errors": [{"view": r.name, "error": r.error} for r in results if r.error],
        "gallery": str(out / "index.html") if out else None,
        "options": options,
    }


def _grouped(overlaps: list[dict]) -> dict[tuple[str, str], list[dict]]:
    groups: dict[tuple[str, str], list[dict]] = {}
    for o in overlaps:
        groups.setdefault((o["chart"], o["kinds"]), []).append(o)
    return groups


def write_gallery(out: Path, results: list[Result], result: dict) -> None:
    """index.html: the counts, then every view's first screen (linked to the whole page)
    with its findings; findings.json: everything, for a script."""
    esc = html.escape
    rows = "".join(
        f"<tr><td>{esc(p)}</td>"
        + "".join(f"<td class=n{int(n[c] > 0)}>{n[c]}</td>" for c in CHECKS)
        + "</tr>"
        for p, n in result["pages"].items()
    )
    head = "".join(f"<th>{c}</th>" for c in CHECKS)
    worst = " · ".join(f'<a href="#{esc(w["view"])}">{esc(w["view"])}</a>' for w in result["worst"])
    cards = []
    for r in results:
        shots = "".join(
            f'<a href="{esc(s)}"><img loading=lazy src="{esc(s)}" alt="{esc(s)}"></a>'
            for s in r.shots
            if not s.endswith("-full.png")
        )
        full = next((s for s in r.shots if s.endswith("-full.png")), None)
        items = []
        for check, found in r.findings.items():
            if check == "overlaps":  # often dozens of pairs in one chart: one line per chart
                for (chart, kinds), pairs in _grouped(found).items():
                    worst = max(pairs, key=lambda o: o["px2"])
                    example = f"{worst['a']!r} on {worst['b']!r}, {worst['px2']} px²"
                    line = f"{chart}: {len(pairs)} pairs of {kinds} labels (worst {example})"
                    items.append(f"<li><b>{check}</b> {esc(line)}</li>")
                continue
            for item in found[:10]:
                items.append(f"<li><b>{check}</b> {esc(json.dumps(item, ensure_ascii=False))}</li>")
            if len(found) > 10:
                items.append(f"<li><b>{check}</b> … {len(found) - 10} more</li>")
        if r.error:
            items.insert(0, f"<li class=err>{esc(r.error)}</li>")
        cards.append(
            f'<section id="{esc(r.name)}"><h3>{esc(r.name)} <small>{r.seconds:.1f} s · '
            f'<a href="{esc(r.url)}">link</a>'
            + (f' · <a href="{esc(full)}">whole page</a>' if full else "")
            + f"</small></h3>{shots}<ul>{''.join(items) or '<li>clean</li>'}</ul></section>"
        )
    page = f"""<!doctype html><meta charset=utf-8><title>Attention Studio: visual review</title>
<style>body{{font:14px system-ui,sans-serif;margin:1.5rem}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:.2rem .5rem;text-align:right}}td:first-child{{text-align:left}}
.n1{{background:#fde2e1}}section{{border-top:1px solid #ddd;margin-top:1rem}}
img{{max-width:480px;border:1px solid #ccc;margin:.2rem;vertical-align:top}}
li{{font:12px monospace}}.err{{color:#b00}}</style>
<h1>Visual review</h1><p>{result["views"]} views in {result["wall_s"]} s · totals
{esc(json.dumps(result["checks"]))}</p><table><tr><th>page</th>{head}</tr>{rows}</table>
<p>Most findings: {worst}</p>
{"".join(cards)}"""
    (out / "index.html").write_text(page)
    detail = [
        {"view": r.name, "url": r.url, "error": r.error, "findings": r.findings} for r in results
    ]
    (out / "findings.json").write_text(json.dumps(detail, ensure_ascii=False, indent=1))


def _stop(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> dict:
    from catalog import PAGES
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", default="", help="comma-separated URL names (default: all)")
    ap.add_argument("--viewports", default=",".join(REVIEWED), help=",".join(VIEWPORTS))
    ap.add_argument("--langs", default="en,zh")
    ap.add_argument("--decks", default="", help="lesson decks to visit (default: all)")
    ap.add_argument("--out", type=Path, default=GALLERY, help="the gallery's folder")
    ap.add_argument("--quick", action="store_true", help="each page's default view only")
    ap.add_argument(
        "--budget-s", type=float, default=0, help="stop after this long and report what was seen"
    )
    args = ap.parse_args(argv)
    pages = [p for p in args.pages.split(",") if p] or [p.url for p in PAGES]
    viewports = [VIEWPORTS[v] for v in args.viewports.split(",") if v]
    langs = [lang for lang in args.langs.split(",") if lang]
    args.out.mkdir(parents=True, exist_ok=True)
    # View by view, each in every language and viewport: a run cut short covers whole views,
    # and the server's caches serve the repeats.
    decks = {d for d in args.decks.split(",") if d}
    per_lang = {lang: views(pages, lang, args.quick, decks) for lang in langs}
    every = list(dict.fromkeys(v for lang in langs for v in per_lang[lang]))
    plan = [(lang, vp, v) for v in every for lang in langs for vp in viewports]
    plan = [(lang, vp, v) for lang, vp, v in plan if v in per_lang[lang]]
    signal.signal(signal.SIGTERM, _stop)

    t0 = time.perf_counter()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = Path("/tmp") / f"bench-screens-{os.getpid()}.log"
    proc = start_server(port, log)
    results: list[Result] = []
    outside: list[str] = []
    try:
        wait_for_health(base, proc)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            context = browser.new_context()

            def guard(route):
                if is_local(route.request.url):
                    route.continue_()
                else:
                    outside.append(route.request.url)
                    route.abort()

            context.route("**/*", guard)
            page = context.new_page()
            try:
                for i, (lang, vp, view) in enumerate(plan, 1):
                    if args.budget_s and time.perf_counter() - t0 > args.budget_s:
                        break
                    result = check_view(page, base, view, vp, lang, args.out, log)
                    results.append(result)
                    print(f"[{i}/{len(plan)}] {result.line()}", flush=True)
            except KeyboardInterrupt:  # Ctrl+C or SIGTERM: report what was seen
                pass
            browser.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    options = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    result = summary(results, time.perf_counter() - t0, args.out, options)
    result["outside_requests"] = sorted(set(outside))
    result["planned_views"] = len(plan)
    write_gallery(args.out, results, result)
    # Only a run over every view stands for the studio: a part (some pages, --quick, a
    # budget or a stop) goes to its gallery, never over the full run's saved result.
    whole = not (args.pages or args.quick or args.decks) and len(results) == len(plan)
    whole &= set(langs) == {"en", "zh"} and {v.name for v in viewports} == set(REVIEWED)
    print(json.dumps(save(result, "screens") if whole else result, ensure_ascii=False))
    return result


if __name__ == "__main__":
    main()
