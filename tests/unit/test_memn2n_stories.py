"""The shipped MemN2N models on short, hand-written stories (2–4 sentences), the way a
class types them: each bAbI task's serving model (``registry.for_babi_task``) answers
every story of its task, and the joint model, which serves task 6, says "no" to
"Daniel went back to the hallway. Sandra moved to the garden. Is Daniel in the garden?".
The stories are written for these tests in the tasks' own phrasing, not generated."""

import pytest

from engine.models import registry
from engine.models.cards.memn2n import parse

# task → [(story with its question as the last line, answer)]
STORIES = {
    1: [
        ("Mary moved to the bathroom.\nJohn went to the hallway.\nWhere is Mary?", "bathroom"),
        ("Daniel went back to the kitchen.\nDaniel journeyed to the office.\nWhere is Daniel?",
         "office"),
        ("Sandra travelled to the garden.\nJohn moved to the bedroom.\n"
         "Sandra went to the hallway.\nWhere is Sandra?", "hallway"),
    ],
    2: [
        ("John went to the kitchen.\nJohn picked up the apple.\nWhere is the apple?", "kitchen"),
        ("Mary moved to the garden.\nMary got the football.\nMary went to the office.\n"
         "Where is the football?", "office"),
        ("Sandra went to the bedroom.\nSandra took the milk.\nSandra dropped the milk.\n"
         "Where is the milk?", "bedroom"),
    ],
    3: [
        ("John moved to the office.\nJohn got the apple.\nJohn went to the kitchen.\n"
         "Where was the apple before the kitchen?", "office"),
        ("Mary went to the garden.\nMary picked up the football.\nMary travelled to the hallway.\n"
         "Where was the football before the hallway?", "garden"),
    ],
    4: [
        ("The office is north of the bedroom.\nThe bedroom is east of the garden.\n"
         "What is north of the bedroom?", "office"),
        ("The kitchen is west of the hallway.\nThe bathroom is south of the kitchen.\n"
         "What is the kitchen west of?", "hallway"),
    ],
    6: [
        ("Daniel went back to the hallway.\nSandra moved to the garden.\n"
         "Is Daniel in the garden?", "no"),
        ("Mary moved to the bathroom.\nJohn went to the hallway.\nIs Mary in the bathroom?",
         "yes"),
        ("Sandra journeyed to the kitchen.\nSandra went to the garden.\n"
         "Is Sandra in the kitchen?", "no"),
        ("John travelled to the office.\nMary moved to the office.\nIs John in the office?",
         "yes"),
    ],
    7: [
        ("Mary went to the kitchen.\nMary picked up the apple.\n"
         "How many objects is Mary carrying?", "one"),
        ("John moved to the garden.\nJohn got the football.\nJohn dropped the football.\n"
         "How many objects is John carrying?", "none"),
        ("Daniel went to the office.\nDaniel took the milk.\nDaniel grabbed the apple.\n"
         "How many objects is Daniel carrying?", "two"),
    ],
    8: [
        ("Sandra went to the bedroom.\nSandra picked up the milk.\nWhat is Sandra carrying?",
         "milk"),
        ("John went to the garden.\nJohn got the apple.\nJohn took the football.\n"
         "What is John carrying?", "apple,football"),
    ],
    9: [
        ("Mary is in the school.\nBill is no longer in the park.\nIs Mary in the school?", "yes"),
        ("Fred went to the kitchen.\nFred is not in the kitchen.\nIs Fred in the kitchen?", "no"),
        ("Julie travelled to the cinema.\nBill went to the park.\nIs Julie in the park?", "no"),
    ],
    10: [
        ("Julie is either in the park or the school.\nBill went to the office.\n"
         "Is Julie in the park?", "maybe"),
        ("Fred is in the cinema.\nMary is either in the kitchen or the bedroom.\n"
         "Is Fred in the kitchen?", "no"),
        ("Bill travelled to the school.\nJulie is in the office.\nIs Bill in the school?", "yes"),
    ],
    11: [
        ("Daniel went to the kitchen.\nThen he journeyed to the garden.\nWhere is Daniel?",
         "garden"),
        ("Mary moved to the office.\nAfter that she went back to the bedroom.\n"
         "John went to the hallway.\nWhere is Mary?", "bedroom"),
    ],
    12: [
        ("Mary and Daniel went to the bathroom.\nJohn moved to the garden.\nWhere is Daniel?",
         "bathroom"),
        ("Sandra and John travelled to the office.\nSandra and Mary went to the kitchen.\n"
         "Where is John?", "office"),
    ],
    13: [
        ("Sandra and John went to the office.\nThen they went to the garden.\nWhere is John?",
         "garden"),
        ("Mary and Daniel moved to the hallway.\nAfterwards they journeyed to the kitchen.\n"
         "Where is Mary?", "kitchen"),
    ],
    15: [
        ("Sheep are afraid of wolves.\nGertrude is a sheep.\nWhat is Gertrude afraid of?",
         "wolf"),
        ("Mice are afraid of cats.\nWinona is a mouse.\nCats are afraid of wolves.\n"
         "What is Winona afraid of?", "cat"),
    ],
    16: [
        ("Lily is a swan.\nLily is white.\nGreg is a swan.\nWhat color is Greg?", "white"),
        ("Bernhard is a frog.\nBernhard is green.\nBrian is a frog.\nWhat color is Brian?",
         "green"),
    ],
}  # fmt: skip
DANIEL = STORIES[6][0]
CASES = [(task, text, want) for task, stories in STORIES.items() for text, want in stories]
# The task-6 model alone (d = 20, best of 10) still says "yes": its hops, after training on
# "no" questions asked about someone else's place, get 0.87 of those short stories right,
# not this one. The joint model (d = 50), which serves task 6, says "no". Strict: the day
# the task-6 model answers it, this test fails until the mark goes.
TASK6_STILL_WRONG = pytest.mark.xfail(
    strict=True, reason="the task-6 model alone still matches the asked place in this story"
)


@pytest.fixture(scope="module")
def loaded():
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = registry.get(name).load()
        return cache[name]

    return get


def answer(card, loaded, text):
    return card.trace(text, model=loaded(card.name)).outputs["answer"]


@pytest.mark.parametrize(("task", "text", "want"), CASES)
def test_the_serving_model_answers_a_short_hand_written_story(task, text, want, loaded):
    assert all(2 <= len(parse(text).story) <= 4 for text, _ in STORIES[task])
    card = registry.for_babi_task(task)
    assert answer(card, loaded, text) == want, f"{card.name} on {text!r}"


@pytest.mark.parametrize(
    "name", [pytest.param("memn2n-task6", marks=TASK6_STILL_WRONG), "memn2n-joint"]
)
def test_daniel_is_not_in_the_garden(name, loaded):
    text, want = DANIEL
    assert answer(registry.get(name), loaded, text) == want == "no"
