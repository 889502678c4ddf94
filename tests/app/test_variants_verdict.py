"""AppTest for issue 31's verdict on the Variants page: which variant recalls, at what state,
with which recipe, one sentence each with a link to its learning curves; a CSV export; the
ablation's columns once another recipe folder is evaluated."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from state.variants import variant_name
from streamlit.testing.v1 import AppTest

from engine.analysis import recall_state
from engine.models import variant_lm as quality
from tests.app.variants_support import _section

torch.set_num_threads(1)
SCRIPT = Path(__file__).resolve().parents[2] / "app/studios/variants.py"


def _plan() -> tuple[str, dict, list[dict]]:
    plans, runs = quality.plan_results("zoology"), quality.tuning("zoology")
    recipe = quality.recipe_folder(runs)
    return recipe, plans[recipe], [r for r in runs if r["recipe"] == recipe]


def test_the_verdict_states_each_variant_with_a_link_to_its_curves(page, downloads):
    recipe, data, runs = _plan()
    expected = recall_state.verdict(data["recall_state"], runs)
    at = _section(page("variants"), "quality")
    assert "Verdict: the field's recipe on Zoology's grid" in [h.value for h in at.subheader]
    lines = [m.value for m in at.markdown if "?section=quality&curves=" in m.value]
    assert len(lines) == len(expected)  # one sentence per variant, best first
    for line, v in zip(lines, expected, strict=True):
        assert line.startswith(f"- **{variant_name(v['variant'])}**")
        assert f"curves={v['variant']}#verdict-curves)" in line
        assert f"{v['mean']:.3f}" in line
    table = next(d.value for d in at.dataframe if "verdict" in d.value.columns)
    assert list(table["variant"]) == [v["variant"] for v in expected]
    shown = dict(zip(table["variant"], table["verdict"], strict=True))
    assert shown["full"] == "recalls"  # attention recalls with the recipe
    # The grid's variants with no row yet are named, with the command that trains one.
    missing = recall_state.not_on_grid(expected)
    grid = [name for name, v in recall_state.REGISTRY.items() if not v.not_in_grid]
    assert set(missing).isdisjoint(shown) and sorted([*missing, *shown]) == sorted(grid)
    said = [c.value for c in at.caption if c.value.startswith("Not trained on this grid yet")]
    if missing:
        assert said == [said[0]] and f"({len(missing)}): {', '.join(missing)}." in said[0]
    else:
        assert not said
    assert "variants-verdict.csv" in downloads
    assert b"verdict" in downloads["variants-verdict.csv"]().encode()[:400]
    # The curves of the picked variant: one line per rate it was tuned at, and the guess.
    spec = json.loads(
        next(c.proto.spec for c in at.get("plotly_chart") if "verdict-curves" in c.proto.id)
    )
    first = expected[0]["variant"]
    tuned = [r for r in runs if r["variant"] == first]
    assert len(spec["data"]) == len(tuned) + 1
    assert spec["data"][-1]["y"][0] == spec["data"][-1]["y"][1]  # ln 64, flat


def test_the_state_chart_opens_without_the_variants_near_chance(page):
    """23 variants crowd the recall-against-state chart: those at chance on the verdict's
    task start hidden there (one legend click away, named in a caption); the width chart,
    where shorter sequences may be recalled, shows every variant."""
    recipe, data, runs = _plan()
    chance = {v["variant"] for v in recall_state.verdict(data["recall_state"], runs)}
    chance = {v for v in chance if _outcome(data, runs, v) == "chance"}
    assert chance  # the shipped grid has some (RetNet, Mamba, Longformer, ...)
    at = _section(page("variants"), "quality")
    specs = {c.proto.id: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    state = next(s for k, s in specs.items() if "verdict-recall" in k)
    width = next(s for k, s in specs.items() if "verdict-width" in k)
    hidden = {d["legendgroup"] for d in state["data"] if d.get("visible") == "legendonly"}
    assert hidden == chance
    shown = {d.get("legendgroup") for d in state["data"] if d.get("visible") != "legendonly"}
    assert "full" in shown and not shown & chance
    assert not any(d.get("visible") == "legendonly" for d in width["data"])
    said = [c.value for c in at.caption if "hidden at first in the state chart" in c.value]
    assert len(said) == 1 and all(variant_name(v) in said[0] for v in chance)


def _outcome(data: dict, runs: list[dict], variant: str) -> str:
    found = recall_state.verdict(data["recall_state"], runs)
    return next(v["outcome"] for v in found if v["variant"] == variant)


def test_a_curves_link_opens_that_variants_curves():
    _, _, runs = _plan()
    variant = sorted({r["variant"] for r in runs})[-1]
    at = AppTest.from_file(str(SCRIPT), default_timeout=120)
    at.query_params.update(section="quality", curves=variant)
    at.run()
    assert not at.exception
    assert at.selectbox(key="verdict-curves").value == variant

    def scrolls(at) -> bool:
        return any('getElementById("verdict-curves")' in h.proto.body for h in at.get("html"))

    assert scrolls(at)  # a link's visit lands on the curves, once
    at.run()
    assert not at.exception and not scrolls(at)


def test_without_the_plans_evaluation_the_verdict_says_how_to_make_it(page, monkeypatch):
    from state import variants as state

    monkeypatch.setattr(state, "plan_results", lambda: {})
    at = _section(page("variants"), "quality")
    assert any("evaluation is not saved yet" in i.value for i in at.info)


def test_an_ablation_folder_adds_its_column(page, monkeypatch):
    from state import variants as state

    recipe, data, _ = _plan()
    off = {**data, "recall_state": [{**r, "mean": 0.016} for r in data["recall_state"]]}
    old = {"conv": 0, "lrs": [0.0022], "lr": 0.0022}
    off["cells"] = [{**c, "recipe": old, "steps": 360} for c in data.get("cells", [])] or [
        {"variant": "full", "recipe": old, "steps": 360}
    ]
    monkeypatch.setattr(state, "plan_results", lambda: {recipe: data, "conv0-lr0.0022": off})
    at = _section(page("variants"), "quality")
    table = next(d.value for d in at.dataframe if "verdict" in d.value.columns)
    column = "conv0-lr0.0022: best mean"
    assert column in table.columns and set(table[column].astype(float)) == {0.016}
    # Under the table, the folder in words: its steps are not in its name.
    said = "`conv0-lr0.0022`: no convolution, one rate (0.0022), 360 steps"
    assert any(said in c.value for c in at.caption)
    # Each sentence says what the variant scored without each part of the recipe.
    lines = [m.value for m in at.markdown if "?section=quality&curves=" in m.value]
    part = "0.016 (near chance) without the convolution, with one rate (0.0022), in 360 steps"
    said = "Ablated at mqar-256-16, d = 64, where the recipe gives "
    assert lines and all(said in x for x in lines)
    assert all(part in x for x in lines)


def test_the_ablation_chart_shows_each_variants_accuracy_in_each_folder(page):
    """One picture of the ablation: a row per verdict variant (in its order), the recipe's
    seed-0 cell first, then a column per ablation folder, each value its evaluation's."""
    recipe, data, runs = _plan()
    found = [v["variant"] for v in recall_state.verdict(data["recall_state"], runs)]
    others = recall_state.ablations(quality.plan_results("zoology"), recipe)
    assert len(others) == 4
    at = _section(page("variants"), "quality")
    specs = {c.proto.id: json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    spec = next(s for k, s in specs.items() if "verdict-ablation" in k)
    trace = spec["data"][0]
    assert trace["y"] == [variant_name(v) for v in found]
    assert len(trace["x"]) == 1 + len(others) and trace["x"][0] == "the recipe"
    assert "without the convolution, in 360 steps" in trace["x"]
    text = trace["text"]
    point = (recall_state.VERDICT_TASK, recall_state.VERDICT_WIDTH)
    seed0 = {
        r["variant"]: r["accuracy"][r["seeds"].index(0)]
        for r in data["recall_state"]
        if (r["task"], r["width"]) == point
    }
    for row, v in zip(text, found, strict=True):
        assert row[0] == f"{seed0[v]:.2f}"
        # The folders' columns in the chart's order, matched by their values.
        assert sorted(row[1:]) == sorted(f"{means[v]:.2f}" for means in others.values())
    assert spec["layout"]["height"] >= 24 * len(found)  # a label per row, presenting too
