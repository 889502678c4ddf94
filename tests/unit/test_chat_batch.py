"""Continuous batching: each request in a batch gets the Trace it would get alone.

Mixed prompt lengths, templates, sampling settings and seeds share one forward per step;
the greedy tokens (and the sampled ones, seed for seed) are the lone run's, and every
captured attention row matches it: bit for bit for a batch of one, to float16 rounding
otherwise (sums taken in another order: over padded rows in attention, by the float32
path in the linear layers; float16 rounding carries a last-bit difference to ≈ 10⁻³).
The system turn's K/V, cached once, equals recomputing it; cancelling one request leaves
the others as they were.
"""

import threading
import time

import numpy as np
import pytest
import torch

from engine.errors import InputError
from engine.models import batch_decoder as bd
from engine.models import batching
from engine.models import chat as chat_model
from engine.models.cache_policy import CachePolicy

REQUESTS = [
    {"prompt": "What is the capital of France?", "max_new_tokens": 6},
    {"prompt": "Once upon a time", "template": False, "max_new_tokens": 5}
    | {"temperature": 1.2, "top_p": 0.95, "seed": 7},
    {"prompt": "Name three colours of the rainbow, please, as a short list.", "max_new_tokens": 8},
    {"prompt": "Hi", "max_new_tokens": 4, "temperature": 0.8, "top_k": 20, "seed": 3},
    {"prompt": "The quick brown fox", "template": False, "max_new_tokens": 7},
    {"prompt": "Explain attention in one sentence.", "max_new_tokens": 3, "seed": 5},
]
ROUNDING = 1e-2  # float16 products in two summation orders (test_chat: the same bound)


@pytest.fixture(scope="module")
def alone(chat):
    return [chat_model.generate(chat, **r) for r in REQUESTS]


def batched(chat, requests, **options):
    b = batching.Batcher(lambda: chat, **options).start()
    assert b.ready.wait(60) and b.load_error is None
    tickets = [b.submit(**r) for r in requests]
    return [t.result(300) for t in tickets], b


def same(a, b, atol):
    assert a.outputs["token_ids"] == b.outputs["token_ids"]
    assert a.outputs["kept"] == b.outputs["kept"]
    for name in ("prompt", "generation"):
        x, y = a.maps[name], b.maps[name]
        assert x.shape == y.shape and x.key_labels == y.key_labels
        assert np.abs(x.weights - y.weights).max() <= atol, name
    assert np.allclose(a.outputs["log_probs"], b.outputs["log_probs"], atol=5 * atol)
    assert a.outputs["sampling"] == b.outputs["sampling"]
    assert a.outputs["generated"] == b.outputs["generated"]


def test_a_batch_of_mixed_requests_writes_what_each_would_alone(chat, alone):
    got, b = batched(chat, REQUESTS)
    for a, r in zip(alone, got, strict=True):
        same(a, r, ROUNDING)
        assert not r.outputs["stopped"] and {"prefill_ms", "decode_ms", "wait_ms"} <= set(r.timings)
    info = b.load_info()
    assert info["largest_batch"] == len(REQUESTS) > bd.FP16_ROWS  # the float32 path ran
    assert info["prefix_hits"] >= 3  # four template prompts, one computation of the turn


def test_a_batch_of_one_is_bit_identical(chat, alone):
    """Alone in the batch, a request's step is the lone step's float16 kernel on the same
    numbers; without the prefix cache its prefill is the lone product too."""
    got, _ = batched(chat, REQUESTS[:1], prefix_cache=False)
    same(alone[0], got[0], 0.0)


def test_the_prefix_cache_equals_recomputing(chat):
    ids = chat_model.encode(chat, "Why is the sky blue?")
    head = batching.template_prefix(chat)
    assert ids[: len(head)] == head and chat_model.token_labels(chat, head)[-1] == "user"
    assert head == chat_model.encode(chat, "\n  spaced")[: len(head)]
    w32 = bd.Weights32(chat.model)
    prefix = batching.compute_prefix(chat, w32, head)
    n, t0 = len(ids), len(head)
    shape = (chat.n_kv_heads, n, chat.head_dim)
    keys = [torch.zeros(shape) for _ in range(chat.n_layers)]
    values = [torch.zeros(shape) for _ in range(chat.n_layers)]
    for li in range(chat.n_layers):
        keys[li][:, :t0], values[li][:, :t0] = prefix.keys[li], prefix.values[li]
    (tail,) = bd.prefill(chat, w32, [bd.Part(ids[t0:], t0, keys, values)])
    whole_k = [torch.zeros(shape) for _ in range(chat.n_layers)]
    whole_v = [torch.zeros(shape) for _ in range(chat.n_layers)]
    (whole,) = bd.prefill(chat, w32, [bd.Part(ids, 0, whole_k, whole_v)])
    assert torch.allclose(prefix.weights, whole[:, :, :t0, :t0], atol=1e-5)
    assert torch.allclose(tail, whole[:, :, t0:], atol=1e-5)
    for li in range(chat.n_layers):
        assert torch.allclose(keys[li], whole_k[li], atol=1e-4, rtol=1e-5)
        assert torch.allclose(values[li], whole_v[li], atol=1e-4, rtol=1e-5)


def test_joiners_ride_in_the_steps_forward_and_write_what_each_would_alone(chat, alone):
    """Requests arriving while more than FP16_ROWS sequences decode are prefilled inside
    that step's forward (bd.mixed): the same Traces as alone, one forward fewer each time."""
    b = batching.Batcher(lambda: chat).start()
    assert b.ready.wait(60)
    long = {"prompt": "Tell me a long story about a dragon.", "max_new_tokens": 12}
    first = [b.submit(**long) for _ in range(bd.FP16_ROWS)] + [b.submit(**REQUESTS[0])]
    t0 = time.monotonic()
    while first[0].steps[0] < 2 and time.monotonic() - t0 < 120:
        time.sleep(0.01)
    joiners = [b.submit(**r) for r in REQUESTS[1:]]
    for a, t in zip(alone[1:], joiners, strict=True):
        same(a, t.result(300), ROUNDING)
    same(alone[0], first[-1].result(300), ROUNDING)
    lone_long = chat_model.generate(chat, **long)
    for t in first[:-1]:
        same(lone_long, t.result(300), ROUNDING)
    assert b.stats["joined_in_step"] >= 1


def test_cancel_removes_one_request_without_disturbing_the_others(chat, alone):
    b = batching.Batcher(lambda: chat).start()
    assert b.ready.wait(60)
    long = {"prompt": "Tell me a long story about a dragon.", "max_new_tokens": 30}
    tickets = [b.submit(**REQUESTS[0]), b.submit(**long), b.submit(**REQUESTS[2])]
    t0 = time.monotonic()
    while tickets[1].steps[0] < 2 and time.monotonic() - t0 < 120:
        time.sleep(0.01)
    tickets[1].cancel()
    cut = tickets[1].result(120)
    assert cut.outputs["stopped"] and 2 <= len(cut.outputs["kept"]) < 30
    for a, t in zip((alone[0], alone[2]), (tickets[0], tickets[2]), strict=True):
        same(a, t.result(120), ROUNDING)
    waiting = b.submit(**REQUESTS[3])
    waiting.cancel()
    assert waiting.result(120) in (None,) or waiting.result(120).outputs["stopped"]


def test_an_evicting_policy_runs_alone(chat):
    assert batching.batchable(CachePolicy("full"))
    for policy in (CachePolicy("window", window=8), CachePolicy("sinks", window=8, sinks=4)):
        assert not batching.batchable(policy)
    b = batching.Batcher(lambda: chat)
    b.chat = chat
    b.ready.set()  # no thread: requests stay in line
    with pytest.raises(ValueError, match="alone"):
        b.submit("Hello", policy=CachePolicy("window", window=8))


def test_the_line_gives_a_place_and_an_estimate_and_refuses_only_when_full(chat):
    b = batching.Batcher(lambda: chat, capacity=2)
    b.chat = chat
    b.ready.set()  # no thread: requests stay in line
    first, second = b.submit("Hello"), b.submit("Hello again")
    assert (b.position(first), b.position(second)) == (1, 2)
    assert 0 < b.estimated_wait(first) < b.estimated_wait(second)
    with pytest.raises(batching.Full):
        b.submit("One too many")
    with pytest.raises(InputError):
        b.submit("")  # a bad prompt is refused at once, not in the batch thread


def test_the_thread_loads_the_model_in_the_background(chat):
    gate = threading.Event()

    def slow_load():
        gate.wait(10)
        return chat

    b = batching.Batcher(slow_load).start()
    assert not b.ready.is_set()
    gate.set()
    assert b.ready.wait(30) and b.chat is chat and b.load_error is None


def test_measure_gives_the_cost_of_a_step_per_batch_size(chat):
    """The numbers MAX_BATCH is chosen from: CPU seconds a step, tokens per CPU second."""
    got = batching.measure(chat, (1, 2), context=8, steps=1)
    assert set(got["step_cpu_s"]) == {1, 2} and got["threads"] == 1
    assert all(s > 0 for s in got["step_cpu_s"].values()) and got["prefill_cpu_s_per_token"] > 0
    assert got["tokens_per_cpu_s"][2] == round(2 / got["step_cpu_s"][2], 1)


def test_the_batch_takes_the_cores_it_is_given_at_every_iteration(chat):
    """``threads`` as a function is asked in the batch's own thread before each iteration
    (torch's thread count is per thread): a change applies from the next iteration."""
    seen, want = [], [2]

    def threads():
        seen.append(torch.get_num_threads())  # what the batch's thread has run with
        return want[0]

    torch.set_num_threads(1)
    b = batching.Batcher(lambda: chat, threads=threads).start()
    assert b.ready.wait(60) and b.load_error is None
    b.submit("Hi", max_new_tokens=3).result(300)
    assert seen[-1] == 2
    want[0] = 1
    b.submit("Hi", max_new_tokens=3).result(300)
    assert seen[-1] == 1 and torch.get_num_threads() == 1  # the caller's thread unchanged


def test_the_held_float32_copies_change_no_bit_of_a_layer(chat):
    """Weights32 lends its copies to the layers (HalfLinear.w32): their float32 path then
    converts nothing and multiplies the very same numbers."""
    lin = chat.model.model.layers[3].mlp.up_proj
    x = torch.randn(12, lin.in_features, generator=torch.Generator().manual_seed(0))
    converted = torch.nn.functional.linear(x, lin.w16.float())
    held = bd.Weights32(chat.model)
    assert lin.w32 is held._w[id(lin)]
    assert torch.equal(lin(x), converted)
