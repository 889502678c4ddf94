"""Every control that shapes what a page shows keeps its value in the page's link.

A researcher's link reproduces a view only if it carries every knob behind the numbers:
Compare and the Variants lab once dropped the variants' hyper-parameters, the INT8 and cost
profile sections every control, and a link opened the defaults beside numbers measured
with something else. A widget a page calls itself must take its first value from the URL
(an argument through ``url_default`` and friends) and write it back (``url_sync`` of the
name it is assigned to), or be passed to ``url_choice`` / ``url_number`` /
``url_multiselect``, which do both. The few that cannot are listed below with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "app"
WIDGETS = {
    *("selectbox", "slider", "number_input", "radio", "checkbox", "toggle"),
    *("segmented_control", "pills", "multiselect", "select_slider", "text_input", "text_area"),
}
# (file, function) → why the controls it draws directly are not in a link.
NOT_LINKED = {
    ("studios/alignment.py", "input_text"): "fills the text box, whose text is linked",
    ("studios/alignment.py", "live"): "a model trained in this session: links open shipped ones",
    ("studios/alignment.py", "timeline_view"): "only for a live run's film (param None)",
    ("studios/learning.py", "film"): "a model trained in this session",
    ("studios/learning.py", "lesson"): "the student's own prediction, asked before the reveal",
    ("studios/learning.py", "<module>"): "reads the studio's ?predict= (kit.reveal writes it)",
    ("studios/lessons.py", "choose"): "writes ?deck= and ?step= itself, on a change",
    ("studios/transformer_models.py", "pretrained_name"): "a path on this server, typed",
    ("studios/compare.py", "options"): "kit.knobs seeds these and writes ?a_hp= / ?b_hp=",
    ("studios/variants_inputs.py", "param_widgets"): "kit.knobs seeds these and writes ?hp=",
}


def _direct_widgets():
    """(file, function, line, widget) for every widget called directly (``st.slider(``,
    ``c2.selectbox(``) whose value neither comes from nor goes to the URL."""
    found = []
    for path in sorted([*APP.glob("studios/*.py"), *APP.glob("sections/*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)] + [tree]:
            body = fn.body if fn is tree else [fn]
            nodes = [n for stmt in body for n in ast.walk(stmt)]
            if fn is tree:  # module level: not inside any function
                inner = {
                    id(n)
                    for f in ast.walk(tree)
                    if isinstance(f, ast.FunctionDef)
                    for n in ast.walk(f)
                }
                nodes = [n for n in nodes if id(n) not in inner]
            synced = {
                name.id
                for call in nodes
                if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "url_sync"
                for kw in call.keywords
                for name in ast.walk(kw.value)
                if isinstance(name, ast.Name)
            }
            targets = {
                id(a.value): {
                    n.id for t in a.targets for n in ast.walk(t) if isinstance(n, ast.Name)
                }
                for a in nodes
                if isinstance(a, ast.Assign)
            }
            for call in nodes:
                if not (
                    isinstance(call.func, ast.Attribute) if isinstance(call, ast.Call) else False
                ):
                    continue
                if call.func.attr not in WIDGETS:
                    continue
                args = [*call.args, *(k.value for k in call.keywords)]
                seeded = any(
                    isinstance(x, ast.Call) and getattr(x.func, "id", "").startswith("url_")
                    for a in args
                    for x in ast.walk(a)
                )
                written = bool(targets.get(id(call), set()) & synced)
                if not (seeded or written):
                    name = "<module>" if fn is tree else fn.name
                    found.append((str(path.relative_to(APP)), name, call.lineno, call.func.attr))
    return found


def test_every_control_is_in_the_link_or_says_why_not():
    unlinked = [
        f"{file}:{line} {widget} in {fn}()"
        for file, fn, line, widget in _direct_widgets()
        if (file, fn) not in NOT_LINKED
    ]
    assert unlinked == []


@pytest.mark.parametrize("place", sorted(NOT_LINKED))
def test_every_exemption_is_still_needed(place):
    """An exemption whose widgets went (or became linked) is removed, so the list stays true."""
    assert place in {(file, fn) for file, fn, _, _ in _direct_widgets()}
