"""AppTest for the Chat page's "Does it matter?" section (issue 33): the logit lens, the
head-ablation sweep beside the heads' types, activation patching on a typed pair, the
faithfulness meter of a written token, bad input, and 中文."""

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from engine.models import chat as chat_lib
from tests.app.plotly_support import shown_numbers, z_values
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
    # A short prompt: the every-head sweep is ∝ its tokens, and a slow CI machine must
    # finish it inside the queue's time limit (the default prompt's 37 tokens took > 90 s).
    at = open_section(text="The capital of France is", template="0")
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
    assert at.query_params["sweep"] in ("heads", ["heads"])  # the sweep shown is in the link


def test_a_pair_of_different_lengths_gets_a_message(lens_view):
    at = lens_view
    at.segmented_control(key="causal-check").set_value("patch").run()
    at.text_input(key="causal-corrupted").set_value("When Mary went, she gave a drink to")
    at.button[-1].click().run()  # the form's Patch
    assert not at.exception
    assert any("tokens" in i.value for i in at.info), [i.value for i in at.info]


def test_the_faithfulness_meter_of_the_first_written_token(lens_view):
    """Four rows over the prompt's tokens, each scaled to its largest |value| (the table
    below holds the same numbers unscaled), the agreement of each reading and a verdict."""
    at = lens_view
    at.segmented_control(key="causal-check").set_value("faithful").run()
    assert not at.exception, [e.value for e in at.exception]
    spec = figure(at, "Which input tokens matter")
    heat = spec["data"][0]
    n, columns = len(heat["y"]), len(heat["x"])
    z = z_values(heat["z"]).reshape(n, columns)
    assert columns == 4 and heat["x"][2] == "occlusion Δ"  # no IG for this model
    assert np.allclose(np.abs(z).max(0), 1.0, atol=1e-3) and heat["zmin"] == -1
    agreement, numbers = (d.value for d in at.dataframe[-2:])
    assert len(agreement) == 4
    assert set(agreement["attention reading"]) == {"attention L29", "rollout"}
    assert len(numbers) == n  # one row per input token: the prompt as the model read it
    occlusion = shown_numbers(numbers["occlusion Δ"])
    assert np.allclose(z[:, 2], occlusion / np.abs(occlusion).max(), atol=2e-3)
    assert "Verdict." in shown(at) and "log p(" in shown(at)
    at.slider(key="causal-faithful-layer").set_value(3).run()  # a view change: no rerun
    assert not at.exception
    assert figure(at, "Which input tokens matter")["data"][0]["x"][0] == "attention L3"


def test_a_token_read_after_too_many_tokens_gets_a_message():
    at = open_section(check="faithful", text="word " * 60)
    assert not at.exception, [e.value for e in at.exception]
    assert "the meter reads at most 64" in shown(at)
    assert not [c for c in at.get("plotly_chart") if "Which input" in c.proto.spec]


def test_the_section_in_chinese():
    at = open_section(lang="zh")
    assert not at.exception, [e.value for e in at.exception]
    seen = interface_strings(at)
    left = sorted({(kind, text) for kind, text in seen if english(text)})
    assert not left, left
