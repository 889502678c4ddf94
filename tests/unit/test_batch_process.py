"""The class's batch in its own process (engine.models.batch_process): the same Traces as
the batch in a thread, the engine's errors at submit, Stop, and what happens when the
process ends."""

import io
import sys
import time

import numpy as np
import pytest

from engine.errors import InputError
from engine.models import batch_process as bp
from engine.models import chat as chat_model
from tests.unit.test_chat_batch import REQUESTS, ROUNDING, same


@pytest.fixture(scope="module")
def alone(chat):
    return [chat_model.generate(chat, **r) for r in REQUESTS]


@pytest.fixture(scope="module")
def engine(chat):
    b = bp.BatchProcess(lambda: chat, threads=1).start()
    assert b.ready.wait(300) and b.load_error is None, b.load_error
    yield b
    b._proc.stdin.close()
    b._proc.wait(30)


def test_a_trace_travels_bit_for_bit(alone):
    head, blobs = bp.trace_parts(alone[0])
    stream = io.BytesIO()
    bp.write(stream, {"op": "done", "trace": head}, blobs)
    stream.seek(0)
    got_head, got_blobs = bp.read(stream)
    back = bp.trace_from(got_head["trace"], got_blobs)
    assert back.outputs == alone[0].outputs and back.inputs == alone[0].inputs
    for name, m in alone[0].maps.items():
        assert back.maps[name].weights.dtype == m.weights.dtype
        assert np.array_equal(back.maps[name].weights, m.weights)
        assert back.maps[name].weights.flags.writeable
    assert bp.read(stream) is None  # the stream's end: the other side has closed


def test_an_error_keeps_its_message_id():
    err = bp._error(bp._error_head(InputError("chat.empty")))
    assert isinstance(err, InputError) and err.message.key == "chat.empty"
    other = bp._error(bp._error_head(KeyError("x")))
    assert isinstance(other, RuntimeError) and "KeyError" in str(other)


def test_the_engine_process_writes_what_each_would_alone(engine, alone):
    tickets = [engine.submit(**r) for r in REQUESTS]
    for a, t in zip(alone, tickets, strict=True):
        same(a, t.result(300), ROUNDING)
        assert engine.position(t) == 0 and engine.estimated_wait(t) == 0.0
    assert engine.load_info()["largest_batch"] >= 2


def test_bad_input_is_refused_at_submit(engine):
    with pytest.raises(InputError) as exc:
        engine.submit("", max_new_tokens=3)
    assert exc.value.message.key == "chat.empty"
    with pytest.raises(InputError):
        engine.submit("Hi", max_new_tokens=10**9)


def test_stop_ends_one_request_and_reports_progress(engine):
    long = engine.submit("Tell me a long story about a cat.", max_new_tokens=64)
    short = engine.submit("Hi", max_new_tokens=4)
    deadline = time.monotonic() + 120
    while long.steps[0] < 3 and time.monotonic() < deadline:
        time.sleep(0.05)  # the engine reports the tokens written as it goes
    assert long.steps[0] >= 3 and engine.position(long) == 0
    long.cancel()
    trace = long.result(60)
    out = trace.outputs
    assert out["stopped"] and len(out["token_ids"]) < out["n_prompt"] + 64
    assert not short.result(60).outputs["stopped"]


def test_the_process_ending_fails_what_it_held_and_the_batch_goes_on(chat):
    b = bp.BatchProcess(lambda: chat, threads=1).start()
    assert b.ready.wait(300) and b.load_error is None
    t = b.submit("Tell me a long story about a dog.", max_new_tokens=64)
    b._proc.kill()
    with pytest.raises(RuntimeError, match="stopped"):
        t.result(60)
    # the class goes on: later requests are batched in a thread of this process
    again = b.submit(**REQUESTS[0])
    assert b.position(again) in (0, 1) and b.estimated_wait(again) is not None
    same(chat_model.generate(chat, **REQUESTS[0]), again.result(300), ROUNDING)
    assert b.load_info()["steps"] >= 1


def test_an_engine_process_that_cannot_start_leaves_the_batch_in_a_thread(chat):
    b = bp.BatchProcess(lambda: chat, threads=1, command=(sys.executable, "-c", "exit(3)"))
    assert b.start().ready.wait(120) and b.load_error is None
    same(chat_model.generate(chat, **REQUESTS[3]), b.submit(**REQUESTS[3]).result(300), ROUNDING)


def test_a_model_that_cannot_load_is_the_error_every_request_hears():
    def broken():
        raise InputError("chat.empty")

    b = bp.BatchProcess(broken, command=(sys.executable, "-c", "exit(0)")).start()
    assert b.ready.wait(60) and isinstance(b.load_error, InputError)
    with pytest.raises(InputError):
        b.submit("Hi")
