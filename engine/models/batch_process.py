"""The class's batch in a process of its own: the server's threads never hold its steps up.

A decoding step of the batch is about two thousand small PyTorch operations. Each one
releases Python's GIL and must take it back, so every other thread of the Streamlit
server that runs Python at that moment (a page rerun, a figure serialised, the event loop
sending a session its update) delays the step. Measured on a 2-core Xeon: a step of 10
sequences took 0.17 s alone, 0.41 s beside one thread running Python half of the time,
and 0.6–1.0 s inside the server while a teacher moved a slider on another page (its own
CPU time stayed 0.24 s). That is why vLLM's V1 engine runs its scheduler and model in an
``EngineCore`` process apart from the API server, talking over sockets
(docs.vllm.ai, "Architecture Overview"). Here the same split:

- :class:`BatchProcess` lives in the server. It has the :class:`~engine.models.batching.
  Batcher`'s interface (``submit``, ``position``, ``estimated_wait``, ``load_info``,
  ``ready``, ``chat``); it checks each request with its own copy of the model (an
  :class:`~engine.errors.InputError` reaches the caller at once) and sends it on.
- ``python -m engine.models.batch_process`` is the engine process: one
  :class:`~engine.models.batching.Batcher` and two threads, one reading requests, one
  reporting every 50 ms where each request stands and sending each finished Trace.

Messages are framed bytes over the child's stdin and stdout: a JSON head, then a Trace's
arrays as raw little-endian bytes (no pickle; a 30-layer Trace decodes in ≈ 2 ms where
its JSON text takes ≈ 0.25 s). The child exits when the server's end of the pipe closes.
Should the engine process end, what it held fails with a message and the batch goes on in
a thread of the server (the Batcher as it ran before), so a class is never left without.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import numpy as np
import torch

from engine.errors import InputError
from engine.messages import Message
from engine.models import batching, registry
from engine.models.cache_policy import FULL, CachePolicy
from engine.trace import Trace

log = logging.getLogger(__name__)
REPORT_S = 0.05  # the engine process's status cadence while it holds requests


# -- framing --------------------------------------------------------------------------------
def write(stream, head: dict, blobs: tuple[bytes, ...] = ()) -> None:
    """One message: the number of parts, each part's length, then the parts."""
    parts = [json.dumps(head).encode(), *blobs]
    frame = struct.pack("<I", len(parts)) + b"".join(struct.pack("<Q", len(p)) for p in parts)
    stream.write(frame + b"".join(parts))
    stream.flush()


def read(stream) -> tuple[dict, list[bytes]] | None:
    """The next message, or None when the other end has closed."""
    count = stream.read(4)
    if len(count) < 4:
        return None
    (n,) = struct.unpack("<I", count)
    sizes = struct.unpack(f"<{n}Q", stream.read(8 * n))
    parts = [stream.read(size) for size in sizes]
    if any(len(p) != size for p, size in zip(parts, sizes, strict=True)):
        return None
    return json.loads(parts[0]), parts[1:]


def trace_parts(trace: Trace) -> tuple[dict, tuple[bytes, ...]]:
    """A Trace as its metadata and its arrays' bytes, maps first, then vectors."""
    meta = trace._meta()
    arrays = [m.weights for m in trace.maps.values()] + list(trace.vectors.values())
    meta["arrays"] = [[a.dtype.newbyteorder("<").str, list(a.shape)] for a in arrays]
    return meta, tuple(np.ascontiguousarray(a, a.dtype.newbyteorder("<")).tobytes() for a in arrays)


def trace_from(meta: dict, blobs: list[bytes]) -> Trace:
    """:func:`trace_parts` reversed, through the Trace's own checks (as a file is read)."""
    specs, n_maps = meta.pop("arrays"), len(meta["maps"])
    arrays = {}
    for i, ((dtype, shape), blob) in enumerate(zip(specs, blobs, strict=True)):
        a = np.frombuffer(blob, dtype=dtype).reshape(shape).copy()  # writable, native order
        arrays[f"map{i}" if i < n_maps else f"vec{i - n_maps}"] = a
    meta["_arrays"] = arrays
    return Trace._from_meta(meta, json_payload=False)


def _error_head(exc: BaseException) -> dict:
    if isinstance(exc, InputError):
        return {"key": exc.message.key, "params": exc.message.params}
    return {"text": f"{type(exc).__name__}: {exc}"}


def _error(head: dict) -> BaseException:
    if "key" in head:
        return InputError(Message(head["key"], **head["params"]))
    return RuntimeError(f"the batch process failed: {head['text']}")


# -- the server's side ----------------------------------------------------------------------
class RemoteTicket:
    """A request sent to the engine process: the :class:`~engine.models.batching.Ticket`'s
    interface (``done``, ``cancel``, ``steps``, ``result``)."""

    def __init__(self, owner: BatchProcess, number: int, writing):
        self.owner, self.number, self.writing = owner, number, writing
        self.done, self.cancelled = threading.Event(), threading.Event()
        self.trace: Trace | None = None
        self.error: BaseException | None = None
        self.position, self.written, self.wait_s = 1, 0, None

    def cancel(self) -> None:
        """Leave the batch at the next step (or the line, if still waiting)."""
        if not self.cancelled.is_set():
            self.cancelled.set()
            self.owner._send({"op": "cancel", "id": self.number})

    @property
    def steps(self) -> tuple[int, int]:
        return self.written, self.writing.max_new_tokens

    def result(self, timeout: float | None = None) -> Trace | None:
        if not self.done.wait(timeout):
            raise TimeoutError
        if self.error is not None:
            raise self.error
        return self.trace


class BatchProcess:
    """The class's batch, run by ``python -m engine.models.batch_process`` (module
    docstring). ``load`` gives the server its own copy of the model (its other sections use
    it, and it checks requests); ``threads`` is the engine process's torch threads: a
    number, or a function asked whenever the engine reports."""

    def __init__(
        self,
        load: Callable[[], object],
        *,
        threads: int | Callable[[], int] = 1,
        capacity: int = batching.CAPACITY,
        command: tuple[str, ...] = (sys.executable, "-m", "engine.models.batch_process"),
    ):
        self.load, self.threads, self.capacity = load, threads, capacity
        self.command = list(command)
        self.max_batch = batching.MAX_BATCH
        self.chat = None
        self.load_error: BaseException | None = None
        self.ready = threading.Event()
        self.started: float | None = None
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()  # one writer at a time on the child's stdin
        self._state = threading.Lock()  # the tickets held, and whether the process is gone
        self._tickets: dict[int, RemoteTicket] = {}
        self._numbers = itertools.count(1)
        self._info = {"waiting": 0, "active": 0, "max_batch": self.max_batch}
        self._info |= {"capacity": capacity, "steps": 0, "tokens": 0, "largest_batch": 0}
        self._threads_sent = 0
        self._fallback: batching.Batcher | None = None

    def start(self) -> BatchProcess:
        if self.started is None:
            self.started = time.perf_counter()
            threading.Thread(target=self._boot, name="batch-process", daemon=True).start()
        return self

    def _boot(self) -> None:
        try:  # the engine process loads its copy of the model while this one loads its own
            self._proc = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
        except OSError:
            log.exception("the batch process could not be started")
        try:
            self.chat = self.load()
        except Exception as exc:  # noqa: BLE001 - shown by whoever waits for the model
            log.exception("the chat model could not be loaded")
            if self._proc:
                self._proc.stdin.close()  # the engine process leaves when its pipe closes
            self.load_error = exc
            self.ready.set()
            return
        first = read(self._proc.stdout) if self._proc else None
        if first is None or first[0] != {"op": "ready"}:
            detail = first[0].get("error") if first else None
            self._fail(RuntimeError(f"the batch process did not start: {detail}"))
            self.ready.set()
            return
        self._send_threads()
        self.ready.set()
        self._listen()

    def _send(self, head: dict) -> None:
        with self._lock:
            try:
                write(self._proc.stdin, head)
            except (BrokenPipeError, OSError, ValueError):
                pass  # the reader has seen the engine process end and failed its tickets

    def _send_threads(self) -> None:
        n = self.threads() if callable(self.threads) else self.threads
        n = max(1, int(n))
        if n != self._threads_sent:
            self._threads_sent = n
            self._send({"op": "threads", "n": n})

    def _listen(self) -> None:
        while (message := read(self._proc.stdout)) is not None:
            head, blobs = message
            if head["op"] == "status":
                self._info = head["info"]
                for number, (position, written, wait_s) in head["tickets"].items():
                    t = self._tickets.get(int(number))
                    if t is not None:
                        t.position, t.written, t.wait_s = position, written, wait_s
                self._send_threads()
            elif head["op"] == "done":
                t = self._tickets.pop(head["id"], None)
                if t is None:
                    continue
                if "error" in head:
                    t.error = _error(head["error"])
                elif head.get("trace") is not None:
                    try:
                        t.trace = trace_from(head["trace"], blobs)
                    except Exception as exc:  # noqa: BLE001 - this request hears it
                        t.error = exc
                t.done.set()
        self._fail(RuntimeError("the batch process stopped"))

    def _fail(self, exc: BaseException) -> None:
        """The engine process ended: what it held hears why, and the batch goes on in a
        thread of this process (slower beside busy pages, but the class keeps writing)."""
        code = self._proc.poll() if self._proc else None
        log.error("the batch process ended (exit %s); batching in a thread", code)
        fallback = batching.Batcher(lambda: self.chat, threads=self.threads).start()
        fallback.ready.wait()
        with self._state:  # a request submitted from now on goes to the thread
            self._fallback, held = fallback, list(self._tickets.values())
            self._tickets.clear()
        for t in held:
            t.error = exc
            t.done.set()

    # -- the Batcher's interface ----------------------------------------------------------
    def submit(self, prompt: str, *, policy: CachePolicy = FULL, **options) -> RemoteTicket:
        """Check the request here (InputError at once), then send it to the engine."""
        if not batching.batchable(policy):
            raise ValueError(f"the {policy.name} cache evicts per request: it runs alone")
        if not self.ready.is_set():
            raise RuntimeError("submit after ready: the model is still loading")
        if self.load_error is not None:
            raise self.load_error
        writing = batching.chat_lib.Writing(self.chat, prompt, policy=policy, **options)
        with self._state:
            if self._fallback is not None:
                return self._fallback.submit(prompt, policy=policy, **options)
            waiting = sum(1 for t in self._tickets.values() if t.position > 0)
            if waiting >= self.capacity:
                raise batching.Full(waiting)
            ticket = RemoteTicket(self, next(self._numbers), writing)
            self._tickets[ticket.number] = ticket
        self._send({"op": "submit", "id": ticket.number, "prompt": prompt, "options": options})
        return ticket

    def position(self, ticket) -> int:
        if not isinstance(ticket, RemoteTicket):
            return self._fallback.position(ticket)
        return 0 if ticket.done.is_set() else ticket.position

    def estimated_wait(self, ticket) -> float | None:
        if not isinstance(ticket, RemoteTicket):
            return self._fallback.estimated_wait(ticket)
        return 0.0 if ticket.done.is_set() else ticket.wait_s

    def load_info(self) -> dict:
        return self._fallback.load_info() if self._fallback else dict(self._info)


# -- the engine process ---------------------------------------------------------------------
def _report(b: batching.Batcher, tickets: dict, out, lock: threading.Lock) -> None:
    """Every REPORT_S while requests are held: each one's place, tokens and estimated
    wait; and each finished one's Trace (or error), once."""
    while True:
        time.sleep(REPORT_S)
        if not tickets:
            continue
        status = {}
        for number, t in list(tickets.items()):
            if t.done.is_set():
                tickets.pop(number)
                head: dict = {"op": "done", "id": number}
                blobs: tuple[bytes, ...] = ()
                if t.error is not None:
                    head["error"] = _error_head(t.error)
                elif t.trace is not None:
                    head["trace"], blobs = trace_parts(t.trace)
                with lock:
                    write(out, head, blobs)
            else:
                status[number] = [b.position(t), t.writing.steps, b.estimated_wait(t)]
        with lock:
            write(out, {"op": "status", "tickets": status, "info": b.load_info()})


def serve(inp, out, load: Callable[[], object]) -> None:
    """Read requests from ``inp`` until it closes; the Batcher writes them."""
    # Only the Batcher's thread may run torch on several cores. Once another thread of the
    # process has had an OpenMP team (here: the zeros a request's Writing allocates), the
    # Batcher's parallel steps slow down: a step of 30 sequences on 2 cores took 0.20–0.31 s
    # against 0.12–0.15 s when every other thread keeps to one.
    torch.set_num_threads(1)
    threads = [1]
    b = batching.Batcher(load, threads=lambda: threads[0]).start()
    b.ready.wait()
    if b.load_error is not None:
        write(out, {"op": "ready", "error": _error_head(b.load_error)})
        return
    write(out, {"op": "ready"})
    tickets: dict = {}
    lock = threading.Lock()
    threading.Thread(target=_report, args=(b, tickets, out, lock), daemon=True).start()
    while (message := read(inp)) is not None:
        head = message[0]
        if head["op"] == "threads":
            threads[0] = int(head["n"])
        elif head["op"] == "cancel" and head["id"] in tickets:
            tickets[head["id"]].cancel()
        elif head["op"] == "submit":
            try:
                tickets[head["id"]] = b.submit(head["prompt"], **head["options"])
            except Exception as exc:  # noqa: BLE001 - the request hears why
                with lock:
                    write(out, {"op": "done", "id": head["id"], "error": _error_head(exc)})


def main() -> None:
    # The protocol owns the original stdout; anything a library prints goes to stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    serve(sys.stdin.buffer, out, lambda: registry.get(registry.CHAT).load())
    os._exit(0)  # the server closed the pipe: the batch thread is a daemon, leave now


if __name__ == "__main__":
    main()
