"""The eviction ledger (issue 32): what a cache policy takes away from the query, and how far
its next-token distribution moves from the full cache's, step by step."""

import pytest

from engine.analysis import ledger as ledger_lib
from engine.errors import InputError
from engine.models import chat as chat_model
from engine.models.cache_policy import CachePolicy

PROMPT = "Repeat after me: red green blue, red green blue, red green blue."


def test_the_full_cache_loses_nothing(chat):
    led = ledger_lib.ledger(chat, PROMPT, CachePolicy("full"), max_new_tokens=4)
    assert led.mass == [0.0] * len(led.mass) and all(not e for e in led.evicted)
    assert led.kl == [0.0] * len(led.kl)
    assert led.first_divergence is None and led.written == led.full_tokens


def test_a_window_evicts_what_its_definition_says_and_loses_attention(chat):
    window = 8
    led = ledger_lib.ledger(chat, PROMPT, CachePolicy("window", window=window), max_new_tokens=4)
    for s, (kept, gone) in enumerate(zip(led.kept, led.evicted, strict=True)):
        n = led.n_prompt + s  # positions after step s appended its query's K/V
        assert kept == list(range(n - window, n))
        assert gone == list(range(n - window))
    # the sink (position 0) is evicted: the full cache put much of its attention there
    assert all(m > 0.1 for m in led.mass), led.mass
    assert all(k > 0 for k in led.kl)


def test_before_the_first_eviction_the_two_caches_are_one(chat):
    """A window as long as the prompt evicts nothing at step 0: KL exactly 0 and no mass;
    at step 1 the text outgrows it and position 0 goes."""
    n = len(chat_model.encode(chat, PROMPT))
    led = ledger_lib.ledger(chat, PROMPT, CachePolicy("window", window=n), max_new_tokens=4)
    assert led.evicted[0] == [] and led.kl[0] == 0.0 and led.mass[0] == 0.0
    assert led.evicted[1] == [0] and led.mass[1] > 0


def test_a_policy_larger_than_the_prompt_is_refused(chat):
    with pytest.raises(InputError) as caught:
        ledger_lib.ledger(chat, "Hi", CachePolicy("window", window=999), max_new_tokens=2)
    assert caught.value.message.key == "cache.larger_than_prompt"
