"""One prefill, every press: with every key kept the runs read what the model's own forward
reads; a run's per-head kept set is attention over those keys alone (eviction); the
prefill keeps what the presses score from."""

import math

import pytest
import torch

from engine.analysis import press_eval, presses
from engine.data import ruler
from engine.errors import InputError
from engine.models import chat as chat_model
from engine.models import llama, precision, registry

torch.set_num_threads(1)
TEXT = "It is a truth universally acknowledged, that a single man in possession of a good " * 6


@pytest.fixture(scope="module")
def chat():
    if not chat_model.available():
        pytest.skip(f"{chat_model.CHAT_DIR} is missing: run bash scripts/setup.sh")
    return registry.chat().load()


@pytest.fixture(scope="module")
def prompt(chat):
    context = chat.tokenizer.encode(TEXT)
    question = chat.tokenizer.encode(" What does a single man want?")
    return context, question


@pytest.fixture(scope="module")
def pre(chat, prompt):
    with precision.only(torch.float32):
        heads = torch.zeros(chat.n_layers, chat.n_kv_heads)
        return press_eval.prefill(chat, *prompt, heads, heads)  # both head-wise rankings


def test_with_every_key_kept_a_run_reads_what_the_model_reads(chat, prompt, pre):
    context, question = prompt
    kept = torch.ones(2, chat.n_layers, chat.n_kv_heads, len(context), dtype=torch.bool)
    with torch.no_grad(), precision.only(torch.float32):
        runs = press_eval._Runs(chat, pre, kept, len(question))
        got = runs.read(torch.tensor([question, question]))
        want = chat.model(torch.tensor([context + question]), use_cache=False).logits[0]
    assert (got - want[len(context) :]).abs().max() < 2e-3


def test_a_runs_kept_set_is_attention_over_those_keys_alone(chat, prompt, pre):
    context, question = prompt
    n, t = len(context), len(question)
    g = torch.Generator().manual_seed(0)
    kept = torch.rand(1, chat.n_layers, chat.n_kv_heads, n, generator=g) < 0.5
    kept[..., :4] = True
    with precision.only(torch.float32):
        got = press_eval._Runs(chat, pre, kept, t).read(torch.tensor([question]))[0]
    # the same reading written plainly: [context, own] keys, one per-K/V-head mask
    cos, sin = llama.rotary(chat.model, range(n, n + t))
    own = torch.full((t, t), -math.inf).triu(1)

    def attend(li, q, k, v):
        q, k = llama.rope(q.transpose(0, 1), cos, sin), llama.rope(k.transpose(0, 1), cos, sin)
        keys = torch.cat([pre.keys[li], k], 1)
        values = torch.cat([pre.values[li], v.transpose(0, 1)], 1)
        ctx = torch.zeros(kept.shape[2:]).masked_fill(~kept[0, li], -math.inf)  # (H_kv, n)
        mask = torch.cat([ctx[:, None].expand(-1, t, -1), own.expand(ctx.shape[0], -1, -1)], -1)
        o, _ = llama.attention(q, keys, values, scale=chat.head_dim**-0.5, mask=mask)
        return o.transpose(0, 1)

    with torch.no_grad(), precision.only(torch.float32):
        want = llama.forward(chat.model, question, attend)
    assert (got - want).abs().max() < 1e-3


def test_the_prefill_keeps_what_the_presses_score_from(chat, prompt, pre):
    context, question = prompt
    n, obs = len(context), pre.observed
    L, H, HKV = chat.n_layers, chat.n_heads, chat.n_kv_heads
    assert pre.n == n and pre.keys[0].shape == (HKV, n, chat.head_dim)
    assert obs.received.shape == (L, H, n) and obs.question.shape == (L, H, len(question), n)
    assert obs.window.shape == (L, H, min(n, presses.SNAPKV_WINDOW), n)
    # the context's queries read only the context: their rows sum to 1, and so do all
    # the attention the context's keys received
    assert torch.allclose(obs.window.sum(-1), torch.ones(()), atol=1e-5)
    assert torch.allclose(obs.received.sum(-1), torch.full((), float(n)), atol=1e-3)
    assert (obs.question.sum(-1) <= 1 + 1e-5).all()  # the question also reads itself
    for name in presses.PRESSES:
        if name != "snapkv" or n > presses.SNAPKV_WINDOW:
            assert presses.keep(name, obs, 0.5).shape == (L, HKV, n)


def test_answers_stop_at_a_stop_token_and_the_nll_is_one_per_run(chat, prompt, pre):
    context, question = prompt
    kept = torch.ones(3, chat.n_layers, chat.n_kv_heads, len(context), dtype=torch.bool)
    kept[1:, :, :, 10:] = False
    outs = press_eval.answer(chat, pre, kept, question, 4, stops={-1})
    assert [len(o) for o in outs] == [4, 4, 4]
    first = outs[0][0]
    assert press_eval.answer(chat, pre, kept, question, 4, stops={first})[0] == []
    nll = press_eval.continuation_nll(chat, pre, kept, question)
    assert nll.shape == (3,) and torch.isfinite(nll).all()


def test_a_prompt_over_the_window_or_without_a_question_is_refused(chat):
    heads = torch.zeros(chat.n_layers, chat.n_kv_heads)
    with pytest.raises(InputError) as caught:
        press_eval.prefill(chat, [1] * ruler.WINDOW, [2], heads)
    assert caught.value.message.key == "ruler.too_long"
    assert caught.value.message.params["limit"] == 2048
    with pytest.raises(InputError) as caught:
        press_eval.prefill(chat, [1, 2, 3], [], heads)
    assert caught.value.message.key == "press.empty_question"
