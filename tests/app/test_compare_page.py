"""The Compare page through AppTest: every en→fr model's alignment of one sentence, on the
same axes, with its AER; two models side by side with their difference."""

import html
import json
import re

import numpy as np
import pytest

from tests.app.plotly_support import shown_numbers, z_values


@pytest.fixture
def at(page):
    return page("compare")


def captions(at) -> list[str]:
    return [c.value for c in at.caption]


def grids(at) -> list[str]:
    """The HTML alignment grids on screen (the page draws its maps as HTML, not Plotly)."""
    return [h.proto.body for h in at.get("html") if "kit-agrid" in h.proto.body]


def panels(at) -> int:
    return sum(g.count('class="kit-agrid-panel"') for g in grids(at))


def test_bahdanau_and_transformer_alignments_side_by_side_with_their_aer(at):
    from state.compare import aligners

    assert not at.exception
    assert at.segmented_control(key="cmp-task").value == "en-fr"
    rows = at.dataframe[0].value
    families = {c.name: c.family for c in aligners("en-fr")}
    titles = {c.title: c.family for c in aligners("en-fr")}
    assert {"nmt", "transformer"} <= {titles[m] for m in rows["model"]}
    # The example is from the grammar: every model's every head has an AER in [0, 1].
    heads = rows.drop(columns=["model", "alignment from"])
    # A column with a gap: numbers, "–" drawn in the gap (st.dataframe's placeholder).
    heads = heads.apply(shown_numbers)
    assert "α" in heads and "L1 H0" in heads
    assert heads.min().min() >= 0 and heads.max().max() <= 1
    assert heads.notna().any(axis=1).all(), "every model has an AER"
    shown = [c for c in captions(at) if c.startswith("AER **")]
    assert any(" · α · " in c for c in shown), "an RNNsearch panel with its AER"
    assert any(" · L1 H" in c for c in shown), "a Transformer head with its AER"
    # One panel per model with attention, in one figure (RNNencdec has none, and says so).
    with_attention = [n for n in families if n != "nmt-enfr-none"]
    assert len(grids(at)) == 1 and not at.get("plotly_chart")  # drawn as HTML, not Plotly
    assert panels(at) == len(with_attention)
    assert "class=sure" in grids(at)[0], "the gold links are marked"
    # The export bundle still gets the grid as a Plotly figure (built when downloaded).
    exported = json.loads(at.session_state["kit-figures"]["cmp-all"].to_json())
    assert sum(d["type"] == "heatmap" for d in exported["data"]) == len(with_attention)
    assert len(shown) == len(with_attention)
    assert any("No attention" in c for c in captions(at))
    assert all(("forced alignment" in c) or ("its own translation" in c) for c in shown)


def test_head_choice_redraws_every_transformer_panel(at):
    at.selectbox(key="cmp-head").set_value("L0 H1").run()
    assert not at.exception
    assert sum(" · L0 H1 · " in c for c in captions(at)) == 3  # one per positional encoding


def test_two_models_and_their_difference(at):
    at.segmented_control(key="cmp-mode").set_value("two").run()
    assert not at.exception
    at.selectbox(key="cmp-A").set_value("nmt-enfr-additive")
    at.selectbox(key="cmp-B").set_value("transformer-enfr-sinusoidal").run()
    assert not at.exception
    assert panels(at) == 3  # A, B and α_A − α_B
    assert "α_A − α_B" in grids(at)[-1] and "Δα" in grids(at)[-1]
    shown = [c for c in captions(at) if c[3:].startswith("AER **")]  # "A: AER …", "B: AER …"
    assert len(shown) == 2
    exported = at.session_state["kit-figures"]
    assert {"cmp-two", "cmp-diff"} <= set(exported)
    assert json.loads(exported["cmp-diff"].to_json())["data"][0]["zmin"] == -1


def test_two_dates_models_share_axes(at):
    at.segmented_control(key="cmp-task").set_value("dates").run()
    at.segmented_control(key="cmp-mode").set_value("two").run()
    assert not at.exception
    assert panels(at) == 3
    assert not at.info, "the two dates models read the same characters"


def largest_difference(at) -> float:
    """max |α_A − α_B| in the difference figure the page exports."""
    z = json.loads(at.session_state["kit-figures"]["cmp-diff"].to_json())["data"][0]["z"]
    return float(np.nanmax(np.abs(z_values(z))))


def test_one_model_with_two_attentions(at):
    """The dates Transformer as shipped against itself with a registry variant in every layer."""
    at.segmented_control(key="cmp-task").set_value("dates").run()
    at.segmented_control(key="cmp-mode").set_value("two").run()
    name = "transformer-dates-sinusoidal"
    at.selectbox(key="cmp-A").set_value(name).run()
    at.selectbox(key="cmp-B").set_value(name).run()
    assert not at.exception and panels(at) == 3
    assert largest_difference(at) == 0  # the same model and attention: nothing to show
    at.selectbox(key=f"cmp-B-{name}-attend").set_value("longformer").run()
    assert not at.exception
    assert panels(at) == 3
    assert largest_difference(at) > 0.05  # B really ran with Longformer's band
    at.selectbox(key=f"cmp-B-{name}-attend").set_value("linformer").run()
    assert not at.exception  # its default k is longer than a date: said, not raised
    assert any("Linformer k must be at most" in i.value for i in at.info)


def test_words_outside_the_vocabulary_are_said_above_the_maps(at):
    """A teacher types her own sentence: every model still writes French, and the page says
    (as the Alignment page does) which words no model knows, so the maps are not read as a
    translation; in both views. The grammar's example has no such warning, nor a date."""
    assert not at.warning  # the example: known words, every model sure of itself
    at.text_area[0].set_value("hello my *friend*").run()
    assert not at.exception
    said = [w.value for w in at.warning]
    assert len(said) == 1 and "“hello”" in said[0] and "not translations" in said[0]
    at.segmented_control(key="cmp-mode").set_value("two").run()
    assert not at.exception and "“hello”" in at.warning[0].value
    at.segmented_control(key="cmp-task").set_value("dates").run()
    assert not at.exception and not at.warning


@pytest.mark.parametrize("text, expected", [("   ", "Type"), ("x" * 2_001, "limit")])
def test_bad_input_is_explained(at, text, expected):
    at.text_area[0].set_value(text).run()
    assert not at.exception
    assert any(expected in i.value for i in at.info)


def test_every_word_in_the_grid_is_escaped_text():
    import numpy as np
    from views.alignment_html import alignment_grid_html

    hostile = "<img src=x onerror=alert(1)>"
    panel = dict(weights=np.array([[0.25, 0.75]]), src=[hostile, "b"], tgt=['"q'], title=["m", "α"])
    markup = alignment_grid_html([panel])
    assert hostile not in markup and "&lt;img src=x onerror=alert(1)&gt;" in markup
    assert 'title="&quot;q ← b: α = 0.750"' in markup  # the tooltip gives words and α


def test_the_view_exports_both_models_traces(page, downloads):
    """A side-by-side view's zip holds each shown model's Trace, not one of them."""
    import io
    import zipfile

    from engine.trace import Trace

    made = downloads
    at = page("compare")
    at.segmented_control(key="cmp-mode").set_value("two").run()
    at.selectbox(key="cmp-A").set_value("nmt-enfr-additive")
    at.selectbox(key="cmp-B").set_value("transformer-enfr-sinusoidal").run()
    assert not at.exception
    with zipfile.ZipFile(io.BytesIO(made["compare-en-fr-view.zip"]())) as z:
        names = set(z.namelist())
        a = Trace.from_json(z.read("trace-A-nmt-enfr-additive.json"))
        b = Trace.from_npz(z.read("trace-B-transformer-enfr-sinusoidal.npz"))
    assert a.model == "nmt-enfr-additive" and b.model == "transformer-enfr-sinusoidal"
    assert {"data/attention-A-nmt-enfr-additive.csv", "link.txt"} <= names


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_attention_picker_names_each_way_as_the_lab_does(at, lang):
    """The picker lists exact attention and each variant by its title, and a variant's
    knobs by its own labels, in the reader's language (it listed registry ids: "exact",
    "linformer", and labelled Longformer's window with no name)."""
    from kit import i18n

    from engine.variants import REGISTRY

    at.query_params["lang"] = lang
    at.run()
    at.segmented_control(key="cmp-task").set_value("dates").run()
    at.segmented_control(key="cmp-mode").set_value("two").run()
    name = "transformer-dates-sinusoidal"
    at.selectbox(key="cmp-B").set_value(name).run()
    picker = at.selectbox(key=f"cmp-B-{name}-attend")
    longformer = REGISTRY["longformer"]
    assert picker.options[0] == i18n.catalog(lang)["compare.attend_exact"]
    assert i18n.variant_title(longformer) in picker.options and "linformer" not in picker.options
    picker.set_value("longformer").run()
    window = next(p for p in longformer.params if p.name == "window")
    labels = [s.label for s in at.slider]
    assert i18n.param_label(window, longformer) in labels, labels
    i18n._last = i18n.DEFAULT


def test_a_link_restores_the_attention_each_model_ran_with():
    """A researcher's link to "B with Longformer in every layer" opens B with Longformer
    (the picker was not in the link: the page opened on exact attention)."""
    from streamlit.testing.v1 import AppTest

    name = "transformer-dates-sinusoidal"
    at = AppTest.from_file("../../app/studios/compare.py", default_timeout=300)
    at.query_params.update(task="dates", mode="two", a=name, b=name, b_attend="longformer")
    at.run()
    assert not at.exception
    assert at.selectbox(key=f"cmp-B-{name}-attend").value == "longformer"
    assert at.selectbox(key=f"cmp-A-{name}-attend").value == "exact"
    assert largest_difference(at) > 0.05  # B really ran with Longformer's band
    at.selectbox(key=f"cmp-B-{name}-attend").set_value("performer").run()
    assert at.query_params["b_attend"] in ("performer", ["performer"])


def test_a_link_carries_the_knobs_each_side_ran_with():
    """ "B with Longformer, window 2" is two things: the link keeps the window too, the
    widget a link seeds shows it, and a value the variant refuses is said and dropped."""
    from streamlit.testing.v1 import AppTest

    name = "transformer-dates-sinusoidal"
    window = f"cmp-B-{name}-longformer-window"
    at = AppTest.from_file("../../app/studios/compare.py", default_timeout=300)
    at.query_params.update(task="dates", mode="two", a=name, b=name, b_attend="longformer")
    at.query_params["b_hp"] = "longformer.window:2,longformer.globals:0"
    at.run()
    assert not at.exception
    assert at.slider(key=window).value == 2
    assert at.slider(key=f"cmp-B-{name}-longformer-globals").value == 0
    assert linked(at, "b_hp") == "longformer.window:2,longformer.globals:0"
    narrow = largest_difference(at)
    at.slider(key=window).set_value(8).run()  # back to its default: out of the link
    assert linked(at, "b_hp") == "longformer.globals:0"
    assert largest_difference(at) != narrow  # the figure follows the knob

    refused = AppTest.from_file("../../app/studios/compare.py", default_timeout=300)
    refused.query_params.update(task="dates", mode="two", a=name, b=name, b_attend="longformer")
    refused.query_params["b_hp"] = "longformer.window:99999"  # beyond the variant's 1 … 1024
    refused.run()
    assert not refused.exception
    assert refused.slider(key=window).value == 8
    assert any("b_hp longformer.window" in i.value for i in refused.info)
    assert "b_hp" not in refused.query_params


def test_a_link_keeps_the_head_each_side_shows():
    from streamlit.testing.v1 import AppTest

    name = "transformer-dates-sinusoidal"
    at = AppTest.from_file("../../app/studios/compare.py", default_timeout=300)
    at.query_params.update(task="dates", mode="two", a=name, b=name)
    at.run()
    picker = at.selectbox(key="cmp-head-B")
    other = next(h for h in picker.options if h != picker.value)
    picker.set_value(other).run()
    assert linked(at, "b_head") == other
    reopened = AppTest.from_file("../../app/studios/compare.py", default_timeout=300)
    reopened.query_params.update(task="dates", mode="two", a=name, b=name, b_head=other)
    reopened.run()
    assert not reopened.exception
    assert reopened.selectbox(key="cmp-head-B").value == other
    titles = re.findall(r"kit-agrid-title[^>]*>(.*?)</", " ".join(grids(reopened)))
    assert any(t.startswith("B: ") and t.endswith(f"<br>{html.escape(other)}") for t in titles)


def test_choosing_another_model_drops_the_knobs_of_the_last():
    from streamlit.testing.v1 import AppTest

    name = "transformer-dates-sinusoidal"
    at = AppTest.from_file("../../app/studios/compare.py", default_timeout=300)
    at.query_params.update(task="dates", mode="two", a=name, b=name, b_attend="longformer")
    at.query_params["b_hp"] = "longformer.window:2"
    at.run()
    at.selectbox(key="cmp-B").set_value("nmt-dates").run()  # no attention variants
    assert not at.exception
    assert not {"b_hp", "b_attend"} & set(at.query_params)
    assert linked(at, "b_head") == at.selectbox(key="cmp-head-B").value  # the new model's


def linked(at, param: str) -> str | None:
    """``?param=`` as the app left it (AppTest gives a list once the app has written it)."""
    value = at.query_params.get(param)
    return value[-1] if isinstance(value, list) else value
