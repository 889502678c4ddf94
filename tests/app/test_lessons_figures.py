"""The Lessons page draws its figures through kit.chart, as every page does: the browser's
PNG/SVG export config on each, and the presenter's larger type when presenting."""

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = Path(__file__).resolve().parents[2] / "app" / "studios" / "lessons.py"


@pytest.mark.parametrize("deck, step", [("transformer", "2"), ("transformer", "3")])
def test_lesson_figures_carry_the_export_config_and_the_presenter_style(deck, step):
    at = AppTest.from_file(str(PAGE), default_timeout=300)
    at.query_params.update(deck=deck, step=step, present="1")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    drawn = at.get("plotly_chart")
    assert drawn
    for el in drawn:
        assert json.loads(el.proto.config)["toImageButtonOptions"]["filename"]
    figures = at.session_state["kit-figures"]
    assert figures and all(fig.layout.font.size >= 18 for fig in figures.values())


def test_a_decks_variant_knobs_reach_the_lesson_view():
    """A deck's view may say ``hp=longformer.window:2`` as the Variants lab's link does; the
    lesson drew the defaults beside it."""

    def lesson_view():
        import streamlit as st
        from studios import lessons_views

        view = {"section": "compare", "variants": "full,longformer"}
        lessons_views.variants(view | st.session_state["view"], None, "lesson-variants")

    missed = {}
    for hp in ("", "longformer.window:1"):
        at = AppTest.from_function(lesson_view, default_timeout=300)
        at.session_state["view"] = {"hp": hp}
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        table = at.dataframe[0].value
        missed[hp] = float(table.loc[table["variant"] == "longformer", "missed_mass"].iloc[0])
    assert missed["longformer.window:1"] > missed[""]  # a narrower window misses more


def test_knobs_by_variant():
    from kit.knobs import by_variant

    assert by_variant("longformer.window:4,mla.form:naive,longformer.globals:0") == {
        "longformer": {"window": "4", "globals": "0"},
        "mla": {"form": "naive"},
    }
    assert by_variant("") == {}
