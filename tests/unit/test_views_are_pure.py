"""Views build figures and HTML; they never import Streamlit (issue 28, item 5).

What draws with Streamlit lives in app/sections, which takes its figures from app/views: a
view can then be called, tested and benchmarked with no Streamlit session at all. Every
import counts, a function-local one included, since that is where one would hide.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

VIEWS = Path(__file__).resolve().parents[2] / "app" / "views"


def imports_of(top: str, source: str) -> list[str]:
    """``line n: module`` for every import of ``top`` (or a part of it), at any depth."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [f"line {node.lineno}: {n}" for n in names if n.split(".")[0] == top]
    return found


@pytest.mark.parametrize("path", sorted(VIEWS.glob("*.py")), ids=lambda p: p.name)
def test_no_view_imports_streamlit(path):
    found = imports_of("streamlit", path.read_text(encoding="utf-8"))
    assert not found, f"app/views/{path.name} imports {found}: move its drawing to app/sections"


@pytest.mark.parametrize("path", sorted(VIEWS.glob("*.py")), ids=lambda p: p.name)
def test_no_view_imports_a_section(path):
    """Sections import Streamlit: a view that took a helper from one would import it too."""
    found = imports_of("sections", path.read_text(encoding="utf-8"))
    assert not found, f"app/views/{path.name} imports {found}: sections use views, not back"


def test_the_check_finds_every_form_of_import():
    assert imports_of("streamlit", "import streamlit as st\n") == ["line 1: streamlit"]
    assert imports_of("streamlit", "import numpy, streamlit.components.v1\n") == [
        "line 1: streamlit.components.v1"
    ]
    assert imports_of("streamlit", "from streamlit.runtime import x\n") == [
        "line 1: streamlit.runtime"
    ]
    late = "def render(html):\n    import streamlit as st\n    st.iframe(html)\n"
    assert imports_of("streamlit", late) == ["line 2: streamlit"]
    assert not imports_of("streamlit", "import streamlit_extras\nfrom kit import chart\n")
    assert imports_of("sections", "from sections.chat import inert\n") == ["line 1: sections.chat"]
