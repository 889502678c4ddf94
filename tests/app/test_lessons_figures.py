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
