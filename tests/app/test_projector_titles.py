"""What a projector shows of a figure's words: a title spans the projector's page (not the
narrowest page's 535 px), and narrows again in a column; a panel's range is never broken
across lines; a second axis names round values."""

import re

import numpy as np
import pytest
from kit import exports, presenter
from kit.fonts import label_px

# At the top, before any test patches kit.presenter.presenting: a view imported while it is
# patched would keep the patch as its own ``presenting`` (``from kit.presenter import …``).
from views import heatmap, memory
from views.heatmap import NARROW_PX, TITLE_FONT, map_grid, panel_tick_px
from views.ledger import ledger_figure
from views.transformer import head_grid
from views.variants_html import map_grid_html

from engine.trace import AttentionMap

LONG = "What the cache holds at each step (yellow: kept; blue: gone), one row a step"


def _lines(text: str) -> list[str]:
    return [re.sub("<[^>]+>", "", x) for x in text.split("<br>")]


@pytest.fixture(params=[False, True], ids=["screen", "projector"])
def on(request, monkeypatch):
    monkeypatch.setattr(heatmap, "presenting", lambda: request.param)
    monkeypatch.setattr(presenter, "presenting", lambda: request.param)
    monkeypatch.setattr(exports, "presenting", lambda: request.param)
    return request.param


def test_a_title_spans_the_page_it_is_drawn_on_and_narrows_in_a_column(on):
    fig = heatmap.figure([dict(type="bar", y=[1, 2])], dict(title=dict(text=LONG), height=300))
    page = presenter.PAGE_PX if on else NARROW_PX
    lines = _lines(fig.layout.title.text)
    assert all(
        label_px([x], TITLE_FONT) <= page - (heatmap.MODEBAR_PX if on else 40) for x in lines
    )
    assert len(lines) == (1 if on else 2)  # 585 px of words: one line presenting, two at 535 px
    top, height = fig.layout.margin.t, fig.layout.height
    column = exports.in_column(fig)
    narrow = _lines(column.layout.title.text)
    assert len(narrow) == 2 and all(label_px([x], TITLE_FONT) <= NARROW_PX - 40 for x in narrow)
    # The plot keeps its room: the second line comes on top, in the margin and the height.
    grown = 24 if on else 0
    assert (column.layout.margin.t, column.layout.height) == (top + grown, height + grown)
    again = exports.in_column(column)  # drawn twice, grown once
    assert (again.layout.margin.t, again.layout.height) == (top + grown, height + grown)


def test_a_maps_flags_keep_their_own_line_and_size_in_a_column(on):
    amap = AttentionMap(np.full((1, 1, 4, 4), 0.25), list("abcd"), list("abcd"), "self")
    fig = exports.in_column(heatmap.map_figure(amap, 0, 0, title=LONG))
    text = fig.layout.title.text
    size = heatmap.PRESENTER_FLAG_PX if on else heatmap.FLAG_PX
    assert f'<span style="font-size:{size}px">' in text.split("<br>")[-1]
    assert "<sup>" not in text


def test_a_panels_range_is_never_split_across_lines():
    """A browser may break a line after an en dash: a projector's narrow panel printed "0–"
    on one line and "0.17" on the next. A word joiner holds the range together."""
    w = np.random.default_rng(0).dirichlet(np.ones(40), size=40)[None, None]
    labels = [f"t{i}" for i in range(40)]
    amap = AttentionMap(w, labels, labels, "self")
    grid = map_grid_html(
        [dict(z=amap.weights[0, 0], x=labels, y=labels, title="big–bird", flags=amap.flags)]
    )
    (title,) = re.findall(r'<div class="kit-vgrid-title">([^<]+)</div>', grid)
    assert re.search(r"· 0–\u2060[\d.]+$", title), title
    assert title.startswith("big–\u2060bird") and "–" not in title.replace("–\u2060", "")


class _Ledger:
    mass = [0.07, 0.05, 0.3, 0.2]
    kl = [0.3, 2.51, 0.2, 1.7]
    first_divergence = 1
    policy = {"name": "window"}


def test_the_ledgers_kl_axis_names_round_values_not_the_other_axiss_grid():
    """plotly.js syncs an overlaying axis's ticks to the other's grid by default: KL read
    0.503, 1.005, 2.513."""
    fig = ledger_figure(_Ledger())
    assert fig.layout.yaxis2.tickmode == "auto" and fig.layout.yaxis2.overlaying == "y"
    assert [s.type for s in fig.layout.shapes] == ["line"] and fig.layout.shapes[0].x0 == 2


def test_a_colour_bars_numbers_take_the_projectors_type():
    """A grid of heads puts its one bar on a colour axis that no view sized: its α ticks
    were 11 px on the projector."""
    w = np.random.default_rng(0).dirichlet(np.ones(6), size=(2, 3, 6))
    amap = AttentionMap(w, list("abcdef"), list("abcdef"), "self")
    grid = presenter.restyle(head_grid(amap, "heads"))
    assert grid.layout.coloraxis.colorbar.tickfont.size == presenter.TICK_PX
    assert grid.layout.coloraxis.colorbar.title.font.size == presenter.AXIS_TITLE_PX
    plain = presenter.restyle(heatmap.figure([dict(type="heatmap", z=[[0, 1]])], {}))
    assert plain.data[0].colorbar.tickfont.size == presenter.TICK_PX
    hidden = presenter.restyle(
        heatmap.figure([dict(type="heatmap", z=[[0, 1]], showscale=False)], {})
    )
    assert hidden.data[0].colorbar.tickfont.size is None  # no bar, nothing added


def test_a_grids_panel_ticks_take_the_projectors_type_and_still_fit(on):
    """A grid's panel ticks were 12 px on a projector too; at 14 they are thinned for 14."""
    n = 40
    w = np.random.default_rng(0).dirichlet(np.ones(n), size=(1, 4, n))
    labels = [str(i) for i in range(n)]
    fig = map_grid(AttentionMap(w, labels, labels, "self"), columns=2)
    size = panel_tick_px()
    assert size == (14 if on else 12)
    axes = [a for name, a in fig.layout.to_plotly_json().items() if name.startswith("xaxis")]
    assert len(axes) == 4
    for axis in axes:
        assert axis["tickfont"]["size"] == size
        # at least the panel's px: the grid is laid out for its width on this screen
        side = (axis["domain"][1] - axis["domain"][0]) * heatmap.drawn_px(NARROW_PX)
        assert len(axis["tickvals"]) * (size + 4) <= side + size + 4


def test_a_projector_shows_a_facts_whole_sentence_on_every_map_of_facts(on, monkeypatch):
    """Memory › Is it faithful? cut "John went to the bedroom." to "John went to the be…" on a
    projector, where the hops map beside it showed it whole."""
    monkeypatch.setattr(memory, "presenting", lambda: on)
    (label,) = memory.sentence_labels(["Sandra journeyed to the garden."], [0])
    assert label.endswith("Sandra journeyed to the garden.") == on
    assert on or label.endswith("Sandra journeyed to…")  # 20 characters


def test_a_grid_of_panels_side_by_side_keeps_its_labels_on_a_projector(monkeypatch):
    """Three panels in one row are three y axes on one row: counted as three rows of the
    projector's 18-px type, the Alignment faithfulness grid's 15 target words (every other
    one shown, as the view fitted them at 14 px) were cut to every fourth."""
    monkeypatch.setattr(heatmap, "presenting", lambda: True)
    monkeypatch.setattr(presenter, "presenting", lambda: True)
    words = [f"w{i}" for i in range(15)]
    panels = [
        dict(z=np.random.default_rng(0).random((15, 15)), x=words, y=words, title=n) for n in "abc"
    ]
    width = int(heatmap.drawn_px(NARROW_PX))
    fig = map_grid(panels, columns=3, width_px=width)
    drawn = fig.layout.yaxis.tickvals
    assert len(drawn) >= 8  # the view's own fit at 14 px
    shown = presenter.restyle(fig).layout
    assert [shown[f"yaxis{i}" if i > 1 else "yaxis"].tickvals for i in (1, 2, 3)] == [drawn] * 3
    stacked = dict(height=300, margin=dict(t=20, b=20), yaxis=dict(tickvals=words, domain=[0, 0.5]))
    thinned = presenter.restyle(heatmap.figure([], dict(stacked, yaxis2=dict(domain=[0.5, 1]))))
    # A stacked axis has its half: 6 lines of 18-px type fit, so every third of 15 words.
    assert thinned.layout.yaxis.tickvals == tuple(words[::3])
