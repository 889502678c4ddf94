"""The engine speaks in message ids only: every InputError (or subclass) raised in engine/
with a literal first argument names an id of engine.messages (issue 28: one engine error
type, translated by id). A free text would raise KeyError at the raise site instead."""

import ast
from pathlib import Path

import pytest

from engine.messages import MESSAGES

ENGINE = Path(__file__).resolve().parents[2] / "engine"
ERRORS = {"InputError", "CheckpointError"}


def raised_texts(source: str) -> list[tuple[int, str]]:
    """(line, first argument) of each ``raise X(...)`` of an engine error type whose first
    argument is not a plain message id (an f-string, a joined or formatted text)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
            continue
        func = node.exc.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in ERRORS or not node.exc.args:
            continue
        first = node.exc.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            if first.value not in MESSAGES:
                found.append((node.lineno, first.value))
        elif isinstance(first, ast.JoinedStr | ast.BinOp):
            found.append((node.lineno, ast.unparse(first)))
    return found


@pytest.mark.parametrize(
    "path", sorted(ENGINE.rglob("*.py")), ids=lambda p: str(p.relative_to(ENGINE))
)
def test_every_engine_error_is_raised_with_a_message_id(path):
    assert raised_texts(path.read_text(encoding="utf-8")) == []


def test_the_check_can_fail():
    assert raised_texts('raise InputError(f"no model {x}")')
    assert raised_texts('raise checkpoints.CheckpointError("checkpoint gone")')
    assert not raised_texts('raise InputError("text.empty")')
