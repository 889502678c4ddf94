"""The model registry: every shipped checkpoint and MiniLM answer through one API."""

from __future__ import annotations

import shutil

import pytest

from engine import checkpoints
from engine.errors import InputError
from engine.messages import Message
from engine.models import registry
from engine.trace import Trace

CARDS = registry.cards()
SHIPPED = checkpoints.available()


def test_every_checkpoint_and_minilm_has_a_card():
    names = {c.name for c in CARDS}
    assert set(SHIPPED) <= names
    assert "minilm" in names
    assert {c.family for c in CARDS} == {"nmt", "transformer", "memn2n", "induction", "pretrained"}


@pytest.mark.parametrize("card", CARDS, ids=lambda c: c.name)
def test_first_example_gives_a_valid_trace(card):
    assert card.title and card.paper and card.task and card.examples
    trace = card.trace(card.examples[0].input)
    assert isinstance(trace, Trace)
    assert trace.maps or card.variant == "none"  # the RNNencdec baseline has no attention
    for amap in trace.maps.values():
        assert amap.weights.ndim == 4
        # a note is an engine message (translated where a page shows it), or none
        assert not amap.note or isinstance(amap.note, Message), amap.note
    # the export format round-trips, so what a page shows is what a user downloads
    assert Trace.from_json(trace.to_json()).maps.keys() == trace.maps.keys()
    if card.family != "pretrained":
        assert card.train_command.startswith("python -m engine.train")
        assert card.evaluate_command.startswith("python -m engine.evaluate")
        assert card.results() is not None, "every shipped model has its measured results"


@pytest.mark.parametrize("card", CARDS, ids=lambda c: c.name)
def test_limits_refuse_over_long_and_empty_input_clearly(card):
    too_long = "word " * (card.limits.max_chars // 5 + 1)
    with pytest.raises(InputError, match="limit"):
        card.trace(too_long)
    with pytest.raises(InputError, match=r"^(Type|Write) "):  # says what to type
        card.trace("   ")


def test_token_limit_is_stated_and_enforced():
    card = registry.get("nmt-enfr-additive")
    words = " ".join(["the"] * (card.limits.max_tokens + 1))
    with pytest.raises(InputError, match=str(card.limits.max_tokens)):
        card.trace(words)
    assert str(card.limits.max_tokens) in card.limits.describe()


def test_options_are_checked_against_their_limits():
    card = registry.get("nmt-dates")
    with pytest.raises(InputError, match="Beam width"):
        card.trace("3 May 1979", beam=99)
    with pytest.raises(InputError, match="no option"):
        card.trace("3 May 1979", temperature=2)
    assert card.trace("3 May 1979", beam=1).outputs["translation"] == "1979-05-03"


def test_unknown_model_is_refused_by_name():
    with pytest.raises(InputError, match="Unknown model 'nope'"):
        registry.get("nope")


def test_a_new_checkpoint_appears_without_any_code_change(tmp_path):
    for path in checkpoints.paths("nmt-dates"):
        shutil.copy(path, tmp_path / path.name.replace("nmt-dates", "nmt-dates-copy"))
    (tmp_path / "nmt-eval-dates.json").write_text("{}")  # an evaluation, not a checkpoint
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "broken.safetensors").write_bytes(b"")
    names = [c.name for c in registry.cards(tmp_path) if c.family != "pretrained"]
    assert names == ["nmt-dates-copy"]


def test_translation_cards_give_target_by_source_alignments():
    for name in ("nmt-enfr-additive", "transformer-enfr-sinusoidal"):
        card = registry.get(name)
        trace = card.trace(card.examples[0].input)
        aligned = card.alignments(trace)
        assert aligned
        for a in aligned.values():
            assert a.weights.shape == (len(a.target), len(a.source))
            assert "</s>" not in a.target
        src, tgt = ("the", "house", "."), ("la", "maison", ".")
        forced = card.forced_alignments(src, tgt)
        assert all(a.weights.shape == (3, 3) for a in forced.values())


def test_memory_card_reads_typed_and_generated_stories():
    card = registry.get("memn2n-task1")
    typed = card.trace("Mary went to the kitchen.\nJohn went to the garden.\nWhere is Mary?")
    assert typed.outputs["answer"] == "kitchen"
    from engine.data.babi import dataset

    sample = dataset(1, "test")[0]
    generated = card.trace(sample)
    assert generated.outputs["expected"] == sample.answer


def test_a_variant_plugs_into_a_trained_transformer_through_its_card():
    card = registry.get("transformer-dates-sinusoidal")
    text = card.examples[0].input
    exact = card.trace(text)
    windowed = card.trace(text, attend="longformer", attend_hp={"window": 64})
    assert windowed.outputs["translation"] == exact.outputs["translation"]
    assert card.trace(text, attend="linformer", attend_hp={"k": 8}).outputs["translation"]
    with pytest.raises(InputError, match="Unknown variant"):
        card.trace(text, attend="nonsense")
    with pytest.raises(InputError, match="no option"):
        registry.get("nmt-dates").trace("3 May 1979", attend="flash")


def test_minilm_card_takes_an_exact_variant():
    card = registry.get("minilm")
    text = card.examples[2].input
    base = card.trace(text).maps["encoder_self"].weights
    flash = card.trace(text, attend="flash").maps["encoder_self"].weights
    assert abs(base - flash).max() < 1e-5


def test_a_swappable_card_gives_the_inputs_a_swapped_layer_receives():
    """``attention_inputs`` is what a variant inside the model sees: the exact attention
    computed from those q, k, v is the model's own map of that layer (and head)."""
    from engine.attention.scoring import scaled_dot_product_attention

    for name, layer, head in (("transformer-dates-sinusoidal", 0, None), ("minilm", 2, 1)):
        card = registry.get(name)
        model = card.load()
        text = card.examples[0].input
        q, k, v, tokens = card.attention_inputs(text, model=model, layer=layer, head=head)
        assert q.shape == k.shape == v.shape and q.shape[-2] == len(tokens)
        _, w = scaled_dot_product_attention(q.double(), k.double(), v.double())
        key = "encoder_self"
        drawn = card.trace(text, model=model).maps[key].weights[layer]
        drawn = drawn if head is None else drawn[head : head + 1]
        assert abs(w[0].numpy() - drawn).max() < 1e-4
    with pytest.raises(InputError, match="no layer inputs"):
        registry.get("nmt-dates").attention_inputs("3 May 1979")


def test_each_family_names_one_default_per_task_and_the_registry_serves_it():
    for family in ("nmt", "transformer", "memn2n"):
        for task in {c.task for c in registry.by_family(family)}:
            marked = [c for c in registry.by_family(family) if c.task == task and c.is_default]
            assert len(marked) == 1, (family, task, marked)
            assert registry.default(task, family=family) == marked[0]
    # the first family in registry order serves a task no family is asked for
    assert registry.default("en-fr").family == "nmt"
    assert registry.default("sentence").name == "minilm"  # its family names no default
    learned = registry.default("en-fr", family="transformer", variant="learned")
    assert (learned.family, learned.variant) == ("transformer", "learned")
    with pytest.raises(InputError, match="Unknown model"):
        registry.default("en-fr", family="memn2n")


def test_a_family_default_is_found_in_any_checkpoint_directory(tmp_path):
    for name in ("nmt-enfr-dot", "nmt-enfr-additive"):
        for path in checkpoints.paths(name):
            shutil.copy(path, tmp_path / path.name)
    assert registry.default("en-fr", directory=tmp_path).name == "nmt-enfr-additive"
    (tmp_path / "nmt-enfr-additive.safetensors").unlink()
    assert registry.default("en-fr", directory=tmp_path).name == "nmt-enfr-dot"  # the first


def test_every_result_file_is_named_by_the_one_convention_and_read_by_its_cards():
    from engine.analysis import needle
    from engine.evaluation import cache as press_sweep
    from engine.evaluation import causal as causal_eval
    from engine.evaluation import faithfulness as faithfulness_eval
    from engine.evaluation import retrieval as retrieval_eval
    from engine.evaluation import retrieval_book
    from engine.evaluation import retrieval_heads as retrieval_heads_eval
    from engine.evaluation import sinks as sinks_eval
    from engine.models import variant_lm

    named = {c.result_name for c in CARDS if c.result_name}
    named |= {c.confidence_result for c in CARDS if hasattr(c, "confidence_result")}
    named.add(variant_lm.RESULT)
    # The Zoology plan's evaluation, one per recipe folder: the Variants page's verdict.
    named |= {variant_lm.plan_result_name("zoology", r) for r in variant_lm.plan_results()}
    named.add(checkpoints.result_name("claims"))  # bench/claims.py; app/views/claims.py reads it
    named.add(retrieval_eval.RESULT)  # the Retrieval page reads it
    named.add(retrieval_book.RESULT)  # so does its whole-book store's caption
    named.add(needle.RESULT)  # the Variants page's needle heatmaps read it
    named.add(causal_eval.RESULT)  # IOI heads and the sweep's time (issue 33's pages, RESULTS)
    named.add(press_sweep.RESULT)  # the Chat page's press curves and its lesson step
    named.add(sinks_eval.RESULT)  # StreamingLLM's Table 2 on SmolLM2 (RESULTS)
    named.add(retrieval_heads_eval.RESULT)  # the Chat page's retrieval head type, RESULTS
    for family in ("nmt", "memn2n", "retrieval"):  # the faithfulness meter (RESULTS)
        named.add(faithfulness_eval.result_name(family))
    shipped = {
        p.stem
        for p in checkpoints.CHECKPOINT_DIR.glob("*.json")
        if not p.with_suffix(".safetensors").exists()
    }
    assert shipped == named  # no result file that no card reads, none a card misses
    for name in shipped:
        subject, _, task = name.partition("-eval")
        assert name == checkpoints.result_name(subject, task.removeprefix("-"))
    for card in CARDS:
        if card.result_name:
            assert card.saved_results() == checkpoints.load_result(card.result_name)


def test_translation_confidence_is_a_trace_output():
    for name in ("nmt-enfr-additive", "transformer-enfr-sinusoidal"):
        card = registry.get(name)
        out = card.trace(card.examples[0].input).outputs
        assert out["log_prob_per_token"] * len(out["steps"]) == pytest.approx(out["log_prob"])
        assert card.confidence_floor is not None
        assert out["log_prob_per_token"] >= card.confidence_floor  # a grammar sentence


def test_each_babi_task_is_served_by_the_checkpoint_its_dev_questions_chose():
    from engine.data.babi import TASK_IDS
    from engine.evaluation.memn2n import choose

    saved = registry.default("babi").saved_results()["tasks"]
    for task in TASK_IDS:
        card = registry.for_babi_task(task)
        assert card.family == "memn2n" and card.knows(task)
        dev = saved[str(task)]["dev_accuracy"]
        assert dev[card.name] == max(dev.values()), task
    cache: dict = {}
    for task in (2, 3):  # rescored today: the task's own model wins on 2, the joint one on 3
        assert registry.for_babi_task(task).name == choose(task, cache=cache)[0]


def test_without_an_evaluation_the_joint_model_serves_the_tasks_it_knows(tmp_path):
    from engine.models.cards.memn2n import MemN2NCard

    for name in ("memn2n-joint", "memn2n-task2"):
        for path in checkpoints.paths(name):
            shutil.copy(path, tmp_path / path.name)
    assert MemN2NCard.best_for(2, tmp_path) == "memn2n-joint"
    checkpoints.save_result(
        MemN2NCard.result_name, {"tasks": {"2": {"model": "memn2n-task2"}}}, tmp_path
    )
    assert registry.for_babi_task(2, tmp_path).name == "memn2n-task2"
    (tmp_path / "memn2n-joint.safetensors").unlink()
    checkpoints.save_result(
        MemN2NCard.result_name, {"tasks": {"2": {"model": "memn2n-joint"}}}, tmp_path
    )
    assert MemN2NCard.best_for(2, tmp_path) == "memn2n-task2"  # the chosen one is not shipped
    with pytest.raises(checkpoints.CheckpointError, match="task 3"):
        MemN2NCard.best_for(3, tmp_path)


def test_a_card_states_whether_it_trains_on_a_page():
    """Train it now goes through the card: the toy's cards and each task's default NMT card
    state their live steps; any other card says it is not trained on a page."""
    names = registry.names()
    live = {n: registry.get(n).live_steps for n in names}
    for name in ("induction-2l", "induction-1l", "nmt-dates", "nmt-enfr-additive"):
        if name in names:
            assert live[name] and live[name] > 0, name
    for name in ("nmt-enfr-dot", "memn2n-task1", "transformer-dates-sinusoidal", "minilm"):
        if name in names:
            assert live[name] is None, name
            with pytest.raises(InputError, match="not trained on a page"):
                registry.get(name).train_now(0, 5)
