"""Links restore a view, bad links fall back with a note, presenter mode, and the view's zip.

The zip is the one the "Download this view" button hands the browser: the test records the
callable the button registers (Streamlit runs it on click) and calls it.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import plotly.io as pio
import pytest
from kit import i18n
from streamlit.testing.v1 import AppTest

from engine.trace import Trace

APP = Path(__file__).resolve().parents[2] / "app"
ALIGNMENT = str(APP / "studios/alignment.py")


def opened(query: dict, path: str = ALIGNMENT) -> AppTest:
    at = AppTest.from_file(path, default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def notes(at) -> list[str]:
    return [i.value for i in at.info if "could not be used" in i.value]


def test_a_link_restores_the_alignment_view():
    at = opened({"task": "en-fr", "text": "the minister signed the treaty .", "beam": "3"})
    assert at.text_area[0].value == "the minister signed the treaty ."
    assert at.slider(key="nmt-beam").value == 3
    assert not notes(at)
    at = opened({"section": "steps", "step": "2"})
    assert at.segmented_control(key="nmt-section").value == "steps"
    assert at.slider(key="nmt-step").value == 2
    assert "At step **2**" in "\n".join(m.value for m in at.markdown)


def test_widgets_write_the_view_into_the_url():
    at = opened({})
    at.slider(key="nmt-beam").set_value(7).run()
    at.segmented_control(key="nmt-section").set_value("steps").run()
    q = at.query_params
    assert q["beam"] == "7" and q["section"] == "steps" and q["task"] == "en-fr"
    assert q["model"] and q["text"] and q["step"] == "1"


@pytest.mark.parametrize(
    "query",
    [
        {"model": "nmt-enfr-from-a-future-release"},  # outdated
        {"section": "<img src=x onerror=alert(1)>"},  # hostile
        {"beam": "1e999"},
        {"beam": "nan"},
        {"beam": "99"},
        {"task": "klingon"},
        {"text": "x" * 100_000},  # huge
        {"present": "maybe"},
    ],
)
def test_a_bad_link_falls_back_to_defaults_with_a_note(query):
    at = opened(query)
    (param,) = query
    assert len(notes(at)) == 1 and f"“{param}”" in notes(at)[0]
    assert at.query_params.get(param) != query[param]  # dropped or replaced
    assert at.segmented_control(key="nmt-section").value == "alignment"
    assert at.slider(key="nmt-beam").value == 5


@pytest.mark.parametrize(
    "query, said",
    [
        ({"beam": "99"}, "it was “99”, and this page takes a whole number from 1 to 10"),
        ({"task": "klingon"}, "it was “klingon”, and this page takes one of: en-fr, dates"),
        ({"beam": "**7**"}, r"it was “\*\*7\*\*”"),  # shown as typed, not bold
        ({"text": "x" * 3000}, "it was “" + "x" * 40 + "…”"),
    ],
)
def test_a_dropped_link_value_is_named_with_what_the_page_takes(query, said):
    """A teacher hand-edits a link (beam=99, a task the studio lacks): the note said only
    "unknown, out of range or malformed". It names the value the link held (escaped, cut
    to 40 characters) and what the page takes, so the link can be mended."""
    (note,) = notes(opened(query))
    assert said in note, note
    assert note.endswith("The default is shown.")


def test_hostile_text_is_shown_as_typed_never_as_html():
    text = "<script>alert(1)</script> the minister"
    at = opened({"text": text})
    assert at.text_area[0].value == text
    assert not any("<script>" in m.value for m in at.markdown)


def test_presenter_mode_from_the_url_and_the_toggle():
    at = opened({"present": "1"})
    assert at.toggle(key="kit-present").value is True
    css = " ".join(h.proto.body for h in at.get("html"))
    assert "stSidebar" in css and "kit-controls" in css
    at.toggle(key="kit-present").set_value(False).run()
    assert "present" not in at.query_params
    assert "stSidebar" not in " ".join(h.proto.body for h in at.get("html"))


def test_presenter_palettes_are_colour_blind_safe():
    at = opened({"present": "1"})
    fig = at.session_state["kit-figures"]["nmt-gold"]
    scales = [t.colorscale for t in fig.data if getattr(t, "colorscale", None)]
    scales += [fig.layout.coloraxis.colorscale] if fig.layout.coloraxis.colorscale else []
    assert scales and all(s in ("Cividis", "cividis") or isinstance(s, tuple) for s in scales)
    assert fig.layout.font.size >= 18


def test_every_figure_downloads_png_or_svg_from_the_browser():
    at = opened({})
    chart = at.get("plotly_chart")[0].proto
    assert json.loads(chart.config)["toImageButtonOptions"]["format"] == "png"
    at.segmented_control(key="kit-image-format").set_value("svg").run()
    config = json.loads(at.get("plotly_chart")[0].proto.config)
    assert config["toImageButtonOptions"]["format"] == "svg"


def test_download_this_view_bundles_figures_trace_data_and_link(downloads):
    made = downloads
    at = opened({"text": "the minister signed the treaty ."})
    name = next(n for n in made if n.endswith("-view.zip"))
    with zipfile.ZipFile(io.BytesIO(made[name]())) as z:
        files = set(z.namelist())
        assert {"trace.json", "trace.npz", "link.txt", "README.txt"} <= files
        figures = [f for f in files if f.startswith("figures/") and f.endswith(".json")]
        assert figures and pio.from_json(z.read(figures[0]).decode())
        assert "data/attention.csv" in files and "data/attention.json" in files
        link = z.read("link.txt").decode()
        assert "text=the+minister+signed" in link and "model=" in link
        from_json = Trace.from_json(z.read("trace.json"))
        from_npz = Trace.from_npz(z.read("trace.npz"))
    assert from_json.to_json() == from_npz.to_json()
    assert from_json.outputs == from_npz.outputs and from_json.inputs["tokens"]
    a, b = from_json.maps["alignment"], from_npz.maps["alignment"]
    assert a.weights.dtype == b.weights.dtype and (a.weights == b.weights).all()
    assert at.text_area[0].value == "the minister signed the treaty ."


def test_a_trace_button_states_a_size_a_reader_can_use():
    """A small trace said "≈ 0.0 MB", as if the file were empty."""
    from kit.exports import file_size

    assert [file_size(n) for n in (1, 420, 12_345, 99_499, 300_000, 34_000_000)] == [
        "1 kB",
        "1 kB",
        "12 kB",
        "99 kB",
        "0.3 MB",
        "34 MB",
    ]
    at = opened({})
    labels = [b.label for b in at.get("download_button") if "trace" in b.label]
    assert len(labels) == 2 and not [x for x in labels if "0.0 MB" in x], labels


def test_new_strings_exist_in_both_languages():
    for area in ("presenter", "links", "exports"):
        en = {k for k in i18n.catalog("en") if k.startswith(f"{area}.")}
        assert en and en == {k for k in i18n.catalog("zh") if k.startswith(f"{area}.")}


PREPARED = {
    "basics": {"text": "the cat sat on the mat", "heads": "2", "head": "1", "step": "3"},
    "positional": {"section": "rotation", "k": "7", "d_model": "32", "length": "50"},
    "memory": {"task": "2", "story": "3", "section": "hops", "hop": "2"},
    "transformer": {"attention": "cross", "layer": "1", "head": "2", "section": "grid"},
    "compare": {"mode": "two", "example": "1"},
    "variants": {"section": "kv", "n": "64"},
}


@pytest.mark.parametrize("name", list(PREPARED))
def test_a_prepared_link_opens_the_same_state_on_every_page(name):
    from catalog import PAGES

    path = str(APP / next(p.path for p in PAGES if p.url == name))
    at = opened(PREPARED[name], path)
    assert not notes(at), notes(at)
    for key, value in PREPARED[name].items():
        assert at.query_params[key] == value, key
    assert at.get("html"), "the copy-link box and the presenter CSS are drawn"


def test_a_link_names_every_page_widget_it_restores():
    at = opened({}, str(APP / "studios/transformer.py"))
    assert {"family", "model", "example", "text", "attention", "reading", "section"} <= set(
        at.query_params
    )


def test_links_use_the_address_the_class_reaches(monkeypatch):
    """A configured public address replaces the server's view of the origin, in the copy
    box and in the view's zip; the browser's own path and query are kept."""
    monkeypatch.setenv("ATTENTION_STUDIO_PUBLIC_URL", "http://studio.school.example:8501/")
    at = opened({"text": "the minister signed the treaty ."})
    box = next(h.proto.body for h in at.get("html") if "kit-link-text" in h.proto.body)
    assert 'data-public="http://studio.school.example:8501"' in box
    assert 'value="http://studio.school.example:8501?' in box, box
