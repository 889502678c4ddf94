"""AppTest for the router, home, attention basics and positional encoding pages."""

import json

import numpy as np
from catalog import APP_DIR, PAGES
from streamlit.testing.v1 import AppTest

from engine import positional
from tests.app.plotly_support import z_values as numbers


def test_every_catalogued_page_exists():
    assert [p.path for p in PAGES if not (APP_DIR / p.path).is_file()] == []


def test_router_runs_and_home_links_every_page():
    at = AppTest.from_file(str(APP_DIR / "main.py"), default_timeout=60)
    at.run()
    assert not at.exception
    assert at.title[0].value == "Attention Studio"
    # Home is the default page; its links only resolve inside the router, as for a user.
    links = [el.proto.label for el in at.get("page_link")]
    assert links == [p.title for p in PAGES if p.url != "home"]


def test_basics_default_walkthrough_and_every_step(page):
    at = page("basics")
    assert not at.exception
    assert at.header[0].value == "5 · Softmax"
    for step in (
        "1 · Embeddings X",
        "2 · Queries, keys, values",
        "3 · Scores QKᵀ",
        "4 · Scaling by 1/√d_k",
        "6 · Weighted values",
        "Without the scaling",
        "With a causal mask",
        "All heads",
    ):
        at.segmented_control(key="basics_step").set_value(step).run()
        assert not at.exception, step
        assert at.header[0].value == step
        assert len(at.get("plotly_chart")) >= 1
        if step == "Without the scaling":
            assert any("saturates" in m.value for m in at.markdown)
        if step == "All heads":  # one grid, two heads a row, not four slivers side by side
            import json

            (spec,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
            assert sum(d["type"] == "heatmap" for d in spec["data"]) == 4
            assert (
                spec["layout"]["xaxis"]["domain"][1] - spec["layout"]["xaxis"]["domain"][0] > 0.35
            )


def test_basics_queries_keys_values_share_one_token_axis_and_one_scale(page):
    """Q, K and V are one figure: the tokens named once, one colour bar on ± the largest |value|
    of the three (three 178-px figures at 1024 px cut their token labels and bars)."""
    at = page("basics")
    at.segmented_control(key="basics_step").set_value("2 · Queries, keys, values").run()
    (spec,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    maps = [d for d in spec["data"] if d["type"] == "heatmap"]
    assert [d["xaxis"] for d in maps] == ["x", "x2", "x3"] and {d["yaxis"] for d in maps} == {"y"}
    assert [d.get("showscale") for d in maps] == [True, False, False]
    top = max(np.abs(numbers(d["z"])).max() for d in maps)
    assert all(d["zmin"] == -d["zmax"] and np.isclose(d["zmax"], top, rtol=1e-5) for d in maps)
    spans = [spec["layout"][f"xaxis{s}"]["domain"] for s in ("", "2", "3")]
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False))
    assert [a["text"] for a in spec["layout"]["annotations"]] == ["Q", "K", "V"]


def test_basics_updates_with_new_text_and_head(page):
    at = page("basics")
    at.text_area(key="basics_text").set_value("one two three").run()
    assert not at.exception
    assert "**3 tokens**" in at.markdown[0].value
    at.selectbox[1].set_value(8).run()
    at.number_input[0].set_value(7).run()
    assert not at.exception
    assert "showing head 7" in at.markdown[0].value


def test_basics_empty_and_huge_text_give_messages(page):
    at = page("basics")
    at.text_area(key="basics_text").set_value("   ").run()
    assert not at.exception and "Type a sentence" in at.info[0].value
    at.text_area(key="basics_text").set_value("word " * 300).run()
    assert not at.exception and "limit here is 256" in at.info[0].value


def messages(at) -> str:
    """What the page told the user (an input it cannot use is a calm note, not an error)."""
    return " ".join(m.value for m in [*at.info, *at.warning])


def rotation_section(at):
    """The rotation check is one section among several: select it as a user would."""
    at.segmented_control(key="pe_section").set_value("rotation").run()
    return at


def test_positional_default(page):
    at = page("positional")
    assert not at.exception
    rotation_section(at)
    assert any("rotation" in h.value for h in at.header)
    assert any("largest" in m.value for m in at.markdown)


def test_positional_bad_d_model_and_length(page):
    at = page("positional")
    at.number_input[0].set_value(33).run()
    assert not at.exception and "even" in messages(at)
    at.number_input[0].set_value(64).run()
    at.number_input[1].set_value(5000).run()
    assert not at.exception and "2048" in messages(at)


def test_positional_offset_past_its_limit_is_a_note_that_states_it(page):
    at = page("positional")
    at.number_input[2].set_value(200_000).run()
    assert not at.exception and "|k| ≤ 100,000; got 200000" in messages(at)
    at.number_input[2].set_value(-100_000).run()
    assert not at.exception and "|k|" not in messages(at)


def test_positional_rotation_for_user_k(page):
    at = rotation_section(page("positional"))
    at.number_input[2].set_value(-12).run()
    assert not at.exception
    assert any("PE(pos + -12)" in h.value for h in at.header)


def test_positional_every_section_draws(page):
    at = page("positional")
    ids = ("curves", "table", "similarity", "rotation", "learned")
    assert len(at.segmented_control(key="pe_section").options) == len(ids), "a section unvisited"
    for name in ids:
        at.segmented_control(key="pe_section").set_value(name).run()
        assert not at.exception, name
        assert len(at.get("plotly_chart")) >= 1, name
    assert any("Learned" in h.value for h in at.header)


def test_positional_curves_draw_each_clock_apart_with_its_wavelength(page):
    """One panel a dimension, fastest on top whatever the pick order; a sin/cos pair shares
    a colour no other dimension has; the dots are the table's values at whole positions and
    the line is the same function between them (not straight segments: sin pos turns a
    sixth of a circle from one position to the next). Overlaid, the old figure was a tangle."""
    at = page("positional")
    at.multiselect(key="pe_dims").set_value([32, 5, 0, 1, 4]).run()
    assert not at.exception
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    notes = [a["text"] for a in spec["layout"]["annotations"]]
    assert [n.split(" (")[0] for n in notes] == ["dim 0", "dim 1", "dim 4", "dim 5", "dim 32"]
    assert "one turn every 6.3 positions" in notes[0] and "every 628 positions" in notes[4]
    lines, dots = spec["data"][0::2], spec["data"][1::2]
    colours = [d["marker"]["color"] for d in dots]
    assert colours[0] == colours[1] and colours[2] == colours[3]
    assert len({colours[0], colours[2], colours[4]}) == 3
    pe = positional.sinusoidal(100, 64)
    np.testing.assert_allclose(numbers(dots[2]["y"]), pe[:, 4], atol=1e-6)  # at whole positions
    x, y = numbers(lines[0]["x"]), numbers(lines[0]["y"])
    assert len(x) > 4 * 100  # drawn between the positions, not only at them
    np.testing.assert_allclose(y, np.sin(x), atol=1e-6)  # sent as float32
    at.multiselect(key="pe_dims").set_value([]).run()
    assert not at.exception and not at.get("plotly_chart")
    assert "Pick a dimension" in messages(at)


def test_positions_are_named_at_round_steps():
    """Plotly thinned 100 positions to 0, 3, 6 … 99; about a dozen round ones read better."""
    from views.positional import similarity_figure, table_figure

    sim = similarity_figure(np.eye(100), "PE · PE", "dot").layout
    assert (sim.xaxis.dtick, sim.yaxis.dtick, sim.yaxis.tick0) == (10, 10, 0)
    assert sim.xaxis.tickmode == sim.yaxis.tickmode == "linear"
    long = table_figure(np.zeros((2048, 8)), "PE").layout
    assert long.yaxis.dtick == 200 and long.xaxis.dtick is None  # dimensions: as before
    assert similarity_figure(np.eye(8), "PE · PE", "dot").layout.xaxis.dtick == 1
