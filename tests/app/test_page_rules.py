"""Issue 11's static rules for the app: thin pages, views that render, state without views.

- every file under app/studios is at most 150 lines (a page, or a section of a page);
- no code in app/ computes a softmax or an exponential (strings and comments may name them:
  the check reads Python tokens, so a caption saying "softmax" is fine);
- nothing in app/state imports app/views (state hands Traces to pages, pages to views).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "app"
MAX_PAGE_LINES = 150
COMPUTES = re.compile(
    r"\b(?:torch|np|numpy|math|F)\s*\.\s*(?:softmax|log_softmax|exp)\b|\.\s*(?:softmax|exp)\s*\("
)


def _files(folder: str) -> list[Path]:
    return sorted((APP / folder).rglob("*.py"))


def _id(path: Path) -> str:
    return path.relative_to(APP).as_posix()


def _param(path: Path):
    return pytest.param(path, id=_id(path))


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


@pytest.mark.parametrize("path", [_param(p) for p in _files("studios")])
def test_page_files_are_thin(path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_PAGE_LINES, f"{_id(path)} has {n} lines"


@pytest.mark.parametrize("path", [_param(p) for p in APP.rglob("*.py")])
def test_no_softmax_or_exp_computed_in_the_app(path):
    found = COMPUTES.findall(code_only(path.read_text(encoding="utf-8")))
    assert not found, f"{_id(path)} computes {found}: the engine should return it"


@pytest.mark.parametrize("path", [_param(p) for p in _files("state")])
def test_state_never_imports_views(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    assert not {m for m in imported if m == "views" or m.startswith("views.")}, _id(path)


def test_the_checks_can_fail():
    """Each rule catches what it is for, and lets a caption through."""
    assert COMPUTES.findall(code_only("a = torch.softmax(s, dim=-1)"))
    assert COMPUTES.findall(code_only("e = np.exp(x - x.max())"))
    assert COMPUTES.findall(code_only("w = scores.softmax(dim=-1)"))
    assert COMPUTES.findall(code_only("w = s.exp()"))
    assert not COMPUTES.findall(code_only('st.caption("α = softmax(QKᵀ/√d_k), np.exp")'))
    assert not COMPUTES.findall(code_only("x = 1  # torch.softmax in a comment"))
