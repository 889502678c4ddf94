"""What the retrieval lesson tells a class about one bAbI story, measured again: the deck
said "The answer is right" beside a chat model that answers « kitchen » where the answer
is « office ». A deck's words about a model's output are held to that output here."""

from pathlib import Path

import pytest
from state import retrieval as state

from engine.models import chat as chat_lib

pytestmark = pytest.mark.skipif(
    not chat_lib.available(), reason="the chat model is not converted: bash scripts/setup.sh"
)

STEPS = ("reading", "side-by-side")  # the deck's steps 3 and 4, on task 2's story 0


def test_the_retrieval_decks_story_is_read_as_its_steps_say():
    shown = state.lesson({"store": "babi", "task": "2", "story": "0", "section": STEPS[1]})
    sample = shown["sample"]
    assert sample.answer == "office" and sample.question == "Where is the milk?"
    # step 3: retrieval put both supporting facts in the prompt, the model says « kitchen »
    assert set(sample.support) <= set(shown["found"].top)
    assert "kitchen" in shown["trace"].outputs["answer"]
    # step 4: the whole story gives the same wrong answer; MemN2N answers « office »
    assert "kitchen" in shown["side"]["trace"].outputs["answer"]
    assert shown["side"]["memn2n"][1].outputs["answer"] == "office"
    decks = Path(__file__).parents[2] / "assets" / "decks"
    for lang in ("en", "zh"):
        deck = (decks / f"retrieval.{lang}.toml").read_text()
        assert "« kitchen »" in deck and "« office »" in deck
