"""Message files: every language has every key, every template formats the same names; every
page runs in 简体中文 with its interface in Chinese; page code passes no inline English."""

import ast
import re
import string
from pathlib import Path

import pytest
from catalog import PAGES
from kit import i18n
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "app"
CJK = re.compile(r"[\u4e00-\u9fff]")


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("lang", [lang for lang in i18n.LANGUAGES if lang != i18n.DEFAULT])
def test_every_language_has_every_key_with_the_same_fields(lang):
    en, other = i18n.catalog(i18n.DEFAULT), i18n.catalog(lang)
    assert en, "the English catalog is empty"
    assert set(other) == set(en), sorted(set(en) ^ set(other))
    for key, template in en.items():
        assert fields(other[key]) == fields(template), key


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_bold_text_renders_bold(lang):
    """Every ``**…**`` of a message is bold once its fields are filled (with a word): in
    CommonMark a closing ``**`` after a full-width colon and before a character is not one,
    and a zh note printed its asterisks. Rendered by markdown-it-py (CommonMark, as the
    browser's react-markdown is; installed with streamlit through rich)."""
    from markdown_it import MarkdownIt

    render = MarkdownIt("commonmark").render
    loose = []
    for key, template in i18n.catalog(lang).items():
        if "**" in template:
            parts = string.Formatter().parse(template)
            filled = "".join(
                text + ("word" if name is not None else "") for text, name, *_ in parts
            )
            if "**" in render(filled):
                loose.append(key)
    assert not loose


def test_the_bold_check_can_fail():
    from markdown_it import MarkdownIt

    render = MarkdownIt("commonmark").render
    assert "**" in render("**没有：**去掉")  # the zh note as first written
    assert "**" not in render("**没有**：去掉")


# ---- every page in Chinese -------------------------------------------------------------

# Names that stay as they are in every language: the product, models, tools, symbols.
KEEP = {"Attention Studio", "Transformer", "d_model", "bertviz"}
# Words that may stand in a Chinese label without making it English (terms of art, symbols).
TERMS = re.compile(
    r"\b(AER|BLEU|UMAP|INT8|KV|PE|Q|K|V|MemN2N|RNNsearch|RNNencdec|Bahdanau|Transformer|bertviz|"
    r"AttentionViz|HuggingFace|softmax|Softmax|rollout|sink|nats|MiB|GiB|GPU|CUDA|Triton|ISO|"
    r"CSV|JSON|NPZ|PNG|SVG|trace|query|key|hop|Performer|Linformer|Abnar|Zuidema|Vig|Yeh|Mamba|"
    r"SageAttention|FLOP|log|Och|Ney|Pearson|eager|MiniLM|sacreBLEU|unigram|F1|d_k|d_model)\b"
)
# Section identities (English: the widget's value), visited one after another.
SECTIONS = {
    "basics": ("basics_step", ["1 · Embeddings X", "Without the scaling", "All heads"]),
    "positional": ("pe_section", ["curves", "table", "similarity", "rotation", "learned"]),
    "alignment": ("nmt-section", ["alignment", "steps", "side-by-side", "head-view", "measured"]),
    "memory": ("mem_section", ["hops", "map"]),
    "transformer": ("transformer-section", ["grid", "bertviz", "neuron", "qk"]),
    "compare": ("cmp-mode", ["every", "two"]),
    "variants": ("variants-section", ["compare", "quality", "swap", "profile", "long", "kv"]),
    "chat": ("chat-section", ["timeline", "sinks", "cache", "heads", "variants"]),
}


def english(text: str) -> bool:
    """True for an interface string with no Chinese in it that is more than names and symbols."""
    if not text or CJK.search(text) or text in KEEP:
        return False
    return bool(re.search(r"[A-Za-z]{3,}", TERMS.sub("", text)))


def interface_strings(at: AppTest) -> list[tuple[str, str]]:
    """A sample of what the page shows: headings, widget labels, section names, tables' titles.

    Widgets keyed ``hp-…`` take their labels from the variants registry (engine data).
    """
    found = [(kind, el.value) for kind in ("title", "header", "subheader") for el in at.get(kind)]
    found += [("expander", el.label) for el in at.expander]
    found += [("metric", el.label) for el in at.metric]
    widgets = (
        "text_area text_input selectbox multiselect slider select_slider number_input "
        "radio checkbox toggle button segmented_control"
    ).split()
    for kind in widgets:
        for el in at.get(kind):
            if str(getattr(el, "key", "") or "").startswith("hp-"):
                continue
            found.append((kind, el.label))
            if kind in ("radio", "segmented_control"):
                found += [(f"{kind} option", str(o)) for o in el.options]
    return found


@pytest.fixture(autouse=True)
def english_afterwards():
    """Leave the process in English: outside a run, t() speaks the last run's language."""
    yield
    i18n._last = i18n.DEFAULT


def zh_page(url: str) -> AppTest:
    path = "main.py" if url == "home" else next(p.path for p in PAGES if p.url == url)
    at = AppTest.from_file(str(APP / path), default_timeout=180)
    at.query_params["lang"] = "zh"
    return at.run()


@pytest.mark.parametrize("url", [p.url for p in PAGES])
def test_every_page_runs_in_chinese_with_no_english_interface(url):
    at = zh_page(url)
    assert not at.exception, [e.value for e in at.exception]
    seen = interface_strings(at)
    key, values = SECTIONS.get(url, (None, []))
    for value in values:
        at.segmented_control(key=key).set_value(value).run()
        assert not at.exception, (value, [e.value for e in at.exception])
        assert at.segmented_control(key=key).value == value, "the section was not shown"
        seen += interface_strings(at)
    assert len(seen) >= 3, seen
    left = sorted({(kind, text) for kind, text in seen if english(text)})
    assert not left, left


def test_the_english_check_can_fail():
    assert english("Show") and english("Beam width (1 = greedy; 1–10)")
    assert not english("束宽（1 = 贪心解码；1–10）") and not english("d_model")
    assert not english("n (8 … 512)") and not english("AER")


def test_an_unknown_language_falls_back_to_english():
    at = AppTest.from_file(str(APP / "studios/basics.py"), default_timeout=180)
    at.query_params["lang"] = "xx"
    at.run()
    assert not at.exception and at.title[0].value == "Attention basics"


# ---- no inline interface strings in page code ------------------------------------------

# Calls whose first argument (or label=/help=) a reader sees: headings, messages, widgets.
SHOWN = {
    "title", "header", "subheader", "caption", "markdown", "info", "warning", "error",
    "success", "toast", "expander", "spinner", "metric", "text", "write", "latex_caption",
    "text_area", "text_input", "selectbox", "multiselect", "slider", "select_slider",
    "number_input", "radio", "checkbox", "toggle", "button", "download_button",
    "segmented_control", "pills", "page_link", "tabs", "popover", "progress",
}  # fmt: skip
RAISED = {"InputError", "ValueError", "FileNotFoundError"}
ALLOWED = {"Attention Studio"}
SYMBOLS = re.compile(r"\b(log|exp|tanh|softmax|d_model|d_k)\b")  # mathematics, not words


def inline_english(node: ast.AST) -> str | None:
    """The literal text of an argument when it carries words: a str, or an f-string's parts.

    An f-string whose literal parts hold no words (``f"### {answer}"``, ``f"{a} · {b}"``)
    only arranges t() strings, data, user text or model output, and passes.
    """
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        text = " ".join(
            v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
        )
    else:
        return None
    if text in ALLOWED or not re.search(r"[A-Za-z]{2,}", SYMBOLS.sub("", text)):
        return None
    return text


def inline_strings(source: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in SHOWN:
            args = node.args[:1] + [k.value for k in node.keywords if k.arg in ("label", "help")]
        elif name in RAISED:
            args = node.args[:1]
        else:
            continue
        found += [(node.lineno, text) for arg in args if (text := inline_english(arg))]
    return found


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, id=p.relative_to(APP).as_posix())
        for p in sorted(APP.rglob("studios/**/*.py"))
    ],
)
def test_pages_pass_no_inline_interface_strings(path):
    assert inline_strings(path.read_text(encoding="utf-8")) == []


def test_the_inline_check_can_fail():
    assert inline_strings('st.caption("Positions down")')
    assert inline_strings('st.slider(f"Beam width (1–{n})", 1, 10)')
    assert inline_strings('c1.number_input(t("x"), 0, 9, help="Any integer")')
    assert inline_strings('raise InputError("Type a sentence")')
    assert not inline_strings('st.markdown(f"### {answer_md}")')
    assert not inline_strings("st.caption(f\"{t('a.b')} · {titles[n]}\")")
    assert not inline_strings('st.selectbox("d_model", choices)')


def test_a_lazy_text_is_read_when_shown():
    """A cached function's spinner, fixed at import, still speaks the reader's language."""
    from streamlit.string_util import clean_text

    spinner = i18n.Lazy("state.spinner_loading")
    assert clean_text(spinner) == "Loading the model…"
    i18n._last = "zh"  # what a Chinese page run leaves behind outside the script
    assert clean_text(spinner) == "正在加载模型…"


# A range written into a label, "(1 … 8)", is a second copy of the widget's bounds; it is
# filled in from the same numbers the widget takes ("({lo} … {hi})"), so it cannot drift.
WRITTEN_RANGE = re.compile(r"[(（]\d[\d.,]*\s*(?:…|–)\s*\d")


# Text that states a range no widget takes: set-up's embedding time ("1–2 minutes").
NOT_A_WIDGET = {"retrieval.text_help"}


def written_ranges(catalog: dict[str, str]) -> list[str]:
    found = {k: v for k, v in catalog.items() if k not in NOT_A_WIDGET}
    return [f"{k}: {v}" for k, v in found.items() if WRITTEN_RANGE.search(v)]


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_no_label_writes_a_range_its_widget_takes(lang):
    assert written_ranges(i18n.catalog(lang)) == []
    found = {"x": "heads (1 … 8)", "y": "头数（1 … 8）", "z": "n ({lo} … {hi})", "w": "(1 – 9 s)"}
    assert written_ranges(found) == ["x: heads (1 … 8)", "y: 头数（1 … 8）", "w: (1 – 9 s)"]


# ---- every t("key", …) call fills the fields its template has ----------------------------

# Templates formatted later, by the queue's progress line, not by t().
DEFERRED = {"learning.live_progress", "alignment.live_progress"}
PLACEHOLDER = re.compile(r"^[a-z][a-z_0-9]*$")


def unfilled_fields(source: str, catalog: dict[str, str]) -> list[str]:
    """``t("key", a=…)`` calls whose keywords are not the template's fields: a field left
    out is shown to the reader as "{lo}", a keyword the template does not use is a copy
    gone stale. A call with no keywords shows the template as written, which is right
    for LaTeX ("$s_{i-1}$") and Plotly ("%{x}") braces but not for a placeholder. A call
    with ``**values`` or a key built at run time is checked where its values are known."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("t", "Lazy")):
            continue
        if not node.args or not isinstance(node.args[0], ast.Constant):
            continue
        key, given = node.args[0].value, {k.arg for k in node.keywords}
        if key not in catalog or key in DEFERRED or None in given:
            continue
        template = catalog[key]
        wanted = fields(template)
        if not given and ("$" in template or "%{" in template):
            continue
        if not given:
            wanted = {f for f in wanted if PLACEHOLDER.match(f)}
        if wanted != given:
            found.append(f"line {node.lineno}: {key} takes {sorted(wanted)}, given {sorted(given)}")
    return found


@pytest.mark.parametrize(
    "path", [pytest.param(p, id=p.relative_to(APP).as_posix()) for p in sorted(APP.rglob("*.py"))]
)
def test_every_message_call_fills_its_fields(path):
    assert unfilled_fields(path.read_text(encoding="utf-8"), i18n.catalog(i18n.DEFAULT)) == []


def test_the_fields_check_can_fail():
    catalog = {"a.range": "block ({lo} … {hi} tokens)", "a.plain": "Run", "a.tex": "$s_{ij}$"}
    assert unfilled_fields('t("a.range")', catalog)
    assert unfilled_fields('t("a.range", lo=1)', catalog)
    assert unfilled_fields('t("a.plain", n=3)', catalog)
    assert not unfilled_fields('t("a.range", lo=1, hi=9)', catalog)
    assert not unfilled_fields('t("a.plain")', catalog)
    assert not unfilled_fields('t("a.tex")', catalog)
    assert not unfilled_fields('t("a.range", **bounds)', catalog)
