"""AppTest for the Chat page's "Does it matter?" section (issue 33): the logit lens, the
head-ablation sweep beside the heads' types, activation patching on a typed pair, bad input,
and 中文."""

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from engine.models import chat as chat_lib
from tests.app.plotly_support import z_values
from tests.app.test_locales import english, interface_strings

PAGE = Path(__file__).resolve().parents[2] / "app" / "studios" / "chat.py"
pytestmark = pytest.mark.skipif(
    not chat_lib.available(), reason="the chat model is not converted: bash scripts/setup.sh"
)


def open_section(**params) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=600)
    at.query_params.update(tokens="3", section="causal", **params)
    return at.run()


def figure(at, words: str) -> dict:
    for c in at.get("plotly_chart"):
        spec = json.loads(c.proto.spec)
        if words in spec["layout"]["title"]["text"].replace("<br>", " "):
            return spec
    raise AssertionError(f"no figure titled with {words!r}")


def shown(at) -> str:
    return "\n".join(str(p.value) for p in [*at.markdown, *at.info, *at.caption])


@pytest.fixture(scope="module")
def lens_view():
    at = open_section()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_logit_lens_ends_on_the_model_s_own_choice(lens_view):
    """The last row reads the last layer: the written (greedy) token is its top choice."""
    at = lens_view
    spec = figure(at, "The logit lens")
    heat = spec["data"][0]
    prob = z_values(heat["z"]).reshape(len(heat["y"]), len(heat["x"]))
    assert heat["y"][0] == "emb" and len(heat["y"]) == 31 and len(heat["x"]) == 3
    last = prob[-1]
    assert np.all(last > 0.05), last  # greedy tokens: the model's own top choices
    assert np.all((prob >= 0) & (prob <= 1))


def test_ablating_every_head_names_the_heads_that_matter(lens_view):
    at = lens_view
    at.segmented_control(key="causal-check").set_value("ablate").run()
    assert not at.exception, [e.value for e in at.exception]
    spec = figure(at, "Removing each head alone")
    heat = spec["data"][0]
    z = z_values(heat["z"]).reshape(30, 9)
    assert np.isfinite(z).all() and heat["zmin"] == -heat["zmax"]  # signed: diverging
    assert "Nothing removed, the model writes" in shown(at)
    table = at.dataframe[0].value
    assert len(table) == 5 and "previous-token score" in table.columns
    worst = float(np.nanmin(z))
    assert table["Δ log p (answer)"].iloc[0] == pytest.approx(worst, abs=1e-3)
    figure(at, "What the most needed head")  # its pattern beside its effect


def test_patching_the_ioi_pair(lens_view):
    at = lens_view
    at.segmented_control(key="causal-check").set_value("patch").run()
    assert not at.exception, [e.value for e in at.exception]
    spec = figure(at, "Each head's clean output patched")
    z = z_values(spec["data"][0]["z"])
    assert z.size == 30 * 9 and np.isfinite(z).all()


def test_a_pair_of_different_lengths_gets_a_message(lens_view):
    at = lens_view
    at.segmented_control(key="causal-check").set_value("patch").run()
    at.text_input(key="causal-corrupted").set_value("When Mary went, she gave a drink to")
    at.button[-1].click().run()  # the form's Patch
    assert not at.exception
    assert any("tokens" in i.value for i in at.info), [i.value for i in at.info]


def test_the_section_in_chinese():
    at = open_section(lang="zh")
    assert not at.exception, [e.value for e in at.exception]
    seen = interface_strings(at)
    left = sorted({(kind, text) for kind, text in seen if english(text)})
    assert not left, left
