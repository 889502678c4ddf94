"""Static rules for the app (issues 11 and 18): pages cut by job, not by line count.

- every function or method under app/ is at most ``MAX_FUNCTION_LINES`` lines;
- each page of the catalog is one file ``app/studios/<page>.py``, with at most one helper
  module of its own beside it (``<page>_<job>.py``), and nothing else lives in app/studios;
- a page and its helper together stay within ``PAGE_BUDGET`` lines (the Variants lab, seven
  sections, is the largest; past the budget, computing belongs in app/state or the engine,
  figures in app/views, drawing them in app/sections);
- a studios module imports no other studios module (a page may import its own helper);
- pages build no engine objects (no ``AttentionMap(`` or ``Trace(`` in app/studios);
- no checkpoint or result name is typed anywhere in app/: the registry and the cards say
  which model and which file (the names come from assets/checkpoints/*.json, so the list
  cannot go stale);
- a section has one id: the key of the page's ``SECTIONS`` dict is the name of the function
  that draws it, is the only place the page lists it, and names its label
  ``<page>.section_<id>``;
- no ``# noqa: E731`` (a lambda assigned to a name to translate between two names);
- no code in app/ computes a softmax or an exponential (strings and comments may name them:
  the check reads Python tokens, so a caption saying "softmax" is fine);
- nothing in app/state imports app/views or app/sections (state hands Traces to pages,
  pages hand them to sections and views).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest
from catalog import PAGES
from kit import i18n

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app"
STUDIOS = APP / "studios"
MAX_FUNCTION_LINES = 60
PAGE_BUDGET = 600  # lines of a page and its helper together
COMPUTES = re.compile(
    r"\b(?:torch|np|numpy|math|F)\s*\.\s*(?:softmax|log_softmax|exp)\b|\.\s*(?:softmax|exp)\s*\("
)
BUILDS = re.compile(r"\b(?:AttentionMap|Trace)\s*\(")
BARE_FRAGMENT = re.compile(r"\bst\s*\.\s*fragment\b")
LAMBDA_NOQA = re.compile(r"#\s*noqa:\s*E731")


def _files(folder: str = "") -> list[Path]:
    return sorted((APP / folder).rglob("*.py"))


def _id(path: Path) -> str:
    return path.relative_to(APP).as_posix()


def _param(path: Path):
    return pytest.param(path, id=_id(path))


def _source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


PAGE_NAMES = sorted(p.url for p in PAGES)


def _page_param(name: str):
    return pytest.param(name, id=name)


def code_only(source: str) -> str:
    """The source with every string and comment dropped: what runs, not what it says."""
    kept = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.STRING, tokenize.COMMENT) or tok.type == getattr(
            tokenize, "FSTRING_MIDDLE", -1
        ):
            continue
        kept.append(tok.string)
    return " ".join(kept)


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """``name (n lines)`` for every function or method longer than ``limit``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            n = node.end_lineno - node.lineno + 1
            if n > limit:
                found.append(f"{node.name} ({n} lines)")
    return found


def imported_modules(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def page_files(name: str) -> tuple[Path, list[Path]]:
    """A page's file and the helper modules beside it (``<page>_*.py``)."""
    return STUDIOS / f"{name}.py", sorted(STUDIOS.glob(f"{name}_*.py"))


def checkpoint_names() -> list[str]:
    """Every shipped checkpoint and result file, by the name the engine knows it by."""
    return sorted(p.stem for p in (ROOT / "assets" / "checkpoints").glob("*.json"))


def named_checkpoints(text: str, names: list[str]) -> list[str]:
    return [n for n in names if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text)]


def id_mentions(tree: ast.AST) -> list[str]:
    """Strings written where a table of ids would be: in a list, tuple, set or dict literal,
    or compared (``section == "compare"``). A map's name in ``trace.maps["alignment"]`` is
    another idea that happens to share a word, and is not counted."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            found += [e for e in node.elts]
        elif isinstance(node, ast.Dict):
            found += [k for k in node.keys if k is not None] + list(node.values)
        elif isinstance(node, ast.Compare):
            found += [node.left, *node.comparators]
    return [n.value for n in found if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def section_problems(page: str, source: str, catalog: dict) -> list[str]:
    """How a page's ``SECTIONS`` dict breaks "one id per section" (empty when it holds).

    The id is the dict's key, the URL's value and the label's key suffix; the function
    that draws it has that name (``-`` written ``_``, as Python spells it).
    """
    tree = ast.parse(source)
    sections = next(
        (
            node.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "SECTIONS" for t in node.targets)
        ),
        None,
    )
    if sections is None:
        return []
    if not isinstance(sections, ast.Dict):
        return ["SECTIONS is not a dict literal"]
    mentions = id_mentions(tree)
    problems = []
    for key, value in zip(sections.keys, sections.values, strict=True):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            problems.append(f"a SECTIONS key is not a string: {ast.unparse(key)}")
            continue
        sid = key.value
        if not (isinstance(value, ast.Name) and value.id == sid.replace("-", "_")):
            problems.append(f"section {sid!r} is drawn by {ast.unparse(value)}, not by its id")
        if mentions.count(sid) != 1:
            problems.append(f"section id {sid!r} is written {mentions.count(sid)} times")
        if f"{page}.section_{sid}" not in catalog:
            problems.append(f"no label {page}.section_{sid} in locales/en/{page}.toml")
    return problems


# -- rules on every file ----------------------------------------------------------------


@pytest.mark.parametrize("path", [_param(p) for p in _files()])
def test_functions_are_short(path):
    found = long_functions(_source(path))
    assert not found, f"{_id(path)}: {', '.join(found)} over {MAX_FUNCTION_LINES} lines"


@pytest.mark.parametrize("path", [_param(p) for p in _files()])
def test_no_lambda_assigned_to_a_name(path):
    assert not LAMBDA_NOQA.search(_source(path)), f"{_id(path)}: use format_func= or a def"


@pytest.mark.parametrize("path", [_param(p) for p in _files()])
def test_no_softmax_or_exp_computed_in_the_app(path):
    found = COMPUTES.findall(code_only(_source(path)))
    assert not found, f"{_id(path)} computes {found}: the engine should return it"


@pytest.mark.parametrize("path", [_param(p) for p in _files()])
def test_fragments_are_made_by_the_kit(path):
    """A fragment reruns outside its page's friendly_errors; kit.fragment gives it its own."""
    if _id(path) == "kit/errors.py":
        pytest.skip("where kit.fragment wraps st.fragment")
    found = BARE_FRAGMENT.findall(code_only(_source(path)))
    assert not found, f"{_id(path)}: st.fragment; use kit.fragment"


@pytest.mark.parametrize("path", [_param(p) for p in _files("state")])
def test_state_never_imports_views(path):
    imported = imported_modules(_source(path))
    drawing = {m for m in imported if m.split(".")[0] in ("views", "sections")}
    assert not drawing, f"{_id(path)} imports {sorted(drawing)}"


@pytest.mark.parametrize("path", [_param(p) for p in sorted(APP.rglob("*.*")) if p.is_file()])
def test_no_checkpoint_name_in_the_app(path):
    if path.suffix not in (".py", ".toml", ".md"):
        pytest.skip("not text the app reads")
    found = named_checkpoints(_source(path), checkpoint_names())
    assert not found, f"{_id(path)} names {found}: ask the registry or the card"


# -- rules on pages -----------------------------------------------------------------------


def test_studios_hold_pages_and_their_helpers_only():
    pages = {f"{p.url}.py" for p in PAGES}
    assert {p.path for p in PAGES} == {f"studios/{name}" for name in pages}, "one file per page"
    stray = [
        _id(p)
        for p in STUDIOS.rglob("*")
        if p.name != "__pycache__"
        and "__pycache__" not in p.parts
        and (p.is_dir() or p.suffix == ".py")
        and not (p.parent == STUDIOS and p.name in pages)
        and not (p.parent == STUDIOS and any(p.name.startswith(f"{u[:-3]}_") for u in pages))
    ]
    assert not stray, f"not a page or a page's helper: {stray}"


@pytest.mark.parametrize("name", [_page_param(n) for n in PAGE_NAMES])
def test_a_page_has_at_most_one_helper_and_fits_its_budget(name):
    page, helpers = page_files(name)
    assert len(helpers) <= 1, f"{name} has helpers {[h.name for h in helpers]}"
    lines = sum(len(_source(p).splitlines()) for p in [page, *helpers] if p.exists())
    assert lines <= PAGE_BUDGET, f"{name}: {lines} lines over the budget of {PAGE_BUDGET}"


@pytest.mark.parametrize("path", [_param(p) for p in _files("studios")])
def test_studios_import_no_other_studios(path):
    own = path.stem.split("_")[0]  # a page and its helper share the page's name
    others = {
        m.split(".")[1]
        for m in imported_modules(_source(path))
        if m.startswith("studios.") and not m.split(".")[1].startswith(f"{own}_")
    }
    assert not others, (
        f"{_id(path)} imports studios {sorted(others)}: move it to sections, views or kit"
    )


@pytest.mark.parametrize("path", [_param(p) for p in _files("studios")])
def test_pages_build_no_engine_objects(path):
    found = BUILDS.findall(code_only(_source(path)))
    assert not found, f"{_id(path)} builds {found}: app/state or the engine should"


@pytest.mark.parametrize("name", [_page_param(n) for n in PAGE_NAMES])
def test_a_section_has_one_id(name):
    page, _ = page_files(name)
    if not page.exists():
        pytest.fail(f"{name}: no app/studios/{name}.py")
    problems = section_problems(name, _source(page), i18n.catalog(i18n.DEFAULT))
    assert not problems, f"{name}: {problems}"


# -- the rules can fail -------------------------------------------------------------------


def test_the_checks_can_fail():
    """Each rule catches what it is for, and lets the allowed shape through."""
    assert COMPUTES.findall(code_only("a = torch.softmax(s, dim=-1)"))
    assert COMPUTES.findall(code_only("e = np.exp(x - x.max())"))
    assert COMPUTES.findall(code_only("w = scores.softmax(dim=-1)"))
    assert COMPUTES.findall(code_only("w = s.exp()"))
    assert not COMPUTES.findall(code_only('st.caption("α = softmax(QKᵀ/√d_k), np.exp")'))
    assert not COMPUTES.findall(code_only("x = 1  # torch.softmax in a comment"))
    body = "\n".join(f"    x{i} = {i}" for i in range(60))
    assert long_functions(f"def f():\n{body}\n") == ["f (61 lines)"]
    assert not long_functions(f"def f():\n{body[: body.rindex(chr(10))]}\n")
    names = ["nmt-enfr-additive", "nmt-dates"]
    assert named_checkpoints('NAME = "nmt-enfr-additive"', names) == ["nmt-enfr-additive"]
    assert named_checkpoints('f"{x}" + "nmt-dates"', names) == ["nmt-dates"]
    assert not named_checkpoints('"nmt-enfr-additive-2" or "my-nmt-dates"', names)
    assert BUILDS.findall(code_only("amap = AttentionMap(weights=w)"))
    assert not BUILDS.findall(code_only('st.caption("an AttentionMap(…)")'))
    assert "studios.alignment" in imported_modules("from studios import alignment")
    assert BARE_FRAGMENT.findall(code_only("@st.fragment\ndef f():\n    pass\n"))
    assert not BARE_FRAGMENT.findall(code_only("@fragment\ndef f():  # not st.fragment\n    pass"))


def test_the_section_rule_can_fail():
    catalog = {"p.section_a": "A", "p.section_b-c": "B"}
    good = 'SECTIONS = {"a": a, "b-c": b_c}\nw = maps["a"] + f("a")\n'
    assert section_problems("p", good, catalog) == []
    renamed = 'SECTIONS = {"a": show_a, "b-c": b_c}\n'
    assert "drawn by show_a" in section_problems("p", renamed, catalog)[0]
    listed = 'SECTIONS = {"a": a, "b-c": b_c}\nIDS = ["a"]\n'
    assert section_problems("p", listed, catalog) == ["section id 'a' is written 2 times"]
    compared = 'SECTIONS = {"a": a, "b-c": b_c}\nif s == "b-c": pass\n'
    assert section_problems("p", compared, catalog) == ["section id 'b-c' is written 2 times"]
    unlabelled = 'SECTIONS = {"a": a, "c": c}\n'
    missing = ["no label p.section_c in locales/en/p.toml"]
    assert section_problems("p", unlabelled, catalog) == missing


PROJECT = ("engine", "kit", "state", "views", "sections", "studios", "catalog")


def local_project_imports(source: str) -> list[str]:
    """Imports of project modules inside a function: they could hide an import cycle, and
    nothing heavy is deferred by them (engine keeps its heavy libraries behind its own
    function-local imports)."""
    found = []
    for fn in ast.walk(ast.parse(source)):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and node.module:
                    name = node.module
                elif isinstance(node, ast.Import):
                    name = node.names[0].name
                else:
                    continue
                if name.split(".")[0] in PROJECT:
                    found.append(f"line {node.lineno}: {name}")
    return found


# The one deferred project import, by design: the server's preload imports the chat state
# (and with it torch) in a background thread after the first page is painted (issue 30).
DEFERRED = {"state/preload.py": ["state"]}


@pytest.mark.parametrize("path", [_param(p) for p in sorted(APP.rglob("*.py"))])
def test_no_project_module_is_imported_inside_a_function(path):
    found = local_project_imports(path.read_text())
    allowed = DEFERRED.get(_id(path), [])
    found = [f for f in found if f.split(": ", 1)[1] not in allowed]
    assert not found, f"{_id(path)}: {found}"


def test_the_local_import_rule_can_fail():
    source = "def f():\n    from engine.models import registry\n    import numpy\n"
    assert local_project_imports(source) == ["line 2: engine.models"]
