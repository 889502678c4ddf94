"""The visual review's checks (bench/screens.py): first that each can fail, on a synthetic
page drawn by the real plotly.js, then a small set of the studio's views.

The studio views assert only what passes today; what still fails is printed (run
``python -m bench.screens`` for the whole gallery), so fixing it needs no edit here.
"""

from pathlib import Path

import plotly
import pytest

from bench import screens
from tests.e2e.support import assert_no_exception

pytestmark = pytest.mark.e2e

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"

# Nine charts: a near-uniform heatmap with two annotations on top of each other; a 300 px
# chart whose title is far wider than it; a clean control; a row label wider than its
# margin; twelve lines whose legend cannot fit 200 px (the clean one's fits); an effect map
# pale on its declared least range (views.causal.EFFECT_FLOOR), which is no finding; a log
# axis over 256 … 4096 that names 1000 alone (the clean charts name several); a note in
# 10-px type and a title whose <sup> flag Plotly draws at 70 % of it, which a projector's
# room cannot read; a 12 × 12 map in 300 px whose numbers plotly.js shrinks to specks. A
# label CSS cuts with an ellipsis, and one it does not; a table wider than its box, and one
# that fits. Two grids of two 4 × 4 maps in 600 × 200 px: one stretched 3:2, one held square
# (Plotly's scaleanchor). Below a 2,000 px spacer, so no figure is on the first screen.
SYNTHETIC = """
<div style="height:2000px">spacer</div>
<div id="uniform" style="width:500px;height:400px"></div>
<div id="narrow" style="width:300px;height:300px"></div>
<div id="clean" style="width:500px;height:400px"></div>
<div id="clipped" style="width:500px;height:300px"></div>
<div id="legend" style="width:500px;height:200px"></div>
<div id="floored" style="width:500px;height:300px"></div>
<div id="scale" style="width:500px;height:300px"></div>
<div id="small" style="width:500px;height:300px"></div>
<div id="cells" style="width:300px;height:300px"></div>
<div id="stretched" style="width:600px;height:200px"></div>
<div id="square" style="width:600px;height:200px"></div>
<p style="width:120px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis">A button's label
 cut by CSS</p>
<p style="width:400px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis">Whole</p>
<div data-testid="stTable"><style>th { color: #222 }</style>
<div style="width:300px;overflow-x:auto"><table><tr>
<th>wide&nbsp;column&nbsp;one</th><th>wide&nbsp;column&nbsp;two</th><th>wide&nbsp;column&nbsp;three</th>
</tr></table></div></div>
<div data-testid="stTable"><div style="width:300px;overflow-x:auto"><table><tr>
<th>fits</th></tr></table></div></div>
<div data-testid="stTable"><div><table><thead><tr><th>model</th><th>AER</th><th>BLEU</th>
<th>decoding</th></tr></thead><tbody>
<tr><td>a</td><td>0.0833</td><td style="text-align:right">92.01</td><td>beam 5</td></tr>
<tr><td>b</td><td>–</td><td style="text-align:right">1,089</td><td>greedy</td></tr>
</tbody></table></div></div>
<script>
const opts = {displayModeBar: false};
Plotly.newPlot("uniform", [{type: "heatmap", z: [[0.50, 0.51], [0.52, 0.50]], zmin: 0, zmax: 1}],
  {title: {text: "uniform"}, annotations: [
    {x: 0, y: 0, text: "overlap one", showarrow: false},
    {x: 0, y: 0, text: "overlap two", showarrow: false},
    {x: 1, y: 1, text: "alone", showarrow: false}]}, opts);
Plotly.newPlot("narrow", [{type: "bar", x: ["a", "b"], y: [1, 2]}],
  {width: 300, title: {text: "A title much wider than the 300 px of its chart, by far"}}, opts);
Plotly.newPlot("clean", [{type: "heatmap", z: [[0, 0.5], [0.8, 1]], zmin: 0, zmax: 1}],
  {title: {text: "clean"}}, opts);
Plotly.newPlot("clipped", [{type: "heatmap", z: [[0, 1], [1, 0]], zmin: 0, zmax: 1,
  y: ["a row label far longer than its margin", "short"], x: ["x", "y"]}],
  {title: {text: "margins"}, margin: {l: 40}, yaxis: {automargin: false}}, opts);
Plotly.newPlot("legend", [...Array(12).keys()].map((i) => ({y: [i, i + 1], name: `line ${i}`})),
  {title: {text: "legend"}, margin: {t: 40, b: 30}}, opts);
Plotly.newPlot("floored", [{type: "heatmap", z: [[-0.004, 0.001], [0, -0.002]], zmin: -0.1,
  zmax: 0.1, meta: {least_range: 0.1}}], {title: {text: "floored"}}, opts);
Plotly.newPlot("scale", [{x: [256, 512, 1024, 2048, 4096], y: [1, 2, 4, 8, 16]}],
  {title: {text: "one label"}, xaxis: {type: "log", dtick: 1}}, opts);
Plotly.newPlot("small", [{y: [1, 2, 3]}], {title: {text: "small type <sup>[a flag]</sup>",
  font: {size: 17}}, annotations: [
  {x: 1, y: 3, text: "a 10-px note", showarrow: false, font: {size: 10}}]}, opts);
const dense = [...Array(12).keys()].map((i) => [...Array(12).keys()].map((j) => (i * j % 7) / 7));
Plotly.newPlot("cells", [{type: "heatmap", z: dense, texttemplate: "%{z:.2f}"}],
  {title: {text: "specks"}}, opts);
const n = (i) => (i === 1 ? "" : i);  // Plotly names the first subplot's axes x, y
const four = dense.slice(0, 4).map((r) => r.slice(0, 4));
const grid = () => [1, 2].map((i) => ({type: "heatmap", z: four, showscale: false,
  xaxis: `x${n(i)}`, yaxis: `y${n(i)}`}));
const held = (on, i) => (on ? {scaleanchor: `x${n(i)}`} : {});
const panels = (on) => Object.assign({margin: {l: 40, r: 10, t: 10, b: 40}},
  ...[1, 2].map((i) => ({
    [`xaxis${n(i)}`]: {domain: [(i - 1) * 0.55, (i - 1) * 0.5 + 0.45], anchor: `y${n(i)}`,
      constrain: "domain"},
    [`yaxis${n(i)}`]: {anchor: `x${n(i)}`, constrain: "domain", ...held(on, i)}})));
Plotly.newPlot("stretched", grid(), panels(false), opts);
Plotly.newPlot("square", grid(), panels(true), opts);
</script>
"""


@pytest.fixture(scope="module")
def synthetic(browser):
    """The checks' answer on the synthetic page (drawn once: plotly.js is 3.5 MB)."""
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    outside = []
    context.route("**/*", lambda r: outside.append(r.request.url) or r.abort())
    page = context.new_page()
    page.set_content(f"<!doctype html><script>{PLOTLY_JS.read_text()}</script>{SYNTHETIC}")
    page.wait_for_function("document.querySelectorAll('.main-svg').length >= 22")
    found = page.evaluate(screens.CHECKS_JS, {"presenter": True})
    context.close()
    assert not outside
    return found


def test_overlapping_labels_are_found_and_separate_ones_are_not(synthetic):
    pairs = {(o["a"], o["b"]) for o in synthetic["overlaps"]}
    assert ("overlap one", "overlap two") in pairs
    assert not any("alone" in pair for pair in pairs)
    assert all(o["chart"].startswith("#1") for o in synthetic["overlaps"]), synthetic["overlaps"]


def test_a_near_uniform_heatmap_is_found_and_a_full_one_is_not(synthetic):
    (panel,) = synthetic["uniform"]  # not the floored effect map (#6): pale by design
    assert panel["chart"].startswith("#1") and panel["scale"] == [0, 1]
    assert panel["share"] == pytest.approx(0.02, abs=1e-3)


def test_a_title_wider_than_its_chart_and_a_label_cut_by_css_are_found(synthetic):
    cut, tick, legend, label, table = synthetic["truncated"]
    assert cut["chart"].startswith("#2") and cut["kind"] == "title"
    assert "px wide in a 300 px chart" in cut["why"]
    assert tick["chart"].startswith("#4") and tick["text"].startswith("a row label far")
    assert tick["why"] == "cut by the chart's edge"  # its margin is narrower than it; "short" fits
    assert legend["chart"].startswith("#5") and legend["kind"] == "legend"
    assert legend["why"] == "a scrolling legend hides entries" and "line 11" in legend["text"]
    assert label["text"] == "A button's label cut by CSS" and label["kind"] == "p"
    # a table whose columns run off its 300 px (the one that fits is none)
    assert table["kind"] == "table" and table["text"].startswith("wide column one")
    assert table["why"].startswith("columns run") and "off the page" in table["why"]


def test_an_axis_that_names_one_value_is_found(synthetic):
    """A log axis over 256 … 4096 labelled at powers of ten names "1000" alone: no scale."""
    assert synthetic["scales"] == [{"chart": "#7 one label", "axis": "xaxis", "labels": ["1000"]}]


def test_a_grid_of_square_maps_drawn_stretched_is_found(synthetic):
    """Two 4 × 4 maps side by side in 600 × 200 px: 3:2 panels; held square, none."""
    found = {(f["chart"].split()[0], f["panel"]) for f in synthetic["stretched"]}
    assert found == {("#10", "xy"), ("#10", "x2y2")}, synthetic["stretched"]
    assert all(w > 1.4 * h for w, h in (f["px"] for f in synthetic["stretched"]))


def test_small_type_on_a_projector_is_found(synthetic):
    """Chart words a room reads under 14 px: the 10-px note, and Plotly's default 12-px
    legend and annotations; a title in Plotly's 17-px default is none, nor is a tick."""
    small = {(f["chart"].split()[0], f["text"]) for f in synthetic["small"]}
    assert ("#8", "a 10-px note") in small
    # the title's 17 px do not hide its <sup> part, 70 % of them (the maps' old flags)
    assert ("#8", "small type [a flag]") in small
    assert ("#5", "line 0") in small and ("#1", "overlap one") in small
    assert not any(chart == "#3" for chart, _ in small)  # the clean chart: its title only
    assert all(f["px"] < 14 for f in synthetic["small"])


def test_numbers_shrunk_to_specks_in_cells_are_found(synthetic):
    """A 12 × 12 map 300 px wide: plotly.js fits its numbers to their cells, in 6-px type.
    One finding for the chart, with its smallest size; the maps without numbers are none."""
    (found,) = synthetic["cells"]
    assert found["chart"] == "#9 specks" and found["numbers"] == 144 and found["px"] < 10


def test_a_column_of_numbers_set_flush_left_is_found(synthetic):
    """A number column with a gap is text to st.table, which set it flush left (Alignment ›
    Measured's AER); a flush-right one, and the words, are none."""
    assert synthetic["ragged"] == [{"column": "AER", "left": 2, "cells": 2}]


def test_a_figure_below_the_fold_breaks_presenter_mode(synthetic):
    presenter = screens.VIEWPORTS["presenter"]
    assert synthetic["first"]["figure"]["top"] >= 2000
    (finding,) = screens.first_screen(synthetic["first"], None, presenter)
    assert "starts at y =" in finding["why"]
    on_screen = dict(synthetic["first"], figure={"kind": "chart", "top": 300})
    assert screens.first_screen(on_screen, None, presenter) == []
    pending = dict(synthetic["first"], pending={"top": 600, "bottom": 900})
    far = {"figure": {"kind": "chart", "top": 1400}, "box_bottom": 1000}
    assert screens.first_screen(pending, far, presenter)  # the revealed map comes too late
    near = {"figure": {"kind": "chart", "top": 1030}, "box_bottom": 1000}
    assert screens.first_screen(pending, near, presenter) == []
    moved = {"figure": {"kind": "chart", "top": 600}, "box_bottom": 0}  # the box went away
    assert screens.first_screen(pending, moved, presenter) == []
    gone = {"figure": None, "box_bottom": 0}
    assert screens.first_screen(pending, gone, presenter)


# No figure: a button that starts the view's work (keyed "…-run"), then a table.
ON_DEMAND = """
<div style="height:300px">intro</div>
<div class="st-key-lab-run"><button>Run the variants</button></div>
<div data-testid="stDataFrame" style="height:200px">a table</div>
"""


def test_a_start_button_is_pressed_like_a_reveal_and_a_lone_table_is_the_figure(browser):
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    page.set_content(f"<!doctype html>{ON_DEMAND}")
    first = page.evaluate(screens.CHECKS_JS, {"presenter": True})["first"]
    context.close()
    assert first["start"]["key"] == "st-key-lab-run" and first["start"]["top"] >= 300
    assert first["figure"]["kind"] == "table"
    presenter = screens.VIEWPORTS["presenter"]
    waiting = dict(first, figure=None)  # the figure comes only after the press
    assert screens.first_screen(waiting, None, presenter) == []
    nothing = {"figure": None, "box_bottom": 340, "pressed": "'Run the variants'"}
    (finding,) = screens.first_screen(waiting, nothing, presenter)
    assert "after pressing 'Run the variants'" in finding["why"]
    drawn = {"figure": {"kind": "chart", "top": 380}, "box_bottom": 340}
    assert screens.first_screen(waiting, drawn, presenter) == []


def test_english_interface_text_in_chinese_is_found():
    english = screens.catalog("en")["reveal.button"]
    assert english != screens.catalog("zh")["reveal.button"]
    runs = [
        {"text": english, "where": "stButton"},
        {"text": screens.catalog("zh")["reveal.button"], "where": "stButton"},
        {"text": "evicted_from", "where": "stTable"},
        {"text": "l' accord sur la zone économique", "where": "stMarkdown"},
        {"text": "模型的 perplexity 更低", "where": "stMarkdown"},  # an English word inside
        {"text": "模型的 MemN2N 更低", "where": "stMarkdown"},  # a name the 中文 text uses too
    ]
    found = [f["text"] for f in screens.untranslated(runs)]
    assert found == [english, "evicted_from", "模型的 perplexity 更低"]


def test_a_widget_that_disagrees_with_its_url_is_found():
    section = screens.url_widgets("chat")[0]
    assert (section.param, section.option_key) == ("section", "chat.section_{}")
    t = screens.catalog("en")
    shown = [
        {"kind": "buttongroup", "label": t["chat.section"], "shown": t["chat.section_sinks"]},
    ]
    agree = "http://x/chat?section=sinks"
    assert screens.widget_disagreements("chat", shown, agree, {"section": "sinks"}, "en") == []
    wrong = screens.widget_disagreements("chat", shown, "http://x/chat?section=cache", {}, "en")
    assert [w["param"] for w in wrong] == ["section"]
    dropped = screens.widget_disagreements("chat", shown, agree, {"section": "heads"}, "en")
    assert dropped[0]["why"] == "asked view not drawn"
    # Two widgets labelled alike (?n= and ?vn=): the one in the URL is the one on screen.
    tokens = t["chat.sweep_n"].format(lo=64, hi=2048)
    assert tokens == t["chat.variants_n"].format(lo=64, hi=2048)
    shown = [{"kind": "numberinput", "label": tokens, "shown": "128"}]
    assert screens.widget_disagreements("chat", shown, "http://x/chat?n=128", {}, "en") == []
    (bad,) = screens.widget_disagreements("chat", shown, "http://x/chat?n=256", {}, "en")
    assert (bad["param"], bad["why"]) == ("n", "number differs")


# The studio itself: each page's default view, as the teacher and the researcher see it.
PAGES = ["home", "basics", "alignment"]
# What these views fail today (measured 2026-12-02); printed, not asserted.
KNOWN = {("home", "presenter"): {"first_screen"}}


@pytest.mark.parametrize("viewport", screens.REVIEWED)
@pytest.mark.parametrize("name", PAGES)
def test_default_views_pass_the_checks(studio_url, page, name, viewport, tmp_path):
    view = screens.View(name, "default")
    result = screens.check_view(page, studio_url, view, screens.VIEWPORTS[viewport], "en", tmp_path)
    print(result.line())
    assert result.error is None, result.error
    assert_no_exception(page)
    assert all((tmp_path / shot).stat().st_size > 10_000 for shot in result.shots)
    if name != "home":
        assert result.charts >= 1
    known = KNOWN.get((name, viewport), set())
    for check, found in result.findings.items():
        if check in known:
            print(f"known: {check} {found}")
        else:
            assert not found, f"{check}: {found}"


def test_the_language_check_fires_on_a_real_page_in_english(studio_url, page):
    """Read as if it were 中文, the English basics page is English throughout: the check must
    say so (on a 中文 page the same runs are translated and it stays quiet)."""
    page.goto(f"{studio_url}/basics")
    screens.settle(page)
    found = page.evaluate(screens.CHECKS_JS, {})
    flagged = {f["text"] for f in screens.untranslated(found["texts"])}
    t = screens.catalog("en")
    assert {t["basics.title"], t["presenter.toggle"]} <= flagged
