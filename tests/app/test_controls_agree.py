"""Controls show what is drawn: seeded random sequences of widget changes on every page.

After each action, every widget is checked three ways:

1. What the browser shows. Streamlit's front end keeps a widget's own last value for as long
   as the widget stays on the page, whatever ``index``/``value`` the script passes; it
   takes the script's value only when the widget is new (its ``default``) or when its
   state was written through ``st.session_state`` (``set_value``). :class:`Browser` replays
   that rule, so a widget whose value the script changed behind its back (a click in a
   chart, a widget that vanished after bad input and came back) shows up as a mismatch
   between what is shown and the value the script read.
2. The link. A widget seeded from the URL (``kit.url``) must have its value in ``?param=``
   after the run: a copied link opens what is drawn.
3. The drawing, where a page states it: a figure's title or a map grid's panel titles
   carry the layer, head or variants that were drawn.

Actions are random but seeded (one seed per page), include bad input (over-long, empty and
hostile text, a segmented control clicked off), and stop after a wall-clock budget, so the
test's runtime is bounded whatever a page costs.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from pathlib import Path

import pytest
from catalog import PAGES
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Widget
from streamlit.util import AttributeDictionary

APP = Path(__file__).resolve().parents[2] / "app"
ACTIONS = 20  # per page
BUDGET_S = 75  # per page: no new action starts after this
BAD_TEXTS = ["", "word " * 400, "</script><b>x</b> ?? 🙂", "  \n  "]


# ---- 1. what the browser shows ------------------------------------------------------------


def _wire(w: Widget):
    """The value the script read, as the front end would send it (formatted labels)."""
    ws = w._widget_state
    kind = ws.WhichOneof("value")
    if kind is None:
        return None
    value = getattr(ws, kind)
    if kind in ("string_array_value", "double_array_value", "int_array_value"):
        return tuple(value.data)
    return value


def _labels(p) -> list[str]:
    return [getattr(o, "content", o) for o in p.options]


def _proto_value(w: Widget, *, from_default: bool):
    """The value the front end draws from the element itself: its default (a new widget)
    or the value the script wrote through session state (``set_value``)."""
    p, kind = w.proto, type(w).__name__
    if kind in ("Selectbox", "Radio"):
        if not from_default:
            return p.raw_value
        unset = p.DESCRIPTOR.fields_by_name["default"].has_presence and not p.HasField("default")
        return None if unset or not p.options else _labels(p)[p.default]
    if kind in ("Multiselect", "ButtonGroup"):
        if not from_default:
            return tuple(p.raw_values)
        return tuple(_labels(p)[i] for i in p.default)
    if kind in ("SelectSlider",):
        if not from_default:
            return tuple(p.raw_value) if hasattr(p.raw_value, "__len__") else p.raw_value
        return tuple(p.options[int(i)] for i in p.default)
    if kind == "Slider":
        return tuple(p.default if from_default else p.value)
    if kind in ("NumberInput", "TextArea", "TextInput", "Checkbox", "Toggle"):
        return p.default if from_default else p.value
    return None  # a button: no value to show


class Browser:
    """The front end's copy of each widget's value, by widget id."""

    def __init__(self) -> None:
        self.shown: dict[str, object] = {}
        self.defaults: dict[str, tuple] = {}

    def user_sets(self, w: Widget) -> None:
        self.shown[w.id] = _wire(w)

    def after_run(self, at: AppTest) -> list[str]:
        """Update from the run's elements; the widgets whose shown value differs from the
        value the script read."""
        shown, problems, defaults = {}, [], {}
        for w in widgets(at):
            # A segmented control (ButtonGroup) takes its element's default again when the
            # default changes under it (seen in Chromium after a rerun soon after a load).
            default = tuple(w.proto.default) if type(w).__name__ == "ButtonGroup" else None
            defaults[w.id] = default
            moved = default is not None and self.defaults.get(w.id, default) != default
            if getattr(w.proto, "set_value", False):
                value = _proto_value(w, from_default=False)
            elif w.id in self.shown and not moved:
                value = self.shown[w.id]
            else:
                value = _proto_value(w, from_default=True)
            if isinstance(value, list):
                value = tuple(value)
            shown[w.id] = value
            read = _wire(w)
            if None not in (value, read) and not _same(value, read):
                problems.append(f"{w.key}: shows {value!r}, the script read {read!r}")
        self.shown, self.defaults = shown, defaults
        return problems


def _same(a, b) -> bool:
    if isinstance(a, float | int) and isinstance(b, float | int):
        return abs(a - b) < 1e-9
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def widgets(at: AppTest) -> list[Widget]:
    found = []

    def walk(node) -> None:
        if isinstance(node, Widget) and node.key:
            found.append(node)
        children = getattr(node, "children", None)
        for child in (children or {}).values() if isinstance(children, dict) else []:
            walk(child)

    walk(at._tree)
    return found


# ---- 2. the link ---------------------------------------------------------------------------


class Links:
    """Which widget key is seeded from which URL parameter, learned from ``kit.url`` as the
    pages call it (every page module looks the helpers up on ``kit`` at run time)."""

    def __init__(self, monkeypatch) -> None:
        import kit
        import kit.url as url

        self.bound: dict[str, tuple] = {}
        original_default, original_choice = url.url_default, url.url_choice
        original_index = url.url_index

        def url_default(param, default, cast=str, *, key=None, **kw):
            if key is not None:
                self.bound.setdefault(key, ("value", param, cast))
            return original_default(param, default, cast, key=key, **kw)

        def url_index(param, ids, default=0, *, key=None):
            if key is not None:
                self.bound.setdefault(key, ("index", param, [str(i) for i in ids]))
            return original_index(param, ids, default, key=key)

        def url_choice(widget, param, label, options, *, key, ids=None, **kw):
            options = list(options)
            ids = [str(i) for i in (options if ids is None else ids)]
            self.bound[key] = ("choice", param, dict(zip(map(repr, options), ids, strict=True)))
            return original_choice(widget, param, label, options, key=key, ids=ids, **kw)

        # A module first imported during an earlier test holds that test's wrapper: it is
        # recognised by its __wrapped__ and replaced too.
        url_default.__wrapped__ = original_default
        url_choice.__wrapped__ = original_choice
        url_index.__wrapped__ = original_index
        mine = {original_default: url_default, original_choice: url_choice}
        mine[original_index] = url_index
        for module in list(sys.modules.values()):
            for name, fn in list(vars(module).items()):
                if not callable(fn):
                    continue
                base = getattr(fn, "__wrapped__", fn)
                if any(base is f for f in mine) and fn is not mine[base]:
                    monkeypatch.setattr(module, name, mine[base])
        assert kit.url_default is url_default or not hasattr(kit, "url_default")

    def problems(self, at: AppTest) -> list[str]:
        """Widgets whose value is not the one in the link. A run that stopped on a refused
        input (an InputError explained on the page) draws nothing and offers no link: the
        link then still holds the last view drawn, and only what is shown is checked."""
        if not any("kit-link-text" in h.proto.body for h in at.get("html")):
            return []
        out = []
        params = {k: at.query_params[k] for k in at.query_params}
        params = {k: v[0] if isinstance(v, list) else v for k, v in params.items()}
        for w in widgets(at):
            if w.key not in self.bound or type(w).__name__ in ("Button", "DownloadButton"):
                continue
            how, param, extra = self.bound[w.key]
            value = w.value
            if param not in params:
                # A text over its limits (or past the link's length) is left out of the
                # link: nothing was drawn from it.
                if type(w).__name__ not in ("TextArea", "TextInput"):
                    out.append(f"{w.key}: ?{param}= missing while it shows {value!r}")
                continue
            if how == "index":
                index = getattr(w, "index", None)
                if index is None or extra[index] != params[param]:
                    out.append(f"{w.key}: shows option {index}, ?{param}={params[param]}")
                continue
            if how == "choice":
                if extra.get(repr(value)) != params[param]:  # None: nothing chosen, or "mean"
                    out.append(f"{w.key}: shows {value!r}, ?{param}={params[param]}")
                continue
            try:
                linked = extra(params[param])
            except (TypeError, ValueError):
                out.append(f"{w.key}: ?{param}={params[param]!r} does not parse")
                continue
            if isinstance(value, str) and len(value) > 2_500:
                continue
            if not _same(_plain(linked), _plain(value)):
                out.append(f"{w.key}: shows {value!r}, ?{param}={params[param]}")
        return out


def _plain(value):
    if isinstance(value, list | tuple):
        return tuple(_plain(v) for v in value)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


# ---- 3. the drawing, where a page states it -----------------------------------------------


def _titles(at: AppTest) -> list[str]:
    out = []
    for c in at.get("plotly_chart"):
        title = json.loads(c.proto.spec).get("layout", {}).get("title", {})
        out.append(title.get("text", "") if isinstance(title, dict) else str(title))
    return out


def _grid_titles(at: AppTest) -> list[str]:
    body = "".join(h.proto.body for h in at.get("html") if "kit-vgrid" in h.proto.body)
    return [m.strip() for m in re.findall(r'class="kit-vgrid-title"[^>]*>([^<[·]*)', body)]


def _chat_drawn(at: AppTest) -> list[str]:
    pick = next((w for w in widgets(at) if w.key.startswith("chat-pick-")), None)
    if pick is None:
        return []
    layer, head = pick.value.split(".")
    want = f"L{layer} H{head}"
    titles = [t for t in _titles(at) if re.match(r"L\d+ H\d+", t)]
    return [] if not titles or titles[0].startswith(want) else [f"head map {titles[0]!r}, {want}"]


def _variants_drawn(at: AppTest) -> list[str]:
    """The grid draws every variant picked, or says which it does not (those these inputs
    would run untrained)."""
    from kit.i18n import variant_title

    from engine.variants import REGISTRY

    picker = next((w for w in widgets(at) if w.key == "var-picked"), None)
    view = next((w for w in widgets(at) if w.key == "var-view"), None)
    drawn = _grid_titles(at)
    if picker is None or view is None or view.value != "maps" or not drawn:
        return []
    said = " ".join(i.value for i in at.info if i.value.startswith("Not drawn: "))
    picked = [v for v in picker.value if variant_title(REGISTRY[v]) not in said]
    if drawn[1:] != picked:
        return [f"maps of {drawn[1:]}, the picker shows {list(picker.value)}, {said!r}"]
    return []


DRAWN = {"chat": _chat_drawn, "variants": _variants_drawn}


# ---- the actions ---------------------------------------------------------------------------


def act(at: AppTest, w, rng: random.Random, browser: Browser) -> str:
    """Change ``w`` as a user could, bad input included; returns what was done."""
    if not isinstance(w, Widget):
        return click(at, w, rng)
    kind = type(w).__name__
    p = w.proto
    if kind in ("TextArea", "TextInput"):
        if rng.random() < 0.5:
            text = rng.choice(BAD_TEXTS)
        else:
            words = (w.value or "the cat sat on the mat").split() or ["dog"]
            text = " ".join(rng.sample(words, k=max(1, len(words) // 2)))
        w.set_value(text)
    elif kind in ("Selectbox", "Radio"):
        w.set_value(_raw(at, w, rng.choice(_labels(p))))
    elif kind == "Multiselect":
        options = _labels(p)
        w.set_value(_raw(at, w, rng.sample(options, k=rng.randint(0, min(4, len(options))))))
    elif kind == "ButtonGroup":
        if rng.random() < 0.2 and not p.required:  # clicked off: nothing chosen
            w.set_value(_raw(at, w, []))
        else:
            w.set_value(_raw(at, w, [rng.choice(_labels(p))]))
    elif kind == "SelectSlider":
        if isinstance(w.value, tuple | list):
            return f"skipped the range {w.key}"
        w.set_value(_raw(at, w, [rng.choice(list(p.options))]))
    elif kind in ("NumberInput", "Slider"):
        if kind == "Slider" and len(p.default) != 1:
            return f"skipped the range {w.key}"
        lo = p.min if (kind == "Slider" or p.has_min) else 0
        hi = p.max if (kind == "Slider" or p.has_max) else lo + 10
        now = w.value if isinstance(w.value, int | float) else lo
        value = rng.uniform(lo, min(hi, lo + 2 * max(abs(now), 1)))
        w.set_value(int(round(value)) if p.data_type == p.INT else round(value, 2))
    elif kind in ("Checkbox", "Toggle"):
        w.set_value(not w.value)
    elif kind == "Button":  # a text gate's "use the cut"
        w.click()
    else:
        return f"skipped {kind} {w.key}"
    browser.user_sets(w)
    _submit_form(at, w)
    return f"{w.key} <- {_wire(w)!r}"[:160]


def click(at: AppTest, chart, rng: random.Random) -> str:
    """A click on a point of a chart that reports its selection (``on_select``)."""
    key = chart.proto.id.split("-", 2)[2]
    data = [d for d in json.loads(chart.proto.spec)["data"] if d.get("type") == "scatter"]
    trace = data[0]
    i = rng.randrange(len(trace["x"]))
    point = dict(point_index=i, point_number=i, curve_number=0, x=trace["x"][i], y=trace["y"][i])
    if "customdata" in trace:
        point["customdata"] = trace["customdata"][i]
    event = dict(points=[point], point_indices=[i], box=[], lasso=[])
    at.session_state[key] = AttributeDictionary(selection=AttributeDictionary(event))
    return f"clicked {key} at {point.get('customdata', i)}"


def _raw(at: AppTest, w: Widget, labels):
    """The option(s) behind formatted ``labels``, as the server reads the browser's message."""
    metadata = at._session_state._state._new_widget_state.widget_metadata[w.id]
    return metadata.deserializer(labels)


def _submit_form(at: AppTest, w: Widget) -> None:
    """A widget in a form sends its value with the form's button: press it."""
    form = getattr(w.proto, "form_id", "")
    if not form:
        return
    for b in at.get("button"):
        if getattr(b.proto, "form_id", "") == form and getattr(b.proto, "is_form_submitter", 0):
            b.click()
            return


def candidates(at: AppTest) -> list[Widget]:
    out = []
    for w in widgets(at):
        kind = type(w).__name__
        if kind == "Button" and not w.key.endswith("-cut"):
            continue  # buttons run work (training, sweeps); the text gate's cut is an input
        if kind in ("DownloadButton", "FileUploader", "ChatInput"):
            continue
        if getattr(w.proto, "disabled", False):
            continue
        out.append(w)
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        scatter = any(d.get("type") == "scatter" and d.get("x") for d in spec.get("data", []))
        if chart.proto.selection_mode and scatter and chart.proto.id.startswith("$$ID-"):
            out.append(chart)
    return out


PAGE_NAMES = [p.url for p in PAGES if p.url != "home"]  # home: links to the pages only


@pytest.mark.parametrize("name", PAGE_NAMES)
def test_controls_show_what_is_drawn(name, monkeypatch):
    import torch

    torch.set_num_threads(1)
    if name == "chat":
        from engine.models import chat as chat_lib

        if not chat_lib.available():
            pytest.skip("the chat model is not converted: bash scripts/setup.sh")
    links = Links(monkeypatch)
    path = next(p.path for p in PAGES if p.url == name)
    at = AppTest.from_file(str(APP / path), default_timeout=240)
    if name == "chat":
        at.query_params["tokens"] = "4"  # a short generation: the checks are about controls
    at.run()
    rng, browser = random.Random(f"controls-{name}"), Browser()
    done, started = [], time.monotonic()
    problems = check(at, browser, links, name)
    assert not problems, ("first view", problems)
    for _ in range(ACTIONS):
        if time.monotonic() - started > BUDGET_S:
            break
        choices = candidates(at)
        if not choices:
            break
        done.append(act(at, rng.choice(choices), rng, browser))
        at.run()
        assert not at.exception, (done, [e.value for e in at.exception])
        problems = check(at, browser, links, name)
        if problems:
            pytest.fail("after " + " · ".join(done) + "\n" + "\n".join(problems))
    assert done, "no widget to act on"
    print(f"{name}: {len(done)} actions in {time.monotonic() - started:.1f} s: " + " · ".join(done))


def check(at: AppTest, browser: Browser, links: Links, name: str) -> list[str]:
    return [
        *browser.after_run(at),
        *links.problems(at),
        *(DRAWN[name](at) if name in DRAWN else []),
    ]


# ---- the cases seen in class, step by step -------------------------------------------------


def _open(name: str, monkeypatch, **params) -> tuple[AppTest, Browser, Links]:
    import torch

    torch.set_num_threads(1)
    links = Links(monkeypatch)
    path = next(p.path for p in PAGES if p.url == name)
    at = AppTest.from_file(str(APP / path), default_timeout=240)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    browser = Browser()
    assert not check(at, browser, links, name)
    return at, browser, links


def test_variants_a_refused_text_keeps_the_picker_and_its_pick(monkeypatch):
    at, browser, links = _open("variants", monkeypatch)
    picker = at.multiselect(key="var-picked").set_value(["linformer", "performer"])
    browser.user_sets(picker)
    at.run()
    assert not check(at, browser, links, "variants")
    box = at.text_area(key="var-mtext").set_value("word " * 200)
    browser.user_sets(box)
    at.run()
    assert at.multiselect(key="var-picked").value == ["linformer", "performer"]  # still there
    assert not check(at, browser, links, "variants")
    box = at.text_area(key="var-mtext").set_value("a short text here")
    browser.user_sets(box)
    at.run()
    assert not check(at, browser, links, "variants")
    assert _grid_titles(at)[1:] == ["linformer", "performer"]
    assert at.query_params["variants"] in ("linformer,performer", ["linformer,performer"])


def test_chat_a_clicked_head_is_the_one_the_list_shows(monkeypatch):
    from engine.models import chat as chat_lib

    if not chat_lib.available():
        pytest.skip("the chat model is not converted: bash scripts/setup.sh")
    at, browser, links = _open("chat", monkeypatch, tokens="4", section="heads")
    before = next(w for w in widgets(at) if w.key.startswith("chat-pick-")).value
    grid = next(c for c in candidates(at) if not isinstance(c, Widget))
    spec = next(d for d in json.loads(grid.proto.spec)["data"] if "customdata" in d)
    i = next(i for i, d in enumerate(spec["customdata"]) if f"{d[0]}.{d[1]}" != before)
    rng = random.Random(0)
    rng.randrange = lambda n: i  # the head at point i, not the one already shown
    click(at, grid, rng)
    at.run()
    assert not at.warning, [w.value for w in at.warning]  # no "value set via Session State"
    assert not check(at, browser, links, "chat")  # the list shows the clicked head
    layer, head = spec["customdata"][i]
    assert next(w for w in widgets(at) if w.key.startswith("chat-pick-")).value == f"{layer}.{head}"


def test_a_segmented_controls_default_stays_its_value_after_the_link_is_read():
    """Chat › Does it matter? › Patch, opened from a link, its lit Check clicked again at
    once: the Section and Check controls lit "Generation timeline" and "Logit lens" above
    the patching figure the page drew. Once the link had seeded them, their default fell
    back to the first option, and Chromium's segmented control takes a changed default."""
    at = AppTest.from_file(str(APP / "studios" / "memory.py"), default_timeout=180)
    at.query_params.update(section="training", task="1", story="0")
    browser = Browser()
    for _ in range(2):  # the link read; then a rerun (another widget, a form's button)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert not browser.after_run(at)
    group = next(w for w in widgets(at) if w.key == "mem_section")
    assert group.value == "training"
    assert _proto_value(group, from_default=True) == _wire(group)  # its default: what it shows
