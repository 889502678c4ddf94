"""A visitor clicking about: every page opened (English or 中文, presenting or not), then
widgets set at random — an option of a picker, a slider at an end, a toggle flipped, a
button pressed, text typed (empty, Markdown, HTML, right-to-left, emoji, control
characters, a numbered story, 5,000 characters; often with a button pressed in the same
run, as a form submits its text) — one rerun after each. Only a page may come back: no
exception, no error box. Training and cost sweeps are left out (minutes each; their own
tests drive them).

``FUZZ_CLICKS`` sets the actions per page (6 by default, about a minute in all); a longer
hunt: ``FUZZ_CLICKS=200 FUZZ_SEED=7 python -m pytest tests/fuzz/test_fuzz_clicks.py``.
A failure prints the steps that led to it.

AppTest sets a picker by its value, which it formats with the page's own format function;
a page's values are its own (ids, cards, numbers), so the test picks by the label shown,
as a visitor does: a picked widget reports that label as the browser would.
"""

from __future__ import annotations

import os
import random
import re

import pytest
from catalog import APP_DIR, PAGES
from kit import i18n
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1 import element_tree as et

ACTIONS = int(os.environ.get("FUZZ_CLICKS", "6"))
SEED = int(os.environ.get("FUZZ_SEED", "0"))
SLOW = re.compile(r"train|sweep|profile-run|训练", re.IGNORECASE)  # minutes of work a click
KINDS = ("selectbox", "radio", "segmented_control", "multiselect")
KINDS += ("slider", "number_input", "toggle", "checkbox", "button", "text_input", "text_area")
TYPED = (
    "",
    "   ",
    "?",
    "**bold** _it_ `code` [a](http://x) $x$",
    "<script>alert(1)</script></div>",
    "{name} {0} %s {{",
    "\x00\x1b[31m\u200b\ufeff",
    "مرحبا بالعالم",
    "你好世界，注意力是什么？",
    "😀🎉👍🏽" * 5,
    "e\u0301" * 30,
    "A" * 5000,
    "the " * 800,
    "1 Mary went to the kitchen.\n2 Where is Mary?\tkitchen\t1",
    "Mary went to the kitchen. Where is Mary?",
    "12 7 33 12 7",
    "MARY WENT TO THE KITCHEN",
    "1e309 nan -1",
)


@pytest.fixture
def by_label(monkeypatch):
    """Pickers report ``_picked`` (labels, as the browser sends them) once one is set; the
    language a run leaves behind (kit.i18n reads it outside a run) is restored after."""
    monkeypatch.setattr(i18n, "_last", i18n.DEFAULT)
    for cls, single in ((et.Radio, True), (et.Selectbox, True)):
        _report_picked(monkeypatch, cls, single)
    for cls in (et.ButtonGroup, et.Multiselect):
        _report_picked(monkeypatch, cls, False)


def _report_picked(monkeypatch, cls, single: bool) -> None:
    own = cls._widget_state

    def state(self):
        picked = getattr(self, "_picked", None)
        if picked is None:
            return own.fget(self)
        ws = WidgetState(id=self.id)
        if single:
            ws.string_value = picked
        else:
            ws.string_array_value.data[:] = picked
        return ws

    monkeypatch.setattr(cls, "_widget_state", property(state))


def _widgets(at):
    for kind in KINDS:
        for w in getattr(at, kind):
            if not getattr(w.proto, "disabled", False):
                yield kind, w


def _act(rng: random.Random, kind: str, w):
    """Set ``w`` as a visitor might; what was done, or None where nothing can be."""
    if kind in ("selectbox", "radio", "segmented_control"):
        if not w.options:
            return None
        label = rng.choice(w.options)
        w._picked = label if kind != "segmented_control" else [label]
        return label
    if kind == "multiselect":
        w._picked = rng.sample(list(w.options), min(len(w.options), rng.randint(0, 3)))
        return w._picked
    if kind in ("slider", "number_input"):
        lo, hi = w.min, w.max
        if lo is None or hi is None or isinstance(w.value, (list, tuple)):
            return None
        value = rng.choice([lo, hi, lo + (hi - lo) * rng.random()])
        value = int(round(value)) if isinstance(lo, int) else value
        w.set_value(value)
        return value
    if kind in ("toggle", "checkbox"):
        w.set_value(not w.value)
        return w.value
    if kind in ("text_input", "text_area"):
        typed = rng.choice(TYPED)
        w.set_value(typed)
        return typed[:40]
    if SLOW.search(f"{w.key} {w.label}"):
        return None
    w.click()
    return w.label


@pytest.mark.parametrize("page", [p.url for p in PAGES])
def test_a_visitor_clicking_about_gets_a_page(page, by_label):
    rng = random.Random(f"{SEED}-{page}")
    path = next(p.path for p in PAGES if p.url == page)
    at = AppTest.from_file(str(APP_DIR / "main.py"), default_timeout=300)  # its links work
    at.switch_page(path)
    if rng.random() < 0.5:
        at.query_params["lang"] = "zh"
    if rng.random() < 0.5:
        at.query_params["present"] = "1"
    at.run()
    steps = []
    for _ in range(ACTIONS):
        assert not at.exception and not at.error, (steps, _said(at))
        widgets = list(_widgets(at))
        if not widgets:
            break
        kind, w = rng.choice(widgets)
        done = _act(rng, kind, w)
        if done is None:
            continue
        steps.append((kind, w.key, done))
        buttons = [
            b for k, b in _widgets(at) if k == "button" and not SLOW.search(f"{b.key} {b.label}")
        ]
        if kind.startswith("text") and buttons and rng.random() < 0.6:  # a form's text goes
            press = rng.choice(buttons)  # with its button (AppTest drops it otherwise)
            press.click()
            steps.append(("button", press.key, press.label))
        at.run()
    assert not at.exception and not at.error, (steps, _said(at))


def _said(at) -> list[str]:
    return [str(e.value)[:600] for e in [*at.exception, *at.error]]
