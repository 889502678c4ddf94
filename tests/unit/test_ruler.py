"""RULER-style tasks: the same seed gives the same example, a different seed another; the
answer is in the haystack; the prompt fits the length asked for; bad input is refused."""

import pytest

from engine.data import ruler
from engine.errors import InputError
from engine.models import chat as chat_model


@pytest.fixture(scope="module")
def tok():
    if not chat_model.available():
        pytest.skip(f"{chat_model.CHAT_DIR} is missing: run bash scripts/setup.sh")
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(chat_model.CHAT_DIR, local_files_only=True)


@pytest.mark.parametrize("task", ruler.TASKS)
@pytest.mark.parametrize("length", ruler.LENGTHS)
def test_an_example_is_its_seeds_and_holds_its_answer(tok, task, length):
    a, b, c = (ruler.generate(tok, task, length, s) for s in (3, 3, 4))
    assert a == b and a.context_ids != c.context_ids
    assert length - 128 <= a.n_tokens <= length  # whole sentences: a little short
    context = tok.decode(list(a.context_ids))
    for answer in a.answers:
        assert answer.lower() in a.haystack.lower() and answer.lower() in context.lower()
    if task == "cwe":  # the common words are the most frequent entries
        entries = [e.split(". ", 1)[1] for e in a.haystack.split(" ") if ". " in e] or None
        counts = {w: a.haystack.split(" ").count(w) for w in set(a.haystack.split(" "))}
        assert entries is None or min(counts[w] for w in a.answers) > 3
    assert a.score(" ".join(a.answers)) == 1.0 and a.score("") == 0.0


def test_the_question_follows_the_haystack(tok):
    ex = ruler.generate(tok, "niah_multikey", 1024, 0)
    tail = tok.decode(list(ex.question_ids))
    assert ex.question in tail and tail.rstrip().endswith("provided text is")
    assert tok.decode(list(ex.context_ids)).startswith("<|im_start|>system")
    assert ex.haystack.count("special magic number") == 4  # the needle and three others


def test_scores_are_rulers_string_match():
    ex = ruler.Example("niah_multivalue", 1024, 0, (), (), "q", ("11", "22", "33", "44"), "")
    assert ex.score("It is 11 and 33.") == 0.5
    qa = ruler.Example("qa", 1024, 0, (), (), "q", ("Netherfield Park", "Netherfield"), "")
    assert qa.score("netherfield") == 1.0


@pytest.mark.parametrize(
    "task,length,key",
    [
        ("needle", 1024, "ruler.unknown_task"),
        ("vt", 100, "ruler.length"),
        ("vt", "long", "ruler.length"),
        ("vt", ruler.WINDOW + 1, "ruler.too_long"),
    ],
)
def test_bad_input_is_refused(tok, task, length, key):
    with pytest.raises(InputError) as caught:
        ruler.generate(tok, task, length, 0)
    assert caught.value.message.key == key
