"""The import contracts (pyproject.toml, ``[tool.importlinter]``) hold, and fail when broken.

``lint-imports`` sees every import, function-local ones included, so an import placed
inside a function cannot hide a cycle; such an import stays only to keep a heavy library
out of start-up, and says so in a comment.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_every_import_contract_is_kept():
    run = lint_imports(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout and "3 kept" in run.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        ("engine/params.py", "from engine.models import registry", "engine-layers"),
        ("engine/models/cards/nmt.py", "from engine.evaluation import nmt", "engine-layers"),
        ("engine/kernels/dispatch.py", "from engine.attention import attend", "engine-acyclic"),
        ("engine/trace.py", "import streamlit", "engine-never-imports-the-app"),
        ("engine/text.py", "from kit import i18n", "engine-never-imports-the-app"),
    ],
)
def test_a_function_local_import_that_breaks_a_contract_is_caught(tmp_path, module, line, broken):
    shutil.copytree(
        ROOT / "engine", tmp_path / "engine", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    with open(tmp_path / module, "a") as f:  # hidden inside a function, where it runs late
        f.write(f"\n\ndef _late():\n    {line}  # noqa\n")
    run = lint_imports(tmp_path)
    assert run.returncode != 0
    names = {
        "engine-layers": "never back",
        "engine-acyclic": "no import cycle",
        "engine-never-imports-the-app": "never imports Streamlit",
    }
    broken_part = run.stdout.split("Broken contracts", 1)[1]
    assert names[broken] in broken_part


def function_local_project_imports(root: Path) -> list[tuple[Path, int, str]]:
    """(file, line, source line) of every ``engine`` import inside a function body."""
    found = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text()
        lines = source.splitlines()
        for fn in ast.walk(ast.parse(source)):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom):
                    modules = ["." * node.level + (node.module or "")]
                elif isinstance(node, ast.Import):
                    modules = [a.name for a in node.names]
                else:
                    continue
                if any(m.startswith(".") or m.split(".")[0] == "engine" for m in modules):
                    found.append((path, node.lineno, lines[node.lineno - 1]))
    return found


def test_a_function_local_engine_import_says_what_heavy_library_it_defers():
    unexplained = []
    for path, lineno, text in function_local_project_imports(ROOT / "engine"):
        above = path.read_text().splitlines()[lineno - 2].strip()
        if "heavy" not in text.lower() and not (above.startswith("#") and "heavy" in above.lower()):
            unexplained.append(f"{path.relative_to(ROOT)}:{lineno}: {text.strip()}")
    assert not unexplained, (
        "move these imports to the top of the module, or say which heavy library "
        "(transformers, umap, triton, …) they keep out of start-up, e.g. "
        "`# heavy: transformers`:\n" + "\n".join(unexplained)
    )


def test_the_check_finds_a_function_local_import(tmp_path):
    (tmp_path / "m.py").write_text("def f():\n    from engine import trace\n")
    assert [n for _, n, _ in function_local_project_imports(tmp_path)] == [2]
