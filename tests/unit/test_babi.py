"""bAbI generation and the original text format."""

import pytest

from engine.data import babi
from engine.data.babi_tasks import TASKS, generate
from engine.errors import InputError

REQUIRED = {1, 2, 3, 4, 6, 11, 15, 16}


def test_at_least_twelve_tasks_including_the_required_ones():
    assert len(TASKS) >= 12
    assert REQUIRED <= set(TASKS)


@pytest.mark.parametrize("task", sorted(TASKS))
def test_supporting_facts_are_facts_of_the_story(task):
    for s in babi.dataset(task, "test")[:200]:
        assert s.support, "every question names its supporting facts"
        assert all(0 <= i < len(s.story) for i in s.support)
        assert s.answer and "?" in s.question


@pytest.mark.parametrize("task", [1, 2, 11, 12, 13])
def test_where_answers_agree_with_the_supporting_facts(task):
    """The answer place is named in one of the supporting facts."""
    for s in babi.dataset(task, "test")[:200]:
        assert any(s.answer in s.story[i] for i in s.support)


def test_induction_stories_follow_the_published_generator():
    """Task 16 as facebookarchive/bAbI-tasks writes it: one colour per animal, five names
    (four with a colour), shuffled, the asked name sharing its animal; support = the
    asked name's animal and both facts of every name like it."""
    orders = set()
    for s in babi.dataset(16, "test")[:300]:
        assert len(s.story) == 9
        kind, colour = {}, {}
        for line in s.story:
            name, _, *rest = line.rstrip(".").split()
            (kind if rest[0] == "a" else colour)[name] = rest[-1]
        target = s.question.rstrip("?").split()[-1]
        assert len(kind) == 5 and len(colour) == 4 and target not in colour
        by_animal = {}
        for name, c in colour.items():
            assert by_animal.setdefault(kind[name], c) == c, "one colour per animal"
        assert s.answer == by_animal[kind[target]]
        like = [n for n in colour if kind[n] == kind[target]]
        expect = {i for i, line in enumerate(s.story) if line.split()[0] in {target, *like}}
        assert set(s.support) == expect
        orders.add(tuple(" a " in line for line in s.story))
    assert len(orders) > 50, "colours and animals are told in a random order"


def test_generation_is_seeded_and_sizes_are_exact():
    a, b = generate(3, 50, seed=5), generate(3, 50, seed=5)
    assert a == b
    assert sum(line.is_question for ep in a for line in ep) == 50
    assert len(babi.dataset(4, "train", "1k")) == 1_000
    assert len(babi.dataset(4, "train", "10k")) == 10_000


def test_test_set_is_fixed_and_differs_from_training():
    test = babi.dataset(1, "test")
    assert test == babi.dataset(1, "test")
    train, dev = babi.dataset(1, "train"), babi.dataset(1, "dev")
    assert test[:20] != train[:20] and test[:20] != dev[:20] and len(dev) == 1_000


@pytest.mark.parametrize("task", sorted(TASKS))
def test_text_format_round_trips(task):
    episodes = generate(task, 30, seed=1)
    text = babi.format_babi(episodes)
    assert babi.parse(text) == episodes
    assert babi.format_babi(babi.parse(text)) == text


def test_parses_the_published_layout():
    text = (
        "1 Mary moved to the bathroom.\n2 John went to the hallway.\n"
        "3 Where is Mary? \tbathroom\t1\n1 Sandra went to the garden.\n"
        "2 Where is Sandra?\tgarden\t1\n"
    )
    found = babi.samples(babi.parse(text))
    assert [(s.answer, s.support) for s in found] == [("bathroom", (0,)), ("garden", (0,))]


@pytest.mark.parametrize(
    "text, line",
    [
        ("1 Mary went home.\n3 Where is Mary?\thome\t1\n", "Line 2"),
        ("Mary went home.\n", "Line 1"),
        ("1 Mary went home.\n2 Where is Mary?\thome\tone\n", "Line 2"),
        ("1 Mary went home.\n2 Where is Mary?\thome\t5\n", "Line 2"),
        ("1 Mary went home.\n2 Where is Mary?\t\t1\n", "Line 2"),
    ],
)
def test_malformed_text_names_the_line(text, line):
    with pytest.raises(InputError, match=line):
        babi.parse(text)


def test_user_story_plain_sentences_and_babi_lines():
    s = babi.user_story("Mary went to the kitchen. John went to the garden.", "Where is Mary?")
    assert s.story == ("Mary went to the kitchen.", "John went to the garden.")
    pasted = babi.user_story("1 Mary went to the kitchen.\n2 Where is Mary?\tkitchen\t1\n", "")
    assert pasted.answer == "kitchen" and pasted.support == (0,)


@pytest.mark.parametrize(
    "story, question",
    [
        ("", "Where is Mary?"),
        ("Mary went to the kitchen.", ""),
        ("x" * 30_000, "Where is Mary?"),
        ("Mary " * 40 + "went home.", "Where is Mary?"),
        ("约翰去了厨房。", "Where is John?"),  # text, but no word the model can read
        ("Mary went to the kitchen.", "玛丽在哪里？"),
    ],
)
def test_user_story_refuses_bad_input_with_a_message(story, question):
    with pytest.raises(InputError):
        babi.user_story(story, question)


def test_written_files_read_back_as_the_same_questions(tmp_path):
    paths = babi.write_tasks(tmp_path)
    assert len(paths) == 3 * len(TASKS)
    test_file = tmp_path / "qa1_single-supporting-fact_test.txt"
    assert babi.samples(babi.parse(test_file.read_text()), 1) == babi.dataset(1, "test")
