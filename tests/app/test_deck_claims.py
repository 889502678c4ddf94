"""What lessons tell a class a model writes, measured again. The retrieval deck
said "The answer is right" beside a chat model that answers « kitchen » where the answer
is « office ». A deck's words about a model's output are held to that output here."""

import re

import pytest
from kit import decks
from state import chat as chat_state
from state import retrieval as state
from state.lessons import results

from engine.checkpoints import load_result
from engine.data.babi import Sample
from engine.evaluation import causal as causal_eval
from engine.models import chat as chat_lib

needs_chat = pytest.mark.skipif(
    not chat_lib.available(), reason="the chat model is not converted: bash scripts/setup.sh"
)

STEPS = ("reading", "side-by-side")  # the deck's steps 3 and 4, on task 2's story 0


@needs_chat
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
    for lang in ("en", "zh"):
        said = " ".join(s.explain + s.question for s in steps("retrieval", lang))
        assert "« kitchen »" in said and "« office »" in said


def steps(name: str, lang: str = "en") -> list:
    """A shipped deck's steps, as the Lessons page loads them."""
    return decks.load(name, lang, results).steps


def _quoted(step) -> list[str]:
    """The model's words a step quotes ("…" in English, “…” in 中文), without the ellipsis."""
    found = re.findall(r"[\"“]([^\"”]{12,})[\"”]", step.explain)
    return [q.rstrip("…").rstrip(".") for q in found]


@needs_chat
def test_the_chat_decks_quoted_outputs_are_the_models():
    """The chat lesson quotes what the model writes: the answer, the window-only cache's
    loop, the sinks' fluent story. A change to generation or a cache policy must not leave
    the class reading words the model no longer writes."""
    en, zh = steps("chat", "en"), steps("chat", "zh")
    for i in (0, 2, 3):  # the answer; a window of 16; 4 sinks + a window of 12
        params = en[i].view.params
        request = chat_state.Request(
            prompt=params["text"],
            template=params.get("template", "1") == "1",
            max_new_tokens=int(params.get("tokens", chat_state.Request.max_new_tokens)),
        )
        numbers = {k: int(params.get(k, d)) for k, d in (("window", 16), ("sinks", 4))}
        cut = chat_state.policy(params["policy"], **numbers) if "policy" in params else None
        written = chat_state.generate(request, cut).outputs["generated"]
        quoted = [q for q in _quoted(en[i]) + _quoted(zh[i]) if q != params["text"]]
        assert quoted, i
        for q in quoted:
            assert q in written, (i, q, written)


def test_the_memory_decks_hops_read_what_its_steps_say():
    """Memory hops: the last hop follows the person to where the milk is; task 16 starts
    from Julius, finds another frog at hop 2 and reads that frog's colour at hop 3."""
    from state import memn2n

    def read(name: str, task: int, story: int) -> tuple[Sample, list[str]]:
        sample = state.stories(task)[story]
        weights = memn2n.answer(name, sample).maps["memory"].weights[:, 0, 0, :]
        return sample, [sample.story[int(i)] for i in weights.argmax(-1)]

    _, hops = read("memn2n-task2", 2, 0)
    assert "milk" in hops[0] and hops[-1] == "Mary went back to the office."
    frogs, hops = read("memn2n-task16", 16, 2)
    assert hops[0] == "Julius is a frog."
    other = hops[1].split(" is ")[0]
    assert hops[1].endswith("is a frog.") and other != "Julius"
    assert hops[2].startswith(f"{other} is ") and hops[2].endswith(f"{frogs.answer}.")


def test_the_transformer_decks_model_without_positions_writes_and_reads_as_it_says():
    """Without positions the model writes « Le ministre n'a pas signé le traité. », and at
    the step's head its first « le » splits its weight evenly between the two « the »; the
    layer-1 heads align better than the layer-0 heads (their measured AERs)."""
    from engine.models import registry

    step = steps("transformer")[4]
    params = step.view.params
    trace = registry.get(params["model"]).trace(params["text"])
    said = trace.outputs["translation"]
    assert f"« {said} »" in step.explain
    amap = trace.maps[params["attention"]]
    row = amap.weights[int(params["layer"]), int(params["head"]), amap.query_labels.index("le")]
    first, second = (float(row[i]) for i, k in enumerate(amap.key_labels) if k == "the")
    assert abs(first - second) < 0.05 and first + second > 0.5
    aer = registry.get("transformer-enfr-sinusoidal").results()["aer"]
    assert sum(aer["L1"].values()) < sum(aer["L0"].values())


def test_the_bahdanau_decks_reordering_is_the_models():
    """The attention model steps off the diagonal for « the central bank » → « la banque
    centrale » (step 2) and, thirty words into the long sentence, for « the financial
    reports » → « les rapports financiers » (step 4)."""
    from engine.models import registry

    shown = steps("bahdanau")
    for i, links in ((1, {"banque": "bank", "centrale": "central"}), (3, {"rapports": "reports"})):
        params = shown[i].view.params
        amap = registry.get(params["model"]).trace(params["text"]).maps["alignment"]
        for french, english in links.items():
            row = amap.weights[0, 0, amap.query_labels.index(french)]
            assert amap.key_labels[int(row.argmax())] == english, (i, french)


@needs_chat
def test_the_explanation_decks_heads_look_and_matter_as_its_steps_say():
    """Is attention an explanation? Three heads of layers 22 and 23 put about half or more
    of their attention on « Mary»; of the next four, L24 H4 and L22 H7 read « Mary», L23 H3
    and L20 H0 « John»; patched, L24 H4 pushes the answer the other way, and L23 H3 and
    L20 H0 move it most of all 270 heads."""
    from state import causal as causal_state
    from state import lessons as lesson_state

    heads = ((23, 0), (22, 7), (23, 1), (24, 4), (23, 3), (20, 0))
    found = lesson_state.ioi(causal_state.IOI_CLEAN, heads)
    if found is None:
        pytest.skip("the IOI evaluation is not shipped")
    assert found["written"].strip().startswith("Mary")
    tokens = [x.strip() for x in found["tokens"]]

    def on(row, name: str) -> float:
        return float(sum(w for w, x in zip(row, tokens, strict=True) if x == name))

    mary = [on(row, "Mary") for row in found["rows"]]
    john = [on(row, "John") for row in found["rows"]]
    assert min(mary[:3]) >= 0.45 and mary[3] > 0.5 and mary[1] > john[1]
    assert all(john[i] > 0.5 and mary[i] < 0.25 for i in (4, 5))
    assert found["effects"][3] < 0
    pooled = load_result(causal_eval.RESULT)["ioi"]["heads_pooled"]
    ranked = sorted(
        ((abs(e), (layer, head)) for layer, row in enumerate(pooled) for head, e in enumerate(row)),
        reverse=True,
    )
    assert {h for _, h in ranked[:2]} == {(23, 3), (20, 0)}


@needs_chat
def test_the_explanation_decks_passage_read_most_is_not_the_one_needed():
    """Step 4: on task 1's story 11 the model answers « Mary is in the office. »; it reads
    "Mary journeyed to the bedroom." most, and dropping it barely moves the answer; the
    needed "Mary moved to the office." gets about half as much attention, and dropping it
    makes the answer thousands of times less likely."""
    from engine.analysis import faithfulness_retrieval

    params = {"store": "babi", "task": "1", "story": "11", "context": "story"}
    trace = state.lesson(params | {"section": "reading"})["trace"]
    assert trace.outputs["answer"].strip() == "Mary is in the office."
    found = faithfulness_retrieval.drop_each(chat_state.model(), trace, should_stop=lambda: False)
    texts = [p["text"] for p in trace.outputs["passages"]]
    most, needed = int(found.attention.argmax()), texts.index("Mary moved to the office.")
    assert texts[most] == "Mary journeyed to the bedroom."
    assert 0.35 <= found.attention[needed] / found.attention[most] <= 0.7
    assert abs(found.delta[most]) < 0.5 and found.delta[needed] > 6.9  # e^6.9 ≈ 1,000
