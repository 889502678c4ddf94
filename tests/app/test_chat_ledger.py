"""AppTest for the eviction ledger in Chat › Cache policies (issue 32): a window evicting
the sink, the figure and the step it shows, and 中文."""

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.models import chat as chat_lib
from tests.app.test_locales import english, interface_strings

PAGE = Path(__file__).resolve().parents[2] / "app" / "studios" / "chat.py"
pytestmark = pytest.mark.skipif(
    not chat_lib.available(), reason="the chat model is not converted: bash scripts/setup.sh"
)


def open_cache(**params) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=600)
    at.query_params.update(tokens="4", section="cache", policy="window", window="8", **params)
    return at.run()


def test_the_ledger_shows_what_a_window_loses():
    at = open_cache()
    assert not at.exception, [e.value for e in at.exception]
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    ledger = next(s for s in specs if "loses at each step" in s["layout"]["title"]["text"])
    mass, kl = ledger["data"][0]["y"], ledger["data"][1]["y"]
    assert len(mass) == len(kl) == 4
    assert all(0 < m <= 1 for m in mass) and all(k > 0 for k in kl)  # the sink is gone
    said = " ".join(m.value for m in at.markdown)
    assert "**Step 4:** the policy writes" in said
    at.slider(key="chat-ledger-step").set_value(1).run()
    assert "**Step 1:** the policy writes" in " ".join(m.value for m in at.markdown)
    assert at.query_params["lstep"] in ("1", ["1"])  # the step read is in the link


def test_the_ledger_in_chinese():
    at = open_cache(lang="zh")
    assert not at.exception, [e.value for e in at.exception]
    left = sorted({(kind, text) for kind, text in interface_strings(at) if english(text)})
    assert not left, left


def test_retrieval_heads_are_a_head_type_on_the_grid():
    """The measured retrieval score (python -m engine.evaluate retrieval_heads) on the Chat
    page's head grid, beside previous-token and induction (issue 32)."""
    at = AppTest.from_file(str(PAGE), default_timeout=600)
    at.query_params.update(tokens="2", section="heads", kind="retrieval")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert any("Retrieval score per layer and head" in x.replace("<br>", " ") for x in titles)
    assert at.selectbox(key="chat-pick-retrieval").value == "18.6"  # the top retrieval head


def chart_titles(at) -> list[str]:
    return [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]


def test_the_cost_sweep_reads_the_user_s_text_when_it_is_long_enough():
    """Issue 29: the sweep runs on the typed text when it holds more tokens than are read,
    and its title says which text it used."""
    story = " ".join(["The old fisherman rowed past the rocks at dawn, as he always did."] * 8)
    at = open_cache(text=story, template="0", n="64", budgets="16")
    assert not at.exception, [e.value for e in at.exception]
    titles = chart_titles(at)
    assert any("on 64 tokens of your prompt" in x.replace("<br>", " ") for x in titles), titles
    short = open_cache(text="Hello there", template="0", n="64", budgets="16")
    titles = chart_titles(short)
    assert any("tokens of Pride and Prejudice" in x.replace("<br>", " ") for x in titles), titles
