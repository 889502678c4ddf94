"""The map vocabulary's promises: a map's kind picks its colour scale, panels stay readable,
ticks fit, log axes name decades, bars start at 0, titles wrap."""

import numpy as np
import pytest
from kit import i18n, presenter
from kit.fonts import label_px
from views import chat, heatmap, learning, timeline, variants, variants_quality
from views.heatmap import MIN_PANEL_PX, NARROW_PX, TICK_FONT, map_figure, map_grid
from views.transformer import head_grid
from views.variants_html import map_grid_html

from engine.trace import AttentionMap


def softmax_map(n=12, heads=2, seed=0, sharp=4.0) -> AttentionMap:
    rng = np.random.default_rng(seed)
    w = np.exp(sharp * rng.standard_normal((1, heads, n, n)))
    labels = [f"word{i}" for i in range(n)]
    return AttentionMap(w / w.sum(-1, keepdims=True), labels, labels, "self")


def implied_map(n=12, top=5.17) -> AttentionMap:
    w = np.random.default_rng(1).uniform(0, top, (1, 1, n, n))
    labels = [f"word{i}" for i in range(n)]
    return AttentionMap(w, labels, labels, "self", exact=False, implied=True, normalized=False)


def panel_px(fig, axis) -> float:
    """A panel's width in a figure its layout's width (else NARROW_PX) wide: Plotly's plot
    area is the figure less its margins and the colour bar, which it moves the plot's edge
    in for (not for a bar placed inside it, beside panels that leave it room)."""
    bars = [d for d in fig.data if getattr(d, "showscale", False)]
    outside = bars and bars[0].colorbar.x is None
    bar = heatmap.bar_px(dict(title=dict(text=bars[0].colorbar.title.text))) if outside else 0
    margin = fig.layout.margin
    width = fig.layout.width or NARROW_PX
    return (axis["domain"][1] - axis["domain"][0]) * (width - margin.l - margin.r - bar)


def panel(amap: AttentionMap, title: str) -> dict:
    x, y = amap.key_labels, amap.query_labels
    return dict(z=amap.weights[0, 0], x=x, y=y, title=title, flags=amap.flags)


def test_softmax_map_is_drawn_from_0_to_1_or_to_its_printed_max():
    trace = map_figure(softmax_map(), title="full").data[0]
    assert (trace.zmin, trace.zmax) == (0.0, 1.0)
    assert not trace.reversescale
    flat = softmax_map(n=100, sharp=0.1)  # weights ≈ 1/100: a 0–1 scale would be one colour
    fig = map_figure(flat, title="flat")
    top = float(flat.weights[0, 0].max())
    assert fig.data[0].zmin == 0 and fig.data[0].zmax == pytest.approx(top)
    assert f"0–{top:.2g}" in fig.layout.title.text


@pytest.mark.parametrize("amap", [implied_map(), implied_map(top=0.9)])
def test_implied_maps_get_their_own_diverging_scale_never_alpha(amap):
    trace = map_figure(amap, title="retnet").data[0]
    top = float(amap.weights.max())
    assert (trace.zmin, trace.zmax) == pytest.approx((-top, top))
    assert trace.colorbar.title.text not in ("α", "")


def test_signed_values_are_diverging_even_without_a_flag():
    amap = softmax_map()
    diff = amap.weights[0, 0] - amap.weights[0, 1]
    trace = map_figure(amap, z=diff, title="difference", value_name="Δα").data[0]
    assert trace.zmin == -trace.zmax and trace.colorbar.title.text == "Δα"


@pytest.mark.parametrize("on", [False, True])
def test_a_grids_panel_titles_take_the_projectors_type_and_their_room(monkeypatch, on):
    """A panel's title ("layer 0 · head 0") was 13 px on a projector; it is 16 there now,
    and each row of panels leaves its title's lines in that type above the maps."""
    monkeypatch.setattr(heatmap, "presenting", lambda: on)
    size = heatmap.PRESENTER_PANEL_TITLE_PX if on else heatmap.PANEL_TITLE_PX
    title = "a long title that wraps over two lines in a narrow panel"
    panels = [panel(softmax_map(n=40, seed=i), f"{title} {i}") for i in range(4)]
    fig = map_grid(panels)
    notes = [a for a in fig.layout.annotations if a.text.startswith("a long")]
    assert len(notes) == 4 and {a.font.size for a in notes} == {size}
    lines = max(a.text.count("<br>") + 1 for a in notes)
    assert lines >= 2
    # the band between the first row's maps and the plot's top holds the title's lines
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    room_px = (1 - fig.layout.yaxis.domain[1]) * plot_px
    assert room_px >= lines * round(heatmap.PANEL_TITLE_LINE_EM * size) - 0.5


def test_a_grid_never_shares_one_scale_across_kinds():
    soft, retnet = softmax_map(), implied_map()
    fig = map_grid([panel(soft, "full"), panel(retnet, "retnet")])
    first, second = fig.data
    assert (first.zmin, first.zmax) == (0.0, 1.0)
    assert second.zmin < 0 and second.zmax == pytest.approx(float(retnet.weights.max()))
    assert "±" in fig.layout.annotations[1].text  # the implied panel prints its range
    assert second.colorbar.title.text != "α"
    page = map_grid_html([panel(soft, "full"), panel(retnet, "retnet")])
    assert "1 α" in page and "±" in page


def test_the_head_grid_draws_each_kind_on_its_own_scale():
    soft = head_grid(softmax_map(heads=3), "self").layout.coloraxis
    assert (soft.cmin, soft.cmax, soft.colorbar.title.text) == (0, 1, "α")
    amap = implied_map()
    implied = head_grid(amap, "retnet")
    top = float(amap.weights.max())
    axis = implied.layout.coloraxis
    assert (axis.cmin, axis.cmax) == pytest.approx((-top, top)) and axis.reversescale
    assert axis.colorbar.title.text not in ("α", "") and f"±{top:.3g}" in implied.layout.title.text
    assert "α =" not in implied.data[0].hovertemplate


def test_the_head_grids_colour_bar_is_a_grid_of_maps_bar_not_the_plots_height():
    """MiniLM's 6 × 12 grid: the bar ran the whole 900-px plot and Plotly labelled it every
    0.05, nineteen numbers beside the maps; now as long as map_grid's (300 px at most) with
    a label per 40 px of it, both ends named."""
    w = np.full((6, 12, 8, 8), 1 / 8)
    labels = [f"w{i}" for i in range(8)]
    fig = head_grid(AttentionMap(w, labels, labels, "self"), "self")
    plot_h = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    bar = fig.layout.coloraxis.colorbar
    assert plot_h > 600 and bar.len * plot_h <= 300
    ticks = len(bar.tickvals) if bar.tickvals else bar.nticks  # the map's own range, or 0–1
    assert ticks is not None and ticks <= 300 // 40


def test_a_grid_of_one_head_per_layer_lays_the_layers_across():
    """The mean over heads or rollout: two layers of one head each stood one above the
    other, each tile the page's width, two screens tall."""
    w = np.full((3, 1, 6, 6), 1 / 6)
    labels = [f"w{i}" for i in range(6)]
    amap = AttentionMap(w, labels, labels, "self", layer_labels=("R1", "R2", "R3"))
    fig = head_grid(amap, "rollout")
    z = np.asarray(fig.data[0].z, dtype=float)
    assert z.shape == (6, 3 * 6 + 2)  # one row of three tiles, a blank column between
    above = [a.text for a in fig.layout.annotations if a.yanchor == "bottom"]
    assert above == ["R1", "R2", "R3"] and fig.layout.height <= 500
    grid = head_grid(softmax_map(heads=3), "self")  # several heads: layers down, heads across
    assert np.asarray(grid.data[0].z).shape == (12, 3 * 12 + 2)


@pytest.mark.parametrize("n_panels", [1, 4, 22])
def test_panels_are_never_narrower_than_the_minimum_at_1024(n_panels):
    fig = map_grid([panel(softmax_map(n=40, seed=i), f"v{i}") for i in range(n_panels)])
    layout = fig.layout.to_plotly_json()
    widths = [panel_px(fig, a) for k, a in layout.items() if k[:5] == "xaxis"]
    assert len(widths) == n_panels and min(widths) >= MIN_PANEL_PX
    html = map_grid_html([panel(softmax_map(), "a")] * 8)
    assert f"minmax(max(min({MIN_PANEL_PX + 56}px, 100%)" in html  # never wider than the page


def test_learning_head_panels_and_the_live_figure_are_readable():
    maps = softmax_map(n=41, heads=2).weights
    maps = np.concatenate([maps, maps])  # [2 layers, 2 heads, 41, 41]
    for fig in (
        learning.head_maps_figure(maps, "step 100"),
        learning.live_figure(np.array([0, 10, 100]), np.array([3.0, 2.0, 1.0]), maps[0], 1, "x"),
    ):
        heat = [d for d in fig.data if d.type == "heatmap"]
        for i, _ in enumerate(heat, start=1):
            axis = fig.layout[f"xaxis{'' if i == 1 else i}"]
            assert panel_px(fig, axis) >= MIN_PANEL_PX


def test_a_grid_grows_a_little_taller_to_name_every_row(monkeypatch):
    """On a projector Is it faithful?'s three 14 × 15 panels were 235 px square: 15.7 px a
    row where a 14-px label needs 18, so every other French word went unnamed. A panel now
    grows up to 1.2 × its width where that names every row, its scale still tied to x."""
    monkeypatch.setattr(heatmap, "presenting", lambda: True)
    monkeypatch.setattr(presenter, "presenting", lambda: True)
    rng = np.random.default_rng(0)
    src, tgt = [f"en{i}" for i in range(14)], [f"fr{i}" for i in range(15)]
    panels = [dict(z=rng.uniform(size=(15, 14)), x=src, y=tgt, title=k) for k in "abc"]
    fig = map_grid(panels, columns=3, value_name="row scaled 0–1")
    x, y = fig.layout.xaxis, fig.layout.yaxis
    width = panel_px(fig, x)
    height = (y.domain[1] - y.domain[0]) * (fig.layout.height - fig.layout.margin.t - 10)
    assert list(y.tickvals) == tgt  # every row named
    assert width < height <= 1.2 * width + 1
    assert y.scaleratio == pytest.approx(14 / 15 * height / width, rel=0.01)
    square = map_grid([dict(p, y=tgt[:14], z=p["z"][:14]) for p in panels], columns=3)
    assert square.layout.yaxis.scaleratio == 1  # rows that fit keep the square


@pytest.mark.parametrize("on", [False, True])
def test_a_grids_positions_lie_level_and_its_words_stand(monkeypatch, on):
    """The Learning page's positions (0 … 40) stood on end in every panel, read sideways
    on a projector: level, each with its gap in the columns between two shown; a
    sentence's words stay upright (level, too few of them would be named)."""
    monkeypatch.setattr(heatmap, "presenting", lambda: on)
    monkeypatch.setattr(presenter, "presenting", lambda: on)
    maps = softmax_map(n=41, heads=2).weights
    fig = learning.head_maps_figure(np.concatenate([maps, maps]), "step 100")
    x, side = fig.layout.xaxis, panel_px(fig, fig.layout.xaxis)
    labels = [str(i) for i in range(41)]
    assert x.tickangle == 0 and len(x.tickvals) >= 4
    step = labels.index(x.tickvals[1])
    assert step in (1, 2, 5, 10, 20)  # every 5th or 10th, as numbers are read
    assert side * step / 41 >= label_px(x.ticktext, x.tickfont.size) + heatmap.FLAT_GAP_PX
    words = map_grid([panel(softmax_map(n=14), "a"), panel(softmax_map(n=14), "b")])
    assert words.layout.xaxis.tickangle == -90


@pytest.mark.parametrize("on", [False, True])
def test_short_column_labels_lie_level_where_each_fits_its_column(monkeypatch, on):
    """Three hops ("hop 1") and nine query heads ("KV0 · H0") stood on end, read sideways
    on a projector in columns 90 px wide; level where each fits its column with a gap, and
    words that do not fit never level."""
    monkeypatch.setattr(heatmap, "presenting", lambda: on)
    z = np.linspace(0, 1, 30 * 9).reshape(30, 9)
    hop_labels = ["hop 1", "hop 2", "hop 3"]
    hops = heatmap.heatmap(z[:4, :3], hop_labels, list("abcd"))
    # 中文 in the Memory page's column: the bar reckoned a flat 110 px (70 drawn) stood
    # "第 1 跳" on end on a projector, in columns 90 px wide (and at 1024 px)
    zh_labels = ["第 1 跳", "第 2 跳", "第 3 跳"]
    hops_px, training_px = heatmap.column_px(2 / 3), heatmap.column_px(0.6)
    zh = heatmap.heatmap(z[:4, :3], zh_labels, list("abcd"), width_px=hops_px)
    # Memory › Training's 3:2 column, beside its sentences: reckoned 488 px of the 557 drawn
    sentences = ["★ 1. John went to the bedroom.", "2. Sandra went to the kitchen."]
    training = heatmap.heatmap(z[:2, :3], zh_labels, sentences, width_px=training_px)
    assert hops.layout.xaxis.tickangle == 0 and zh.layout.xaxis.tickangle == 0
    assert training.layout.xaxis.tickangle == (0 if on else -90)
    for fig, labels, px in (
        (hops, hop_labels, NARROW_PX),
        (zh, zh_labels, hops_px),
        (training, zh_labels, training_px),
    ):
        layout = fig.layout
        if layout.xaxis.tickangle == 0:  # each label and its gap within its column
            bar = heatmap.bar_px(fig.data[0].colorbar.to_plotly_json())
            width = heatmap.drawn_px(px)
            column = (width - layout.margin.l - layout.margin.r - bar) / len(labels)
            assert column >= label_px(labels, layout.xaxis.tickfont.size) + 12
            assert layout.margin.b == heatmap.FLAT_BAND_PX  # one line and the axis title
    words = ["attention", "is", "all", "you", "need", "and", "a", "little", "bit", "more"] * 2
    assert heatmap.heatmap(np.eye(20), words, words).layout.xaxis.tickangle != 0


@pytest.mark.parametrize("on", [False, True])
def test_layer_head_maps_run_layers_across_and_a_map_fits_a_projector(monkeypatch, on):
    """Chat's 30 layers × 9 heads stood a row per layer: a 900-px map on a 768-px projector,
    its first screen layers 0–10, all dark, the induction heads of L17–18 below. Layers run
    across now (as the per-layer lines beside them), named level at every 2nd, 5th or 10th;
    every map on a projector fits its screen (the logit lens's 31 rows), on a screen as before."""
    from views import causal

    monkeypatch.setattr(heatmap, "presenting", lambda: on)
    z = np.random.default_rng(0).random((30, 9))
    layers = [str(i) for i in range(30)]
    sinks = chat.layer_head_figure(z, 3, "sink mass", "mass")
    grid = chat.head_grid_figure(z, 3, "induction", "score")
    ablation = causal.ablation_figure({"delta_log_prob": z - 0.5, "mode": "zero", "answer": "x"}, 3)
    patching = causal.patching_figure(
        {"metric": z, "what": "heads", "clean_diff": 1.0, "corrupted_diff": 0.0}, 9, 3
    )
    for fig in (sinks, grid, ablation, patching):
        cells, x = fig.data[0], fig.layout.xaxis
        assert list(cells.x) == layers and list(cells.y) == chat.head_labels(9, 3)
        assert x.tickangle == 0 and x.tickvals[0] == "0"
        step = layers.index(x.tickvals[1])
        assert step in (1, 2, 5, 10)  # as a numeric axis is read
        bar = heatmap.bar_px(cells.colorbar.to_plotly_json())
        column = (heatmap.drawn_px(NARROW_PX) - fig.layout.margin.l - 10 - bar) / 30
        assert step * column >= label_px(x.ticktext, x.tickfont.size) + heatmap.FLAT_GAP_PX
    assert np.allclose(np.asarray(sinks.data[0].z), z.T.round(3))
    points = grid.data[1]  # the clickable centres: point i is layer i // 9, head i % 9
    for i in (0, 31, 269):
        layer, head = points.customdata[i]
        assert (layer, head) == divmod(i, 9) and points.x[i] == str(layer)
        assert points.y[i] == chat.head_labels(9, 3)[head]
        assert points.marker.color[i] == pytest.approx(z[layer, head], abs=1e-3)
    small = causal.ablation_figure(
        {"delta_log_prob": z[:2, :4], "mode": "zero", "answer": "x"}, None
    )
    assert list(small.data[0].y) == ["L0", "L1"]  # the Transformer's 2 layers down, as its grid
    lens = causal.lens_figure({"prob": z[:, :1].repeat(31, 0)[:31], "targets": ["a"]})
    assert (lens.layout.height <= heatmap.PRESENTER_MAP_PX) if on else lens.layout.height >= 900


@pytest.mark.parametrize("on", [False, True])
def test_grid_panels_stay_square_and_a_projector_gets_every_head_in_a_row(monkeypatch, on):
    """Laid out for 535 px, the Learning page's maps were drawn 3:1 on a 1440-px page (the
    induction stripes flattened), and on a projector a row per layer put layer 1's
    induction heads below the first screen, their colour bar 200 px away."""
    monkeypatch.setattr(heatmap, "presenting", lambda: on)
    maps = np.stack([softmax_map(n=41, seed=s).weights[0] for s in range(2)])  # [2, 2, 41, 41]
    fig = learning.head_maps_figure(maps, "step 100")
    heat = [d for d in fig.data if d.type == "heatmap"]
    for i, trace in enumerate(heat, start=1):
        suffix = "" if i == 1 else str(i)
        x, y = fig.layout[f"xaxis{suffix}"], fig.layout[f"yaxis{suffix}"]
        # square on any page: y's scale tied to x's, the domain shrinking, not the range
        assert (y.scaleanchor, x.constrain, y.constrain) == (f"x{suffix}", "domain", "domain")
        assert y.scaleratio == len(trace.x) / len(trace.y)
    # drawn the width it is laid out for (kit.exports.chart: width="content"), not stretched
    assert fig.layout.width == int(heatmap.drawn_px(NARROW_PX))
    tops = {round(fig.layout[f"yaxis{'' if i == 1 else i}"].domain[1], 6) for i in (1, 2, 3, 4)}
    assert len(tops) == (1 if on else 2)  # one row of four on a projector, a row per layer
    # the colour bar beside the last panel: inside the plot where the panels leave room,
    # else right of a plot the panels fill
    bar = next(d for d in heat if d.showscale).colorbar
    right = max(fig.layout[f"xaxis{'' if i == 1 else i}"].domain[1] for i in (1, 2, 3, 4))
    assert right < bar.x < right + 0.05 if bar.x is not None else right > 0.97
    one = map_grid([panel(softmax_map(n=41), "one")])  # 320 px at most: room beside it
    assert one.data[0].colorbar.x == pytest.approx(one.layout.xaxis.domain[1], abs=0.05)


def test_token_ticks_are_thinned_to_what_fits():
    amap = softmax_map(n=60)
    fig = map_grid([panel(amap, "a"), panel(amap, "b")])
    axis = fig.layout.xaxis
    side = panel_px(fig, axis)
    assert 0 < len(axis.tickvals) < 60
    assert len(axis.tickvals) * (TICK_FONT + 4) <= side + TICK_FONT + 4
    # one map: plotly.js thins its labels for the width the page really gives it (the
    # browser tests measure that they stand apart); here, that nothing fixes them
    single = map_figure(amap, title="a").layout
    assert single.xaxis.tickangle == -90 and single.xaxis.tickmode == "auto"
    assert single.yaxis.tickmode == "auto" and single.xaxis.tickvals is None


def _log_axes(fig):
    spec = fig.to_plotly_json()["layout"]
    return [a for k, a in spec.items() if k[1:5] == "axis" and a.get("type") == "log"]


def test_log_axes_name_decades_only():
    rows = [
        dict(variant=v, n=n, median_s=n * 1e-6 * (i + 1), peak_mib=n / 100)
        for i, v in enumerate(("full", "linear"))
        for n in (256, 1024, 4096, 16384)
    ]
    cost = [
        dict(variant=v, flops=f, accuracy=a, min=a - 0.1, max=a + 0.05)
        for v, f, a in (("full", 1e9, 0.9), ("flash", 1.1e9, 0.9), ("linear", 1e7, 0.3))
    ]
    figs = [
        variants.loglog_figure(rows, "median_s", title="time", y_title="s"),
        variants.accuracy_cost_figure(cost, "flops", title="cost", x_title="FLOPs"),
        learning.live_figure(
            np.array([0, 10, 100]), np.array([3.0, 2.0, 1.0]), np.eye(4)[None], 0, "x"
        ),
    ]
    for fig in figs:  # decades, or the values a reader needs: never Plotly's 2, 3 … 9
        axes = _log_axes(fig)
        assert axes and all(a.get("dtick") == 1 or a.get("tickvals") for a in axes)
    lengths = _log_axes(figs[0])[0]  # 256 … 16384: one decade's label would name 1000 alone
    assert list(lengths["tickvals"]) == [256, 1024, 4096, 16384]
    assert list(lengths["ticktext"]) == ["256", "1024", "4096", "16384"]


def test_point_labels_are_in_the_legend_not_piled_on_the_points():
    cost = [dict(variant=v, flops=1e9, accuracy=0.9, min=0.85, max=0.95) for v in ("flash", "full")]
    fig = variants.accuracy_cost_figure(cost, "flops", title="cost", x_title="FLOPs")
    assert all("text" not in d.mode for d in fig.data)
    names = [d.name for d in fig.data]  # one legend entry per point, whatever it is called
    assert len(names) == 2 and all(names) and len(set(names)) == 2
    rows = [
        dict(variant=v, task="mqar-256", kind=k, state_bytes=b, mean=0.5, accuracy=[0.4, 0.6])
        for v, k, b in (("full", "grows", 4096), ("mamba", "fixed", 4096))
    ]
    fig = variants_quality.recall_state_figure(rows, 1 / 64)
    assert all("text" not in (d.mode or "") for d in fig.data)


def test_accuracy_axes_name_quarters_and_the_charts_grow_by_their_legends():
    """In presenter mode the accuracy-vs-cost axis named 1.1, an accuracy no model reaches;
    with 23 variants its legend below took the plot's height. Every accuracy axis of the
    Variants lab now names 0 … 1 by quarters, and each chart grows by its legend's rows."""
    few, many = ("full", "linear"), [f"variant {i}" for i in range(23)]
    heights = []
    for names in (few, many):
        cost = [
            dict(variant=v, ms=10.0 + i, accuracy=0.5, min=0.4, max=0.6)
            for i, v in enumerate(names)
        ]
        fig = variants.accuracy_cost_figure(cost, "ms", title="cost", x_title="ms")
        assert list(fig.layout.yaxis.tickvals) == [0, 0.25, 0.5, 0.75, 1]
        heights.append(fig.layout.height)
    assert heights[1] > heights[0]
    rows = [
        dict(
            variant=v,
            task="mqar-256",
            n=256,
            width=w,
            kind="grows",
            state_bytes=w * 64,
            mean=0.5,
            accuracy=[0.4, 0.6],
        )
        for v in ("full", "mamba")
        for w in (32, 64)
    ]
    for fig in (
        variants_quality.recall_state_figure(rows, 1 / 64),
        variants_quality.width_figure(rows),
    ):
        assert list(fig.layout.yaxis.tickvals) == [0, 0.25, 0.5, 0.75, 1]


def test_bars_start_at_zero():
    ran = [
        dict(variant=v, ppl=p, ppl_full=19.0, n_tokens=100)
        for v, p in (("full", 19.0), ("longformer", 21.5))
    ]
    axis = chat.variants_figure(ran, {"full": "full", "longformer": "Longformer"}).layout.xaxis
    assert axis.type != "log" and axis.rangemode == "tozero"


def test_titles_wrap_instead_of_running_off_a_1024_figure():
    long = "Next-token probabilities after the query token, mean over the 9 heads of layer 12"
    fig = heatmap.heatmap(np.eye(3), "abc", "abc", title=long, flags=["exact"])
    lines = fig.layout.title.text.split("<br>")
    assert len(lines) >= 2 and "".join(lines).replace("<sup>", "").startswith("Next")
    assert all(label_px([x], heatmap.TITLE_FONT) <= NARROW_PX - 40 for x in lines[:-1])


def test_pooled_is_the_block_mean_and_says_so():
    amap = softmax_map(n=70, heads=1)
    small = amap.pooled(32)
    assert small.shape == (1, 1, 24, 24) and small.pooling == 3
    assert "pooled ×3" in small.flags and small.key_labels[0] == "0–2"
    assert small.weights[0, 0, 0, 0] == pytest.approx(amap.weights[0, 0, :3, :3].mean())
    assert amap.pooled(128) is amap


def test_one_markdown_escaper_makes_text_inert():
    assert i18n.md_escape("[link](http://x) *b* <i>") == (r"\[link\]\(http\://x\) \*b\* \<i\>")


def test_a_wrapped_title_hangs_from_the_top_and_stays_clear_of_the_plot():
    """Plotly centres a title's first line in the top margin: a wrapped one reached down onto
    the top y tick ("1" under "…by layer (StreamingLLM's figure"). Hung from the figure's top,
    its last line ends above the plot by more than half a tick label."""
    long = (
        "Attention to the first token by layer (StreamingLLM's figure; mean over heads and queries)"
    )
    fig = chat.lines_figure(range(3), {"a": [0.1, 0.5, 0.9]}, long, "layer", "mass", y_range=(0, 1))
    title = fig.layout.title
    lines = title.text.count("<br>") + 1
    assert lines >= 2 and (title.yref, title.y, title.yanchor) == ("container", 1, "top")
    bottom = title.pad.t + lines * 1.3 * heatmap.TITLE_FONT  # plotly.js: 1.3 em a line
    assert fig.layout.margin.t - bottom >= 0.5 * max(heatmap.FONT["size"], 18)


@pytest.mark.parametrize("size", [timeline.LEGEND_FONT, timeline.PRESENTER_FONT])
def test_the_curves_legend_has_its_own_band_above_the_panel_titles(size):
    """The training curves' legend sat over the first panel's title ("training (batch mean)"
    on "Loss per target word"): it now takes rows of its own at the top of the figure, as
    many as its entries need at the narrowest column, and the titles start below them; on a
    projector the legend and the titles are 16 px (13 read small from the back), the rows
    counted and spaced in that type."""
    lines = {"training (batch mean)": ([0, 10], [3.0, 1.0]), "held-out": ([0, 10], [3.1, 1.2])}
    accuracy = {"exact match": ([0, 10], [0, 0.5]), "AER": ([0, 10], [0.9, 0.1])}
    panels = [("Loss per target word", lines), ("Accuracy and AER", accuracy)]
    for width in (300, timeline.COLUMN_PX, 900):
        fig = timeline.curves_figure(panels, 10, (), "step", 150, width_px=width, type_px=size)
        legend, top = fig.layout.legend, fig.layout.margin.t
        assert (legend.yref, legend.y, legend.yanchor) == ("container", 1, "top")
        assert legend.font.size == size
        names = [d.name for d in fig.data if d.showlegend]
        rows = timeline.legend_rows(names, width - 60, size)
        assert rows >= 1 + (width < 500)  # four entries do not fit one row of a column
        legend_bottom = rows * timeline.LEGEND_ROW_EM * size + 8
        title = next(a for a in fig.layout.annotations if a.text == "Loss per target word")
        assert title.yanchor == "bottom" and title.y == pytest.approx(1)
        assert title.font.size == size
        # the title's band (its line and a little air) starts below the legend's rows
        assert legend_bottom <= top - timeline.NOTE_EM * size + 0.5
        # Each row holds what fits: the estimate never packs more than the width.
        assert timeline.legend_rows(names, 10_000, size) == 1


def test_the_curves_take_the_projectors_type_when_presenting(monkeypatch):
    lines = {"loss": ([0, 10, 40_000], [3.0, 2.0, 1.0])}
    for on, size in ((False, timeline.LEGEND_FONT), (True, timeline.PRESENTER_FONT)):
        monkeypatch.setattr(timeline, "presenting", lambda on=on: on)
        fig = timeline.curves_figure([("loss", lines)], 10, [("kept", 40_000)], "step")
        assert fig.layout.legend.font.size == size
        sizes = {a.text: a.font.size for a in fig.layout.annotations}
        assert sizes == {"loss": size, "kept": size - 1}


def test_presenter_mode_never_squeezes_a_figure():
    """A map grid lays its tick and title bands out in px: presenter mode may make a short
    figure taller, never a tall one shorter (the learning page's head grid, capped at 480 px,
    put layer 0's x ticks on layer 1's panel titles)."""
    grid = learning.head_maps_figure(np.random.default_rng(0).random((2, 2, 48, 48)), "t")
    assert grid.layout.height > presenter.MAX_HEIGHT
    assert presenter.restyle(grid).layout.height == grid.layout.height
    short = heatmap.heatmap(np.eye(3), "abc", "abc", height=300)
    assert short.layout.height < presenter.restyle(short).layout.height <= presenter.MAX_HEIGHT


def test_named_steps_never_print_on_each_other():
    """Two named steps close together (MemN2N's "linear start ends" and "kept") each get a
    row of their own, written toward the plot's middle (a label right of a line near the
    right edge ran off the figure)."""
    lines = {"loss": ([0, 10, 40_000, 47_000], [3.0, 2.0, 1.0, 0.9])}
    marks = [("linear start ends", 40_000), ("kept", 47_000), ("warm-up", 10)]
    fig = timeline.curves_figure([("loss", lines)], 47_000, marks, "step")
    named = [a for a in fig.layout.annotations if a.text in dict(marks)]
    assert len({a.yshift or 0 for a in named}) == len(marks)
    sides = {a.text: a.xanchor for a in named}
    assert sides == {"linear start ends": "right", "kept": "right", "warm-up": "left"}


def test_rows_numbered_from_the_top_keep_their_sizes():
    top, bottom = heatmap.cell_domains([0.12, 0.88], 0.08, reverse=True)
    assert top[0] > bottom[1] and top[1] == 1.0
    assert top[1] - top[0] == pytest.approx(0.12 * 0.92) and bottom[0] == 0.0


def test_a_blank_token_is_drawn_and_its_repeats_are_not_bare_numbers():
    weights = np.full((1, 1, 3, 3), 1 / 3)
    fig = map_figure(AttentionMap(weights, ["a", " ", " "], ["a", "\n", " "], "self"))
    assert list(fig.data[0].y) == ["a", "␣", "␣\u2009#2"]
    assert list(fig.data[0].x) == ["a", "↵", "␣"]
    assert heatmap.unique_labels([" the", "<b>"]) == [" the", "&lt;b&gt;"]  # words keep theirs


@pytest.mark.parametrize("presenting", [False, True])
def test_two_dozen_cost_lines_each_look_apart_and_the_legend_names_all_without_scrolling(
    monkeypatch, presenting
):
    from engine.variants import names

    monkeypatch.setattr(presenter, "presenting", lambda: presenting)

    rows = [
        dict(variant=v, n=n, peak_mib=n * (i + 1), predicted_mib=n)
        for i, v in enumerate(names())
        for n in (128, 256)
    ]
    fig = variants.loglog_figure(rows, "peak_mib", predicted="predicted_mib", title="", y_title="")
    measured = [d for d in fig.data if d.showlegend is not False]
    assert len(measured) == len(names()) >= 24
    colours = [d.line.color for d in measured]
    assert set(colours) == set(presenter.QUALITATIVE)  # the studio's, on a screen too
    looks = {(c, d.marker.symbol) for c, d in zip(colours, measured, strict=True)}
    assert len(looks) == len(measured)  # colour and marker together: no two lines alike
    assert all(d.line.dash == "dash" for d in fig.data if d.showlegend is False)  # the models
    legend = fig.layout.legend
    assert (legend.orientation, legend.yref, legend.y) == ("h", "container", 0)
    labels = [d.name for d in measured]
    rows_needed = timeline.legend_rows(labels, NARROW_PX, variants.PRESENTER_FONT)
    assert rows_needed >= 4 and fig.layout.height == 440 + rows_needed * variants.LEGEND_ROW_PX


@pytest.mark.parametrize("present", [False, True])
def test_lines_and_groups_take_the_studios_colours_on_a_screen_and_a_projector(present):
    """Streamlit's theme colorway pairs a dark and a light shade (the Chat presses' random
    and StreamingLLM lines read as one pair) and its tenth colour, #d5dae5, vanished on
    white (two of the Variants cost lines). Every chart gets the studio's list, and a view
    that chose its own colorway keeps it."""
    import plotly.graph_objects as go
    from kit.exports import styled

    fig = styled(go.Figure([go.Scatter(y=[1, 2]), go.Scatter(y=[2, 1])]), present)
    assert list(fig.layout.colorway) == presenter.QUALITATIVE
    assert "#F0E442" not in presenter.QUALITATIVE  # Okabe–Ito's yellow: thin lines vanish
    own = styled(go.Figure(layout=dict(colorway=["#D55E00", "#56B4E9"])), present)
    assert list(own.layout.colorway) == ["#D55E00", "#56B4E9"]


def test_fifteen_memory_groups_each_look_apart():
    """The Memory map's groups (up to 15 tasks and the story's own) by colour and shape:
    Dark24 gave tasks 2 and 15, 6 and 13 near-alike magentas."""
    from views.memory import memory_map

    groups = [f"task {n}" for n in range(1, 16) for _ in range(3)]
    coords = np.random.default_rng(0).normal(size=(len(groups), 2))
    fig = memory_map(coords, groups, ["a"] * len(groups), np.zeros(len(groups), bool), "")
    looks = [(d.marker.color, d.marker.symbol) for d in fig.data]
    assert len(looks) == 15 == len(set(looks))
    assert [d.name for d in fig.data][:3] == ["task 1", "task 2", "task 3"]


def test_a_projector_sizes_what_streamlits_theme_would_draw_at_12_px():
    """Streamlit's Plotly theme sets tick labels and legends to 12 px and axis titles to
    14 px, and a theme's size beats the figure's font: presenter mode's 18-px type reached
    titles only (the Chat presses' legend read at 12 px on a projector). Sizes a view set
    itself stay: a map grid's ticks are laid out in px."""
    import plotly.graph_objects as go

    fig = go.Figure(
        [go.Scatter(y=[1, 2], name="a"), go.Heatmap(z=[[1]], xaxis="x2", yaxis="y2")],
        layout=dict(
            xaxis=dict(title="step"),
            yaxis=dict(title=dict(text="loss")),
            xaxis2=dict(tickfont=dict(size=12)),
        ),
    )
    spec = presenter.restyle(fig).to_dict()["layout"]
    assert spec["xaxis"]["tickfont"]["size"] == spec["yaxis"]["tickfont"]["size"] == 16
    assert spec["xaxis"]["title"]["font"]["size"] == spec["yaxis"]["title"]["font"]["size"] == 18
    assert spec["legend"]["font"]["size"] == 16
    assert spec["xaxis2"]["tickfont"]["size"] == 12  # the view's own, laid out in px
    assert spec["xaxis"]["title"]["text"] == "step"


def test_a_perplexity_axis_under_two_decades_names_more_than_one_value():
    """Chat › Cache policies: perplexity 31 … 160 on a decades-only log axis read "100"
    alone (the visual review's 'scales' check found it)."""
    rows = [
        dict(policy=p, budget=b, ppl=v, ppl_full=31.0)
        for p, vs in (("window", (160.0, 60.0, 35.0)), ("h2o", (90.0, 45.0, 33.0)))
        for b, v in zip((16, 64, 256), vs, strict=True)
    ]
    fig = chat.sweep_figure(rows, "ppl", {"window": "window", "h2o": "H2O"}, "full", "ppl")
    ticks = list(fig.layout.yaxis.tickvals)
    assert len([v for v in ticks if 31 <= v <= 160]) >= 2 and 100 in ticks


def test_an_accuracy_against_state_plot_keeps_its_height_whatever_its_legend():
    """Twenty-three variants named in Chinese took the legend below the chart to ~8 rows
    of a 640-px figure: the plot shrank to ~120 px and its automatic ticks ran into one
    another (23 overlaps in the visual review). The figure grows by the legend's rows."""
    from engine.variants import names

    rows = [
        dict(
            variant=v,
            task="mqar-256",
            kind="grows",
            state_bytes=4096 * (i + 1),
            mean=0.5,
            accuracy=[0.4, 0.6],
            source="",
            bytes_per_token=16,
        )
        for i, v in enumerate(names())
    ]
    short = variants_quality.recall_state_figure(rows[:2], 1 / 64).layout
    many = variants_quality.recall_state_figure(rows, 1 / 64).layout
    entries = [d.name for d in variants_quality.recall_state_figure(rows, 1 / 64).data if d.name]
    legend_px = (
        timeline.legend_rows(list(dict.fromkeys(entries)), NARROW_PX, variants.PRESENTER_FONT)
        * variants.LEGEND_ROW_PX
    )
    assert many.height - legend_px - 60 - 70 >= variants_quality.PLOT_PX
    assert short.height == 640  # a short legend: the view's own height
    assert list(many.yaxis.tickvals) == [0, 0.25, 0.5, 0.75, 1]


@pytest.mark.parametrize("on", [False, True])
def test_a_maps_words_and_flags_take_the_projectors_type(monkeypatch, on):
    """A map's word labels were 12.75 px on a projector and its flags a 12-px <sup>; there
    they are 16 and 15 px now, and the margins, the tilt and the rows are laid out for it."""
    monkeypatch.setattr(heatmap, "presenting", lambda: on)
    words = ["The", "animal", "didn't", "cross", "the", "street", "because", "it", "was"]
    fig = heatmap.heatmap(np.eye(9), words, words, title="α", flags=["exact"])
    tick = heatmap.PRESENTER_MAP_TICK_PX if on else heatmap.MAP_TICK_PX
    assert fig.layout.xaxis.tickfont.size == fig.layout.yaxis.tickfont.size == tick
    flag = heatmap.PRESENTER_FLAG_PX if on else heatmap.FLAG_PX
    assert f'<span style="font-size:{flag}px">[' in fig.layout.title.text
    assert "<sup>" not in fig.layout.title.text
    # the row labels' margin holds "because" at the size drawn: 3.47 em in Source Sans, as
    # Chromium measures it (canvas measureText), and the tick's gap
    assert fig.layout.margin.l >= 3.47 * tick + 16
    # every row keeps its line: plotly.js names one row per 1.2 × the tick size
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    assert plot_px / len(words) >= 1.2 * tick


@pytest.mark.parametrize("on", [False, True])
def test_numbers_go_in_cells_only_where_they_can_be_read(monkeypatch, on):
    """plotly.js fits a cell's number to its cell: an 11-word map beside a chart (half the
    page) drew them at 8 px. There the colour and the hover carry the values; the same map
    across the page keeps its numbers, at least 10 px (12 on a projector)."""
    monkeypatch.setattr(heatmap, "presenting", lambda: on)
    words = "The animal didn't cross the street because it was too tired".split()
    z = np.random.default_rng(0).dirichlet(np.ones(11), 11)
    half = heatmap.heatmap(z, words, words, width_px=NARROW_PX // 2)
    whole = heatmap.heatmap(z, words, words, width_px=NARROW_PX)
    assert half.data[0].texttemplate is None
    # asked for (the Retrieval lesson's 3 passages × 15 tokens), still only where legible
    asked = heatmap.heatmap(z, words, words, width_px=NARROW_PX // 2, annotate=True)
    assert asked.data[0].texttemplate is None
    assert whole.data[0].texttemplate == "%{text}"
    small = heatmap.PRESENTER_CELL_NUMBER_PX if on else heatmap.CELL_NUMBER_PX
    # across a 535-px page (956 on a projector, its sidebar hidden)
    page = presenter.PAGE_PX if on else NARROW_PX
    cell_w = (
        page - whole.layout.margin.l - 10 - heatmap.bar_px(whole.data[0].colorbar.to_plotly_json())
    ) / 11
    assert heatmap.number_px(np.round(z, 2), cell_w, 26) >= small
    # plotly.js's rule: a cell's width over 0.65 em a character, its height over 1.3 em
    assert heatmap.number_px(np.array([0.25, 1.0]), 26, 100) == 10  # "0.25": 26 / 2.6
