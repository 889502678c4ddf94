"""AppTest for the Variants lab: every section renders; bad input shows a message, never a
traceback."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest
import torch

from tests.app.plotly_support import shown_numbers
from tests.app.variants_support import _section, _texts

torch.set_num_threads(1)


def panels(at) -> int:
    """Map panels over every HTML grid (the maps are one HTML grid, Plotly only for export)."""
    return sum(h.proto.body.count('class="kit-vgrid-panel"') for h in at.get("html"))


def _grids(at) -> str:
    return "".join(h.proto.body for h in at.get("html") if "kit-vgrid" in h.proto.body)


def test_every_registered_variant_in_one_grid_untrained_ones_refused(page):
    from engine.variants import get, names

    at = _synthetic(page("variants"))
    picked = [v for v in names() if v != "full"]
    scored = [v for v in picked if not get(v).needs_training]
    at.multiselect(key="var-picked").set_value(picked).run()
    assert not at.exception
    assert panels(at) == len(scored) + 1  # every scored variant beside full, no page edit
    grid = _grids(at)
    assert grid.count("<img") == len(scored) + 1  # n = 128 > 32 a side: one image per panel
    assert "mla" not in grid and "differential" not in grid  # seeded stand-ins: not drawn
    table = at.dataframe[0].value
    notes = dict(zip(table["variant"], table["note"], strict=True))
    assert notes["mla"].startswith("Not scored: ") and "needs training" in notes["mla"]
    assert sum(str(n).startswith("Not scored") for n in notes.values()) == len(picked) - len(scored)
    from kit.i18n import variant_title

    said = [i.value for i in at.info if i.value.startswith("Not drawn: ")]  # beside the maps
    unscored = [variant_title(get(v)) for v in picked if v not in scored]
    assert len(said) == 1 and all(title in said[0] for title in unscored)


def test_map_grid_html_tables_images_escaping_marker_and_gaps():
    from views.variants_html import TABLE_SIDE, map_grid_html

    words = ["<b>x</b>", "y", "y"]
    small = dict(z=np.eye(3), x=words, y=words, title="<i>full</i>", flags=["exact"])
    gaps = dict(small, z=np.where(np.eye(3) > 0, np.nan, 0.5), title="overlay")
    grid = map_grid_html([small, gaps], marker=(1, 2), grey_gaps=True)
    assert "<b>x</b>" not in grid and "&lt;b&gt;x&lt;/b&gt;" in grid  # user text escaped
    assert "<i>full</i>" not in grid
    assert grid.count('class="kit-vgrid-panel"') == 2 and "<img" not in grid
    assert grid.count(" ring") == 2  # the marked cell in both panels
    assert grid.count("rgb(128,128,128)") == 3  # the hidden diagonal, grey
    n = 4 * TABLE_SIDE
    big = dict(z=np.random.default_rng(0).random((n, n)), x=[str(i) for i in range(n)])
    big = dict(big, y=big["x"], title="big", flags=[])
    grid = map_grid_html([big], marker=(n - 1, 0))
    assert grid.count("<img") == 1 and "<td" not in grid  # an image, not 16k cells
    assert "display pooled ×2" in grid and "kit-vgrid-mark" in grid
    assert len(grid) < 40_000


def _synthetic(at):
    at.radio(key="var-source").set_value("synthetic").run()
    assert not at.exception
    return at


def test_compare_default_shows_errors_table_and_maps(page):
    at = page("variants")
    assert not at.exception
    assert at.title[0].value.endswith("Variants lab")
    at = _synthetic(at)
    assert len(at.dataframe) >= 1
    errors = at.dataframe[0].value
    assert {"linformer", "performer", "mamba"} <= set(errors["variant"])
    assert (shown_numbers(errors.loc[errors["variant"] == "longformer", "missed_mass"]) >= 0).all()
    assert panels(at) >= 7  # full + six variants
    assert not at.get("plotly_chart")  # the grid is HTML: its Plotly twin is export-only
    at.radio[1].set_value("overlay").run()
    assert not at.exception and panels(at) >= 1
    at.radio[1].set_value("difference").run()
    assert not at.exception and "Δα" in _grids(at)


def test_a_difference_of_float_rounding_is_drawn_pale_and_said(page):
    """Through the trained date model, Reformer and BigBird reproduce full attention to
    ~1e-7: on its own ± range each Δα panel was full of colour, read as structure. Now
    such a panel is drawn on ±1e-4 (pale) and its title says float rounding; a real
    difference (Mamba's) keeps its own range."""
    at = page("variants")
    at.radio(key="var-source").set_value("trained").run()
    at.radio[1].set_value("difference").run()
    assert not at.exception
    grid = html.unescape(_grids(at))
    assert "float rounding, drawn on ±0.0001" in grid
    mamba = re.search(r"mamba − full [^<]*?Δα ±([0-9.e+-]+)", grid)
    assert mamba and float(mamba.group(1)) > 0.01 and "rounding" not in mamba.group(0)


def test_the_scale_of_a_difference_has_a_floor():
    from views.heatmap import map_scale

    tiny = map_scale(np.array([[3e-7, -1e-7]]), value_name="Δα", diverging=True, least=1e-4)
    assert (tiny["zmin"], tiny["zmax"]) == (-1e-4, 1e-4) and "rounding" in tiny["note"]
    real = map_scale(np.array([[0.2, -0.1]]), value_name="Δα", diverging=True, least=1e-4)
    assert (real["zmin"], real["zmax"]) == (-0.2, 0.2) and real["note"] == "Δα ±0.2"
    assert map_scale(np.array([[3e-7]]), value_name="Δα", diverging=True)["zmax"] == 3e-7


def test_a_head_picker_only_where_there_is_a_head_to_pick(page):
    at = page("variants")  # the default input: MiniLM's layer 2, one head
    assert not at.exception and "var-head" not in [w.key for w in at.number_input]
    at = _synthetic(at)  # two heads by default
    assert at.number_input(key="var-head").label.startswith("head to show (0 … 1)")


def test_text_input_and_bad_text(page):
    at = page("variants")
    at.radio[0].set_value("text").run()
    assert not at.exception
    assert "seeded random multi-head layer" in " ".join(c.value for c in at.caption)
    at.text_area[0].set_value("").run()
    assert not at.exception and "Type a sentence" in _texts(at)
    at.text_area[0].set_value("word " * 400).run()
    assert not at.exception and "limit here is 256" in _texts(at)
    at.text_area[0].set_value("<script>alert('x')</script> ☃ 🙂 ...").run()
    assert not at.exception


def test_parameter_outside_its_limit_is_refused_with_the_limit(page):
    at = _synthetic(page("variants"))
    at.number_input(key="hp-synthetic-longformer-window").set_value(5000).run()
    assert not at.exception
    assert "1024" in _texts(at)
    at.number_input(key="hp-synthetic-longformer-window").set_value(16).run()
    at.number_input(key="hp-synthetic-linformer-k").set_value(4000).run()
    assert not at.exception and "at most n" in _texts(at)


def test_causal_refused_for_bidirectional_variants(page):
    at = page("variants")
    at.checkbox[0].check().run()
    assert not at.exception and "bidirectional" in _texts(at)


def test_cost_profile_sweep_and_budget(page):
    at = _section(page("variants"), "profile")
    assert len(at.get("plotly_chart")) == 1  # the memory models' prediction, before any run
    at.multiselect(key="profile-variants").set_value(["full", "performer"]).run()
    at.multiselect[1].set_value([64, 128]).run()
    at.button[0].click().run()  # Run sweep
    assert not at.exception
    assert len(at.get("plotly_chart")) == 3  # and the measured time and memory
    summary = at.dataframe[1].value
    assert set(summary["variant"]) == {"full", "performer"}
    # 32k full attention is predicted over a 0.25 GiB budget: trimmed with a note.
    at.multiselect[1].set_value([32768]).run()
    at.slider[1].set_value(0.25).run()
    at.button[0].click().run()
    assert not at.exception
    assert any("budget" in str(df.value.to_dict()) for df in at.dataframe)


def test_long_kv_and_int8_sections(page):
    at = page("variants")
    at.session_state["long-n"] = 1024  # the 16k default is the e2e test's and the bench's
    at = _section(at, "long")
    assert any("pooled ×" in m.value or "Kernel path" in m.value for m in at.markdown)
    assert len(at.get("plotly_chart")) == 1
    at = _section(at, "kv")
    at.slider[0].set_value(16).run()
    assert not at.exception and len(at.get("plotly_chart")) == 1
    (chart,) = at.get("plotly_chart")  # a step's time is the fastest run's; the title says so
    title = json.loads(chart.proto.spec)["layout"]["title"]["text"].replace("<br>", " ")
    assert "the fastest of 3 runs" in title
    at = _section(at, "int8")
    rows = at.dataframe[0].value
    assert list(rows["scheme"]) == ["sage", "naive"]
    assert rows.loc[0, "cosine"] > 0.99
    (chart,) = at.get("plotly_chart")  # each scheme's error as the K channel bias grows
    sage, naive = (line["y"] for line in json.loads(chart.proto.spec)["data"])
    assert naive[-1] > 3 * naive[0] and max(sage) < min(naive[1:])  # only naive's grows


def test_the_minilm_swap_with_no_variant_picked_says_so(page):
    """A visitor clears the swap's variant picker: the cosine chart's range was taken over
    no variants and the section showed an error id (found by tests/fuzz/test_fuzz_clicks.py).
    It now asks for one, and the picker stays."""
    at = _section(page("variants"), "swap")
    at.multiselect(key="swap-picked").set_value([]).run()
    assert not at.exception and not at.error
    assert any("Pick at least one variant" in i.value for i in at.info)
    assert at.multiselect(key="swap-picked").value == []


def test_trained_transformer_with_variants_swapped_in(page):
    at = page("variants")
    at.radio[0].set_value("trained").run()
    assert not at.exception
    rows = at.dataframe[0].value
    assert "translation" in rows and rows.loc[rows["variant"] == "longformer", "translation"].any()
    assert not at.warning  # a date it reads
    at.text_input[0].set_value("hello world").run()  # not a date: said before the table
    assert not at.exception and "not a date it can read" in at.warning[0].value
    at.text_input[0].set_value("x" * 200).run()
    assert not at.exception and "200 characters; the limit here is 38" in _texts(at)


def _linked(**params):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file("../../app/studios/variants.py", default_timeout=120)
    at.query_params.update(section="compare", source="synthetic", **params)
    return at.run()


def test_a_link_carries_the_hyper_parameters_its_numbers_came_from():
    """The errors table of Longformer with window 4 is not the one with window 8: a link
    keeps the knobs set away from their defaults, and opens with them set."""
    at = _linked(variants="longformer,mla", hp="longformer.window:4,mla.form:naive")
    assert not at.exception
    assert at.number_input(key="hp-synthetic-longformer-window").value == 4
    assert at.selectbox(key="hp-synthetic-mla-form").value == "naive"
    assert linked(at, "hp") == "longformer.window:4,mla.form:naive"
    errors = at.dataframe[0].value
    narrow = errors.loc[errors["variant"] == "longformer", "missed_mass"].iloc[0]
    at.number_input(key="hp-synthetic-longformer-window").set_value(8).run()  # its default
    assert linked(at, "hp") == "mla.form:naive"
    errors = at.dataframe[0].value
    assert errors.loc[errors["variant"] == "longformer", "missed_mass"].iloc[0] < narrow
    at.selectbox(key="hp-synthetic-mla-form").set_value("absorbed").run()
    assert "hp" not in at.query_params  # every knob at its default: the link says nothing


def test_a_refused_knob_in_a_link_is_said_and_the_rest_kept():
    at = _linked(variants="longformer", hp="longformer.window:0,longformer.globals:2")
    assert not at.exception
    assert at.number_input(key="hp-synthetic-longformer-window").value == 8
    assert at.number_input(key="hp-synthetic-longformer-globals").value == 2
    assert any("hp longformer.window" in i.value for i in at.info)
    assert linked(at, "hp") == "longformer.globals:2"
    unknown = _linked(variants="longformer", hp="longformer.windw:4,mla.form:naive")
    assert not unknown.exception and "hp" not in unknown.query_params
    said = " ".join(i.value for i in unknown.info)
    assert "hp longformer.windw" in said and "hp mla.form" in said  # a typo, a variant not picked
    malformed = _linked(variants="longformer", hp="window=4;<b>")
    assert not malformed.exception and "hp" not in malformed.query_params
    assert malformed.number_input(key="hp-synthetic-longformer-window").value == 8


def linked(at, param: str) -> str | None:
    """``?param=`` as the app left it (AppTest gives a list once the app has written it)."""
    value = at.query_params.get(param)
    return value[-1] if isinstance(value, list) else value


LINKED_VIEWS = {  # a section's link → each control it sets: its widget, its value, another
    "long": (
        dict(n="256", structure="random", pool="max"),
        {
            "structure": ("long-structure", "random", "local"),
            "pool": ("long-reduce", "max", "mean"),
        },
    ),
    "int8": (
        dict(n="64", d="128", bias="5.5", block="32"),
        {
            "d": ("int8-d", 128, 64),
            "bias": ("int8-bias", 5.5, 7.0),
            "block": ("int8-block", 32, 16),
        },
    ),
    "profile": (
        dict(variants="linformer,performer", lengths="128,256", d="32", time="10", memory="1.5"),
        {
            "variants": ("profile-variants", ["linformer", "performer"], ["mamba"]),
            "lengths": ("profile-lengths", [128, 256], [64]),
            "d": ("profile-d", 32, 64),
            "time": ("profile-time", 10, 20),
            "memory": ("profile-mem", 1.5, 2.0),
        },
    ),
}


@pytest.mark.parametrize("section", list(LINKED_VIEWS))
def test_every_knob_of_a_section_opens_as_linked_and_stays_in_the_link(section):
    """The numbers a section shows depend on every control above them: a link copied from
    it opens each control as it was, and keeps it in the address."""
    from streamlit.testing.v1 import AppTest

    params, controls = LINKED_VIEWS[section]
    at = AppTest.from_file("../../app/studios/variants.py", default_timeout=300)
    at.query_params.update(section=section, **params)
    at.run()
    assert not at.exception
    assert not any("could not be used" in i.value for i in at.info)
    for param, (key, value, _) in controls.items():
        assert at.get_by_key(key).value == value, key
        assert linked(at, param) == params[param], param
    for param, (key, _, other) in controls.items():  # each control changed: its link follows
        at.get_by_key(key).set_value(other).run()
        assert not at.exception
        shown = ",".join(map(str, other)) if isinstance(other, list) else str(other)
        assert linked(at, param) == shown, param
