"""AppTest for issue 13 in the Variants lab: the Quality and MiniLM swap sections, and the
Compare section's real inputs (MiniLM Q/K/V by default, an uploaded NPZ)."""

from __future__ import annotations

import io
import json
import time

import numpy as np
import pytest
import torch
from state.variants import variant_name

from tests.app.variants_support import _section, _texts

torch.set_num_threads(1)
FULL = variant_name("full")  # full attention in map titles and legends


def _figures(at) -> dict:
    return {c.proto.id: json.loads(c.proto.spec) for c in at.get("plotly_chart")}


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def test_quality_table_chart_and_trained_maps(page):
    from engine.models import variant_lm as quality

    at = _section(page("variants"), "quality")
    table = at.dataframe[0].value
    assert {"full", "flash", "linformer", "mamba", "linear"} <= set(table["variant"])
    published = [c for c in table.columns if "not ours" in c]
    assert published and "Tay et al. 2020" in published[0]
    lra = quality.results()["lra_published"]["average_accuracy"]  # what the results file says
    shown = dict(zip(table["variant"], table[published[0]], strict=True))
    assert shown == {v: f"{lra[v]:.2f}" if v in lra else "—" for v in shown}
    assert set(lra) <= set(shown) and set(shown) - set(lra)  # both kinds of row are checked
    assert "±" in table.loc[table["variant"] == "full", "mqar-256"].item()
    specs = list(_figures(at).values())
    scatter = next(s for s in specs if s["data"][0]["type"] == "scatter")
    names = [variant_name(v) for v in table["variant"]]
    assert [d["name"] for d in scatter["data"]] == names  # one per variant
    assert all(d["mode"] == "markers" for d in scatter["data"])  # named in the legend
    grid = next(h.proto.body for h in at.get("html") if "kit-vgrid" in h.proto.body)
    assert grid.count('class="kit-vgrid-panel"') == len(table)  # the maps: one HTML grid
    captions = " ".join(c.value for c in at.caption)
    assert "Red ring" in captions  # the key is marked
    # full and flash cost and recall alike: their markers lie on one another, and the page
    # names them (a reader could not tell them apart on a narrow page).
    piled = next(c.value for c in at.caption if c.value.startswith("Drawn over one another"))
    full = next(d for d in scatter["data"] if d["name"] == FULL)
    assert f"{FULL}, {variant_name('flash')} (accuracy " in piled
    assert full["marker"]["line"]["color"] == "white"  # a marker's rim shows under another
    weights = at.dataframe[1].value
    assert set(weights["variant"]) == set(table["variant"])
    at.radio(key="q-cost").set_value("flops").run()
    assert not at.exception
    at.segmented_control(key="q-task").set_value("control-128").run()
    recipe = bool(quality.tuning("zoology"))  # the field's recipe table, once a run is trained
    verdict = bool(quality.plan_results("zoology"))  # and its verdict, once evaluated
    # + the recall-vs-state rows
    assert not at.exception and len(at.dataframe) == 3 + recipe + verdict


@pytest.mark.parametrize("content", ["missing", "{not json", '{"cells": 3}'])
def test_quality_without_results_says_so(page, tmp_path, monkeypatch, content):
    import streamlit as st

    from engine import checkpoints
    from engine.models import variant_lm as quality

    path = tmp_path / f"{quality.RESULT}.json"
    if content != "missing":
        path.write_text(content)
    monkeypatch.setattr(checkpoints, "CHECKPOINT_DIR", tmp_path)
    st.cache_data.clear()  # the shipped results, read by an earlier test
    at = _section(page("variants"), "quality")
    assert "engine.evaluate variants --save" in _texts(at)
    at = _section(at, "kv")  # the other sections are unaffected
    at.slider[0].set_value(16).run()
    assert not at.exception and len(at.get("plotly_chart")) == 1


def test_minilm_swap_gives_a_cosine_per_variant(page):
    from engine.models.in_pretrained import SWAPPABLE

    at = _section(page("variants"), "swap")
    rows = at.dataframe[0].value
    assert list(rows["variant"]) == list(SWAPPABLE)
    assert rows["cosine"].notna().all()
    assert rows.loc[rows["variant"].isin(["full", "flash"]), "exact"].all()
    assert rows.loc[rows["variant"].isin(["full", "flash"]), "cosine"].min() > 0.9999
    assert "Exact here" in " ".join(m.value for m in at.markdown)
    assert len(at.get("plotly_chart")) == 2  # cosines and layer errors (the maps are HTML)
    bars = next(f for f in _figures(at).values() if f["data"][0]["type"] == "bar")
    assert len(bars["data"][0]["x"]) == len(SWAPPABLE)
    at.number_input(key="swap-layer").set_value(5).run()
    assert not at.exception
    at.multiselect(key="swap-picked").set_value(["linformer", "performer"]).run()
    assert list(at.dataframe[0].value["variant"]) == ["linformer", "performer"]
    k = next(w for w in at.number_input if w.key.endswith("linformer-k"))
    k.set_value(4).run()
    assert not at.exception and "k = 4" in at.dataframe[0].value["budget"].iloc[0]
    at.text_area(key="swap-text").set_value("word " * 100).run()
    assert not at.exception and "limit here is 64" in _texts(at)
    at.text_area(key="swap-text").set_value("").run()
    assert not at.exception and "Type a sentence" in _texts(at)


def test_compare_defaults_to_minilm_qkv_with_default_budgets(page):
    at = page("variants")
    source = at.radio(key="var-source")
    assert source.options[source.index].startswith("Q/K/V of MiniLM")
    rows = at.dataframe[0].value
    assert {"linformer", "performer", "longformer"} <= set(rows["variant"])
    k = next(
        w
        for w in at.number_input
        if w.key.startswith("hp-minilm") and w.key.endswith("-linformer-k")
    )
    assert any("kit-vgrid" in h.proto.body for h in at.get("html"))  # the maps, one grid
    assert 1 <= k.value < 32  # about half the keys of the example text, not the synthetic 32
    at.text_area(key="var-mtext").set_value("A much shorter text.").run()
    assert not at.exception and not _texts(at)  # the budgets follow the new length
    at.number_input(key="var-layer").set_value(5).run()
    at.number_input(key="var-qhead").set_value(11).run()
    assert not at.exception and len(at.dataframe) == 1


def test_compare_on_an_uploaded_npz(page):
    at = page("variants")
    at.radio(key="var-source").set_value("npz").run()
    assert not at.exception and "Upload an .npz" in _texts(at)
    g = np.random.default_rng(0)
    q, k, v = (g.standard_normal((2, 24, 16)).astype(np.float32) for _ in range(3))
    from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

    def upload(data: bytes):  # AppTest has no uploader driver: the widget's state is the file
        rec = UploadedFileRec(file_id="f", name="qkv.npz", type="application/npz", data=data)
        return UploadedFile(rec, None)

    at.session_state["var-npz"] = upload(_npz(q=q, k=k, v=v))
    at.run()
    assert not at.exception
    assert {"linformer", "performer"} <= set(at.dataframe[0].value["variant"])
    bad = {
        "missing": (_npz(q=q, k=k), "missing v"),
        "shape": (_npz(q=q, k=k, v=v[:, :5]), "share one shape"),
        "dtype": (_npz(q=q.astype(np.int32), k=k, v=v), "dtype int32"),
        "nan": (_npz(q=np.full_like(q, np.nan), k=k, v=v), "NaN or infinite"),
        "not npz": (b"hello", "not a readable .npz"),
        "too long": (_npz(**dict.fromkeys("qkv", np.zeros((1, 1100, 4), np.float32))), "outside"),
    }
    for name, (data, message) in bad.items():
        at.session_state["var-npz"] = upload(data)
        at.run()
        assert not at.exception, name
        assert message in _texts(at), (name, _texts(at))


def test_links_restore_the_new_views():
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    script = Path(__file__).resolve().parents[2] / "app/studios/variants.py"
    at = AppTest.from_file(str(script), default_timeout=120)
    at.query_params.update(section="quality", task="control-128", cost="flops", layer="0")
    at.run()
    assert not at.exception
    assert at.segmented_control(key="q-task").value == "control-128"
    assert at.radio(key="q-cost").value == "flops"
    assert at.number_input(key="q-layer").value == 0
    at = AppTest.from_file(str(script), default_timeout=120)
    at.query_params.update(section="compare", source="minilm", layer="4", qhead="3")
    at.run()
    assert not at.exception
    assert (at.number_input(key="var-layer").value, at.number_input(key="var-qhead").value) == (
        4,
        3,
    )


def test_copy_task_rings_the_symbol_a_slot_copies(page):
    """The structured long-range task: slot j (a '?') should find the symbol at position j."""
    at = _section(page("variants"), "quality")
    at.segmented_control(key="q-task").set_value("copy-128").run()
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "copying memory" in captions
    query = at.selectbox(key="q-query").value
    assert query >= 120  # the asked positions are the 8 slots at the end
    assert f"query {query} and the key it should read, at position {query - 120}" in captions
    weights = at.dataframe[1].value
    assert {"full", "chunked", "mamba"} <= set(weights["variant"])


def test_recall_against_state_and_the_needle_heatmaps(page):
    """Issue 20, item 7: Zoology's chart (one point per MQAR row of the results, on a log
    axis of state bytes, the papers' findings beside it) and one needle heatmap per
    probed variant."""
    from engine.analysis import needle
    from engine.models import variant_lm as quality

    at = _section(page("variants"), "quality")
    titled = {s["layout"].get("title", {}).get("text", ""): s for s in _figures(at).values()}
    recall = next(s for title, s in titled.items() if title.startswith("MQAR accuracy"))
    rows = [r for r in quality.results()["recall_state"] if r.get("width", 64) == 64]
    points = [d for d in recall["data"] if d["mode"] == "markers"]
    assert sum(len(d["x"]) for d in points) == len(rows)  # a point per grid row
    assert {d["name"] for d in points} == {variant_name(r["variant"]) for r in rows}  # legend
    assert {x for d in points for x in d["x"]} == {r["state_bytes"] for r in rows}
    swept = quality.results().get("width_sweep", {}).get("cells", [])
    lines = [d for d in recall["data"] if d["mode"] == "lines+markers"]
    assert len(lines) == len({c["variant"] for c in swept})  # a line through each's widths
    for line in lines:  # the state grows with the width
        assert line["x"] == sorted(line["x"]) and len(line["x"]) >= 2
    assert recall["layout"]["xaxis"]["type"] == "log" and recall["layout"]["xaxis"]["dtick"] == 1
    prose = " ".join(m.value for m in at.markdown)
    assert "Zoology (arXiv 2312.04927)" in prose and "Based (arXiv 2402.18668)" in prose
    assert "Published findings, not ours" in prose
    probe = needle.results()
    heat = next(s for title, s in titled.items() if title.startswith("Needle accuracy"))
    by_length, by_depth = [d for d in heat["data"] if d["type"] == "heatmap"]
    grids = np.asarray(list(probe["mean"].values()))  # (variant, depth, length)
    assert np.allclose(by_length["z"], grids.mean(axis=1), atol=1e-3)
    assert np.allclose(by_depth["z"], grids.mean(axis=2), atol=1e-3)
    assert len(by_length["x"]) == len(probe["lengths"])
    assert len(by_depth["x"]) == len(probe["depths"])
    assert by_length["y"] == [variant_name(n) for n in probe["mean"]]  # a row per probed variant
    for panel in (by_length, by_depth):  # each panel's rows span its colour scale
        assert np.ptp(panel["z"]) >= 0.25 * (panel["zmax"] - panel["zmin"])


def test_zoologys_other_axes_accuracy_against_width_per_length(page):
    """Issue 31, item 3: the same rows on Zoology's Figure 2 axes — a panel per sequence
    length, a line per variant over its widths, increasing in width."""
    from engine.models import variant_lm as quality

    rows = quality.results()["recall_state"]
    at = _section(page("variants"), "quality")
    titled = {s["layout"].get("title", {}).get("text", ""): s for s in _figures(at).values()}
    drawn = next(
        s for title, s in titled.items() if title.startswith("MQAR accuracy against model width")
    )
    lengths = sorted({r["n"] for r in rows})
    panels = [a["text"] for a in drawn["layout"]["annotations"]]
    assert panels == [f"sequence length n = {n}" for n in lengths]
    assert sum(len(d["x"]) for d in drawn["data"]) == len(rows)  # every row, once
    for line in drawn["data"]:
        assert line["x"] == sorted(line["x"])
    by_panel = {}
    for line in drawn["data"]:
        by_panel.setdefault(line["xaxis"], set()).add(line["name"])
    assert len(by_panel) == len(lengths)
    assert sum(d["showlegend"] for d in drawn["data"]) == len(
        by_panel["x"]
    )  # one legend entry each


def test_the_fields_recipe_table_shows_every_tuning_run_trained(page, monkeypatch):
    """Issue 31: the plan's learning-rate sweep as far as it is trained — a row per
    variant, its validation accuracy at each rate, the kept rate once all are trained; with
    none trained, the command that trains them."""
    from state import variants as state

    from engine.models import variant_lm as quality

    runs = quality.tuning("zoology")
    at = _section(page("variants"), "quality")
    headings = [h.value for h in at.subheader]
    assert "The field's recipe, as far as it is trained" in headings
    if runs:
        table = next(d.value for d in at.dataframe if "kept rate" in d.value.columns)
        assert len(table) == len({(r["recipe"], r["variant"]) for r in runs})
        kept = {r["variant"]: r for r in runs if r["kept"]}
        for _, row in table.iterrows():
            if row["variant"] in kept:
                assert float(row["kept rate"]) == kept[row["variant"]]["lr"]
            else:
                assert row["kept rate"] == "still tuning"
    monkeypatch.setattr(state, "plan_tuning", lambda: [])
    at = _section(page("variants"), "quality")
    assert any("recipe is not trained yet" in c.value for c in at.caption)


def test_zoologys_published_points_beside_ours(page):
    """Issue 31, item 3: the points of Zoology's own recall–memory figure, read off its
    pixels, drawn as a series per model on the same axes, said to be not ours and exported."""
    from engine.analysis import recall_state

    found = recall_state.published()
    assert found and "d88d6f5" in found["source"] and "not ours" in found["label"]
    points = found["points"]
    assert len(points) >= 50
    assert all(1e3 < p["state_bytes"] < 1e7 and 0 <= p["accuracy"] <= 1.0 for p in points)
    best = {
        m: max(p["accuracy"] for p in points if p["model"] == m)
        for m in {p["model"] for p in points}
    }
    assert best["Based"] >= 0.99 and best["DeltaNet"] >= 0.99  # what the issue reads off it
    assert best["H3"] < 0.3 and best["Hyena"] < 0.45  # gated convolutions stay low
    at = _section(page("variants"), "quality")
    titled = {s["layout"].get("title", {}).get("text", ""): s for s in _figures(at).values()}
    drawn = next(s for title, s in titled.items() if title.startswith("As published"))
    assert {d["name"] for d in drawn["data"]} == set(best)
    assert sum(len(d["x"]) for d in drawn["data"]) == len(points)
    assert drawn["layout"]["xaxis"]["type"] == "log"
    assert any("Not ours" in c.value and "digitise_zoology" in c.value for c in at.caption)


def _training_grid(at) -> str:
    grids = [h.proto.body for h in at.get("html") if "kit-vgrid" in h.proto.body]
    return grids[1]  # the trained maps, then the training timeline's


def test_training_timeline_slider_replays_every_cells_learning(page):
    """Issue 21, item 1 for the variant grid: each cell's shipped timeline, one map per
    variant at the chosen step, accuracy / evidence mass / loss against step beside it."""
    from engine.models import variant_lm as quality

    at = _section(page("variants"), "quality")
    variants = [
        v for v in quality.results()["table"] if "mqar-256" in quality.results()["table"][v]
    ]
    tl = quality.cell_timeline("mqar-256", "full", 0)
    slider = at.select_slider(key="q-step")
    assert [int(s) for s in slider.options] == tl.steps and int(slider.value) == tl.steps[-1]
    assert _training_grid(at).count('class="kit-vgrid-panel"') == len(variants)
    assert f"{FULL} · {tl.steps[-1]}" in _training_grid(at)
    curves = max(  # the figure with a "full" line per metric
        _figures(at).values(), key=lambda s: sum(d.get("name") == FULL for d in s["data"])
    )
    full = [d for d in curves["data"] if d["name"] == FULL]
    assert len(full) == 3  # accuracy, evidence mass, loss
    assert full[0]["y"] == pytest.approx(tl.metrics["accuracy"], abs=1e-6)
    at.select_slider(key="q-step").set_value(tl.steps[2]).run()
    assert not at.exception
    assert f"{FULL} · {tl.steps[2]}" in _training_grid(at)
    assert tl.metrics["accuracy"][-1] > 0.99 > tl.metrics["accuracy"][0]  # it learnt


def test_a_damaged_or_missing_timeline_is_a_caption(page, tmp_path, monkeypatch):
    import shutil

    from engine import timeline
    from engine.models import variant_lm as quality

    name = "mqar-256-full-s0"
    for path in timeline.paths(name, quality.OUT_DIR):
        shutil.copy(path, tmp_path / path.name)
    weights, _ = timeline.paths(name, tmp_path)
    weights.write_bytes(weights.read_bytes()[:64])  # truncated
    monkeypatch.setattr(quality, "OUT_DIR", tmp_path)
    at = _section(page("variants"), "quality")
    captions = " ".join(c.value for c in at.caption)
    assert "No readable timeline for: full, flash" in captions
    assert "cannot be read" in captions and "python -m engine.train variants" in captions
    assert not at.get("select_slider") or "q-step" not in [s.key for s in at.select_slider]
    grids = [h.proto.body for h in at.get("html") if "kit-vgrid" in h.proto.body]
    assert len(grids) == 1  # the finished models' maps are still there


def test_the_quality_intro_names_the_flag_each_cell_was_trained_with(page):
    """The intro's command trains the table again only with ``--frozen-variant`` for the
    variants whose cells kept their own weights seeded: it names exactly those, read from
    the commands the cells record (none of the others, such as sinks, learned since)."""
    from engine.models import variant_lm as quality

    cells = quality.results()["cells"]
    frozen = {c["variant"] for c in cells if quality.FROZEN_FLAG in c["command"]}
    learned = {c["variant"] for c in cells} - frozen
    assert {"gla", "mamba"} <= frozen and {"sinks", "full"} <= learned
    at = _section(page("variants"), "quality")
    intro = next(m.value for m in at.markdown if "--frozen-variant" in m.value)
    assert "--conv 0 --lr 0.003" in intro and "--width 32 128 --seeds 0" in intro
    names = intro.split("--frozen-variant` for ", 1)[1].split(" (", 1)[0]
    assert sorted(names.split(", ")) == sorted(variant_name(v) for v in frozen)


def test_opening_quality_warms_every_tasks_traces_for_the_next_pick(page, monkeypatch):
    # A task's first pick computed its 23 Traces on the spot (1.1 s at n = 512): opening
    # the section hands every task's cells to the background warm-up.
    from state import variants as state

    from engine.models import variant_lm as quality

    asked = []
    monkeypatch.setattr(state, "warm_quality", lambda cells, seed: asked.append((cells, seed)))
    at = _section(page("variants"), "quality")
    assert not at.exception
    (cells, seed), *_ = asked
    table = quality.results()["table"]
    assert seed == 0 and set(cells) == {(task, v) for v in table for task in table[v]}
    assert {task for task, _ in cells} == {"control-128", "copy-128", "mqar-256", "mqar-512"}


def test_the_warm_up_computes_each_cell_once_per_process_in_a_server_thread(monkeypatch):
    import streamlit as st
    from kit import queue
    from state import variants as state

    done = []
    monkeypatch.setattr(state, "quality_trace", lambda task, v, seed: done.append((task, v, seed)))
    state.warm_quality.clear()
    cells = (("copy-128", "full"), ("mqar-512", "based"))
    assert state.warm_quality(cells, 1) is None  # no server (AppTest, scripts): nothing runs
    state.warm_quality.clear()
    monkeypatch.setattr(st.runtime, "exists", lambda: True)
    thread = state.warm_quality(cells, 1)
    thread.join(30)
    assert done == [("copy-128", "full", 1), ("mqar-512", "based", 1)]
    assert state.warm_quality(cells, 1) is thread  # a second visitor starts nothing
    state.warm_quality.clear()

    def broken():
        raise RuntimeError("a cell's checkpoint is missing")

    logged = []
    monkeypatch.setattr(queue.log, "exception", lambda *a: logged.append(a))
    queue.background("warm-test", [broken]).join(30)
    assert logged and "warm-test" in logged[0]


def test_the_process_exit_stops_a_warm_up_between_two_steps(monkeypatch):
    """Python ending a daemon thread inside torch aborts the process (exit status 134, seen
    when a test run ended during the warm-up): the exit stops it after its current step."""
    import threading

    import streamlit as st
    from kit import queue

    monkeypatch.setattr(queue, "_STOPPING", threading.Event())
    monkeypatch.setattr(st.runtime, "exists", lambda: True)
    started, done = threading.Event(), []

    def slow():
        started.set()
        time.sleep(0.3)  # the exit comes while this step runs
        done.append("first")

    thread = queue.background("warm-exit", [slow, lambda: done.append("second")])
    started.wait(5)
    queue._stop_background()  # what atexit calls
    assert not thread.is_alive() and done == ["first"]


def test_learning_curves_show_one_variant_per_colour_as_picked(page):
    # All 23 cells' curves were 69 lines in 7 colours (a colour named three or four
    # variants) and ≈ 300 ms of every task pick's painting: the page shows at most one
    # variant per colour, the recall debate's by default, and the reader picks others.
    from state import grid_training
    from views.timeline import DISTINCT_LINES, PALETTE

    at = _section(page("variants"), "quality")
    picker = at.multiselect(key="q-curves")
    assert picker.value == list(grid_training.CURVES_DEFAULT) and len(picker.value) <= 7

    def lines(at) -> dict[str, set[str]]:
        curves = max(
            _figures(at).values(), key=lambda s: sum(d.get("name") == FULL for d in s["data"])
        )
        drawn: dict[str, set[str]] = {}
        for d in curves["data"]:
            drawn.setdefault(d["name"], set()).add(d["line"]["color"])
        return drawn

    drawn = lines(at)
    assert set(drawn) == {variant_name(v) for v in grid_training.CURVES_DEFAULT}
    colours = [c for cs in drawn.values() for c in cs]
    assert len(colours) == len(set(colours)) == len(drawn) == DISTINCT_LINES == len(PALETTE)
    at.multiselect(key="q-curves").set_value(["full", "nsa"]).run()
    assert not at.exception
    assert set(lines(at)) == {FULL, variant_name("nsa")}
    assert _training_grid(at).count('class="kit-vgrid-panel"') == 23  # the maps keep all
    assert at.query_params["lines"] in ("full,nsa", ["full,nsa"])  # the curves drawn: linked


def test_a_link_to_more_curves_than_colours_opens_the_default(page):
    from state import grid_training
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file("../../app/studios/variants.py", default_timeout=300)
    at.query_params.update(section="quality", lines="full,nsa")
    at.run()
    assert at.multiselect(key="q-curves").value == ["full", "nsa"]
    too_many = AppTest.from_file("../../app/studios/variants.py", default_timeout=300)
    every = ["full", "linformer", "performer", "longformer", "mamba", "nsa", "moba", "gla"]
    too_many.query_params.update(section="quality", lines=",".join(every))
    too_many.run()
    assert not too_many.exception
    assert too_many.multiselect(key="q-curves").value == list(grid_training.CURVES_DEFAULT)
    assert any("lines" in i.value for i in too_many.info)


def test_points_within_a_marker_of_one_another_are_one_pile():
    """Linked: a chain of near points is one pile; a point a marker's width away is not."""
    from views.variants import MARKER_PX, PLOT_HEIGHT_PX, piled

    row = lambda v, ms, acc: dict(variant=v, ms_per_step=ms, accuracy=acc)  # noqa: E731
    rows = [row("a", 10, 0.0), row("b", 10.2, 0.01), row("c", 10.4, 0.02), row("d", 1000, 0.0)]
    rows += [row("e", 10, 1.0), row("f", 0, 1.0)]  # e alone up top; f has no cost: not drawn
    assert [[r["variant"] for r in p] for p in piled(rows, "ms_per_step")] == [["a", "b", "c"]]
    apart = 1.15 * MARKER_PX / PLOT_HEIGHT_PX  # a marker's height in accuracy, and some
    assert piled([row("a", 10, 0.5), row("b", 10, 0.5 + apart)], "ms_per_step") == []


def test_the_needle_panels_stand_one_above_the_other_so_every_value_reads(page):
    """plotly.js sizes each needle value to its cell: side by side on the narrowest page
    (1024 px, the sidebar open) a depth's cell was 23 px and its value 7 px, specks. One
    above the other, each panel takes the page's width and every value its cell's size."""
    from views.heatmap import NARROW_PX, number_px, readable_px

    at = _section(page("variants"), "quality")
    heat = next(
        s
        for s in _figures(at).values()
        if s["layout"].get("title", {}).get("text", "").startswith("Needle accuracy")
    )
    layout, maps = heat["layout"], [d for d in heat["data"] if d["type"] == "heatmap"]
    assert {d["texttemplate"] for d in maps} == {"%{z:.2f}"}
    upper, lower = layout["yaxis"]["domain"], layout["yaxis2"]["domain"]
    assert lower[1] < upper[0] and layout["xaxis"]["domain"] == layout["xaxis2"]["domain"] == [0, 1]
    plot = NARROW_PX - layout["margin"]["l"] - layout["margin"]["r"] - 100  # the colour bar
    for d in maps:
        cell = plot / len(d["x"])
        assert number_px(np.round(np.asarray(d["z"]), 2), cell, 30) >= readable_px(), d["x"]
