"""A classroom at once: N simulated sessions speaking Streamlit's own websocket protocol.

    python bench/load.py                                # starts one server; N = 10, 30, 60
    python bench/load.py --replicas 2                   # starts scripts/serve.sh --replicas 2
    python bench/load.py --url http://host:8501 --pid 1234 --sessions 30

Each session does on the wire what a browser tab does: GET / (nginx's sticky cookie,
Streamlit's XSRF cookie), open /_stcore/stream, send BackMsg rerun_script messages (page
changes and widget values) and read ForwardMsg deltas until script_finished, so the load is
the server's alone, not thirty Chromiums' on the same cores. The classroom flow: open the
alignment page, type a sentence, change the decoding step, open the memory page, answer
another story, open the Variants lab, open the chat model and move its step slider, with a
student's pause between actions. Widgets are found by their label in the deltas, so the flow
survives page refactors. The train-now flow (issue 21): every session opens the Alignment
page's "Train it now" and presses Train with its own seed at once; each run's outcome
(trained, told the server is busy, stopped by the time limit) and its wall time are counted,
so the server-wide limit on live trainings can be seen to hold while pages stay responsive.
The generate flow (issue 30): every session opens the Chat page, types its own prompt of
about twenty words (20 new tokens, chat template on) and presses Generate within two
seconds of the others; per press: generated or refused, seconds from the press to the
page finished, tokens written (the page's "Step 1 of N"), and the whole server's tokens
per second. ``--compare-batching`` runs the same phases again on a server started with
``ATTENTION_STUDIO_BATCHING=0`` (every generation alone through the heavy-work queue), so
the ratio is measured in one run:

    python bench/load.py --flow generate --sessions 10,30 --compare-batching

Measured per N: p50/p95 seconds from a widget change to its script_finished (and from a
page change to its script_finished), errors (exceptions or error alerts drawn, failed or
timed-out runs, closed sockets), and the RSS of the server's process tree at the start
(after a warm-up session has loaded every model), at its peak and ten seconds after the
sessions end. Targets (issue 15) at N = 30: 0 errors, p95 ≤ 3 s, peak ≤ 4 GB and memory
back within 10 % of the start. Last stdout line: one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._save import RESULTS, save  # noqa: E402
from tests.e2e.support import free_port, start_server, wait_for_health  # noqa: E402

TARGET_N, TARGET_P95_S, TARGET_RSS_B, TARGET_BACK = 30, 3.0, 4 * 2**30, 0.10
STRING_WIDGETS = {"text_area", "text_input", "selectbox", "radio", "color_picker"}
ARRAY_WIDGETS = {"multiselect", "button_group", "select_slider"}
TOPICS = [
    "photosynthesis",
    "gravity",
    "the water cycle",
    "volcanoes",
    "prime numbers",
    "the French revolution",
    "electric circuits",
    "the moon's phases",
    "erosion",
    "fractions",
    "the heart",
    "magnets",
    "rainbows",
    "tides",
    "bacteria",
    "seasons",
]
AUDIENCES = ["a ten year old", "my grandmother", "a new student", "a tired classmate"]
STEP_OF = re.compile(r"\*\*Step 1 of (\d+)\.\*\*")
SENTENCES = [
    "the cat sat on the mat .",
    "the european economic area agreement was signed in august 1992 .",
    "the minister did not sign the treaty .",
    "my friend reads a book in the garden .",
]


class ProtocolError(Exception):
    """The server answered in a way a browser would show as broken."""


@dataclass
class Widget:
    kind: str  # the Element oneof name: text_area, slider, number_input, ...
    proto: object  # the widget's own message (label, options, default, ...)
    fragment_id: str


@dataclass
class Run:
    """One script run, from the BackMsg that asked for it to its script_finished."""

    action: str  # "open <page>" or "set <label>"
    seconds: float
    errors: list[str]
    messages: int
    bytes: int


@dataclass
class Session:
    """One browser tab on the wire: one websocket, one Streamlit session."""

    url: str
    timeout: float = 120.0
    pages: dict[str, str] = field(default_factory=dict)  # url path → page_script_hash
    widgets: dict[str, Widget] = field(default_factory=dict)  # label → widget, current page
    texts: list[str] = field(default_factory=list)  # markdown drawn by the last run
    page: str = ""
    outcomes: list[tuple[str, float]] = field(default_factory=list)  # live trainings
    _values: dict[str, WidgetState] = field(default_factory=dict)
    _ws: object = None

    async def connect(self) -> Run:
        """Handshake like a browser, then run the home page."""
        cookies = await asyncio.to_thread(_first_get, self.url)
        parsed = urlparse(self.url)
        scheme = "wss" if parsed.scheme == "https" else "ws"
        self._ws = await websockets.connect(
            f"{scheme}://{parsed.netloc}{parsed.path.rstrip('/')}/_stcore/stream",
            subprotocols=["streamlit"],
            origin=f"{parsed.scheme}://{parsed.netloc}",
            additional_headers={"Cookie": cookies} if cookies else None,
            max_size=None,
            open_timeout=self.timeout,
            ping_interval=None,  # a page run can hold the server's event loop for seconds
        )
        return await self._rerun("open home", page_hash="")

    async def open(self, url_path: str) -> Run:
        """Go to a page, as clicking its link in the sidebar does."""
        if url_path not in self.pages:
            raise ProtocolError(f"no page {url_path!r}; the app has {sorted(self.pages)}")
        self.page, self._values = url_path, {}
        return await self._rerun(f"open {url_path}", page_hash=self.pages[url_path])

    def set(self, label: str, value) -> None:
        """Set a widget inside a form without a rerun: the browser sends it on submit."""
        state = widget_state(self.find(label), value)
        self._values[state.id] = state

    async def change(self, label: str, value) -> Run:
        """Set the widget with this label (exact, else prefix, else substring) and rerun."""
        widget = self.find(label)
        state = widget_state(widget, value)
        self._values[state.id] = state
        return await self._rerun(f"set {label}", self.pages.get(self.page, ""), widget.fragment_id)

    def find(self, label: str) -> Widget:
        want = label.casefold()
        for match in (
            lambda s: s == want,
            lambda s: s.startswith(want),
            lambda s: want in s,
        ):
            hits = [w for lab, w in self.widgets.items() if match(lab.casefold())]
            if hits:
                return hits[0]
        raise ProtocolError(
            f"no widget labelled {label!r} on page {self.page!r}; labels: {sorted(self.widgets)}"
        )

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()

    async def _rerun(self, action: str, page_hash: str, fragment_id: str = "") -> Run:
        back = BackMsg()
        rerun = back.rerun_script
        rerun.page_script_hash = page_hash
        rerun.query_string = ""
        if fragment_id:
            rerun.fragment_id = fragment_id
        # The browser sends every widget value it holds; values the session has not touched
        # are the server's own defaults, which it keeps, so only the touched ones go out.
        rerun.widget_states.widgets.extend(self._values.values())
        t0 = time.perf_counter()
        await self._ws.send(back.SerializeToString())
        errors: list[str] = []
        seen: dict[str, Widget] = {}
        texts: list[str] = []
        n = size = 0
        while True:
            try:
                raw = await asyncio.wait_for(self._ws.recv(), self.timeout)
            except TimeoutError:
                raise ProtocolError(f"no script_finished within {self.timeout:.0f} s") from None
            except websockets.ConnectionClosed as exc:
                raise ProtocolError(f"websocket closed: {exc}") from None
            n, size = n + 1, size + len(raw)
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "navigation":
                pages = msg.navigation.app_pages
                self.pages = {p.url_pathname or "home": p.page_script_hash for p in pages}
            elif kind == "page_not_found":
                errors.append(f"page not found: {msg.page_not_found.page_name!r}")
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                element = msg.delta.new_element
                ekind = element.WhichOneof("type")
                proto = getattr(element, ekind)
                if ekind == "exception":
                    errors.append(f"exception: {proto.type}: {proto.message[:200]}")
                elif ekind == "alert" and proto.format == proto.ERROR:
                    errors.append(f"error alert: {proto.body[:200]}")
                elif ekind in ("markdown", "alert"):
                    texts.append(proto.body)
                elif getattr(proto, "id", "") and getattr(proto, "label", ""):
                    seen[proto.label] = Widget(ekind, proto, msg.delta.fragment_id)
            elif kind == "script_finished":
                status = msg.script_finished
                if status == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
                    self.widgets.update(seen)
                    self.texts += texts
                elif status == ForwardMsg.FINISHED_SUCCESSFULLY:
                    self.widgets, self.texts = seen, texts
                else:
                    errors.append(f"script finished with status {status}")
                return Run(action, time.perf_counter() - t0, errors, n, size)


def widget_state(widget: Widget, value) -> WidgetState:
    """The WidgetState a browser sends for this widget set to value (Streamlit's serde)."""
    proto, kind = widget.proto, widget.kind
    state = WidgetState(id=proto.id)
    if kind in STRING_WIDGETS:
        options = list(getattr(proto, "options", []))
        if options and str(value) not in options:
            raise ProtocolError(f"{proto.label!r} has no option {value!r}; options: {options}")
        state.string_value = str(value)
    elif kind == "slider":
        state.double_array_value.data[:] = [float(v) for v in _as_list(value)]
    elif kind == "number_input":
        state.double_value = float(value)
    elif kind in ("checkbox", "toggle"):
        state.bool_value = bool(value)
    elif kind == "button":
        state.trigger_value = True
    elif kind in ARRAY_WIDGETS:
        state.string_array_value.data[:] = [str(v) for v in _as_list(value)]
    else:
        raise ProtocolError(f"setting a {kind} ({proto.label!r}) is not implemented")
    return state


def _as_list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _first_get(url: str) -> str:
    """GET / as a browser does first; return its cookies as one Cookie header value."""
    with urllib.request.urlopen(url.rstrip("/") + "/", timeout=60) as r:
        r.read()
        return "; ".join(c.split(";", 1)[0] for c in r.headers.get_all("Set-Cookie") or [])


# --- the flows ----------------------------------------------------------------------------


async def classroom_flow(s: Session, rng: random.Random, pause) -> tuple[list, list]:
    """Alignment → type → step-by-step view → step → memory → another story → Variants lab
    → the chat model → its step slider."""
    opens, changes = [], []
    opens.append(await s.open("alignment"))
    await pause()
    changes.append(await s.change("Input", rng.choice(SENTENCES)))
    await pause()
    changes.append(await s.change("Show", "Step by step"))  # the step slider's section
    await pause()
    changes.append(await s.change("Decoding step", 2))
    await pause()
    opens.append(await s.open("memory"))
    await pause()
    changes.append(await s.change("Story", rng.randrange(1, 200)))
    await pause()
    opens.append(await s.open("variants"))
    await pause()
    opens.append(await s.open("chat"))  # the default prompt: one generation, shared
    await pause()
    changes.append(await s.change("Generation step", rng.randrange(2, 8)))
    return opens, changes


async def short_flow(s: Session, rng: random.Random, pause) -> tuple[list, list]:
    """The basics page and one sentence: the protocol test's flow (seconds, not minutes)."""
    opens = [await s.open("basics")]
    await pause()
    changes = [await s.change("Sentence", f"attention is all you need {rng.randrange(100)}")]
    return opens, changes


# What the Alignment page's live training says when it ends (app/locales/en/alignment.toml).
# The first that matches wins: a run cut by the time limit also says how long it trained.
OUTCOMES = {
    "busy": "already training",
    "stopped_time": "Stopped by the time limit",
    "queue_full": "The studio is busy",
    "trained": "Trained in ",
}


async def train_now_flow(s: Session, rng: random.Random, pause) -> tuple[list, list]:
    """Alignment → "Train it now" → a seed of its own → Train: the press's run ends when the
    training does (the page streams it), or at once with "busy"."""
    opens = [await s.open("alignment")]
    await pause()
    changes = [await s.change("Show", "Train it now")]
    await pause()
    changes.append(await s.change("Seed", rng.randrange(0, 1000)))
    s.texts = []
    run = await s.change("Train it now", True)
    said = " ".join(s.texts)
    outcome = next((k for k, text in OUTCOMES.items() if text in said), "unknown")
    s.outcomes.append((outcome, run.seconds))
    return opens, changes


FLOWS = {"classroom": classroom_flow, "short": short_flow, "train-now": train_now_flow}


# --- the generate flow: a class pressing Generate at once ----------------------------------

GENERATE_SECTION = {  # what bench/RESULTS.md says above the numbers
    "title": "A class generating at once",
    "method": "N students on the Chat page, each with their own ~20-word prompt (chat "
    "template on, 20 new tokens), press Generate within 2 s of each other; press → page "
    "finished per student, the whole server's tokens per second (and per second of its CPU "
    "time), first with continuous batching, then on a server with "
    "ATTENTION_STUDIO_BATCHING=0 (each generation alone through the heavy-work queue).",
}
GENERATE_TARGETS = {
    30: {"generated": 30, "refused": 0, "p95_s": 10.0, "elsewhere_p50_ms": 500.0},
    10: {"p95_s": 5.0},
}
TARGET_OVER_MODEL_B = 1.5 * 2**30  # the batch's memory over the server with its model loaded
TARGET_RATIO = 3.0  # whole-server tokens/s, batched over unbatched, at 30 students
MAX_STEAL_PERCENT = 10.0  # a phase the host took more CPU from than this is no verdict


def student_prompt(i: int) -> str:
    """Student i's own prompt, about twenty words (no two alike, so nothing is shared)."""
    topic = TOPICS[i % len(TOPICS)]
    who = AUDIENCES[(i // len(TOPICS)) % len(AUDIENCES)]
    return (
        f"Student {i + 1} asks: please explain {topic} to {who} in two short sentences, "
        "with one everyday example they will remember."
    )


async def _seated(url: str, i: int, timeout: float) -> Session:
    """A student on the Chat page with their prompt typed (the form not yet submitted)."""
    s = Session(url, timeout=timeout)
    await s.connect()
    await s.open("chat")
    s.set("Prompt", student_prompt(i))
    return s


async def _press(s: Session, at: float) -> dict:
    await asyncio.sleep(max(0.0, at - time.perf_counter()))
    s.texts = []
    pressed = time.perf_counter()
    try:
        run = await s.change("Generate", True)
        errors = run.errors
    except (ProtocolError, OSError, websockets.WebSocketException) as exc:
        errors = [f"{type(exc).__name__}: {exc}"]
    finished = time.perf_counter()
    said = " ".join(s.texts)
    steps = STEP_OF.search(said)
    outcome = (
        "generated"
        if "**Output:**" in said and not errors
        else "refused"
        if "The studio is busy" in said
        else "error"
    )
    await s.close()
    return {
        "outcome": outcome,
        "seconds": finished - pressed,
        "tokens": int(steps.group(1)) if steps and outcome == "generated" else 0,
        "pressed": pressed,
        "finished": finished,
        "errors": errors,
    }


async def _elsewhere(url: str, timeout: float, until: asyncio.Event) -> list[float]:
    """The teacher on another page while the class's batch runs: the Alignment page's
    decoding-step slider moved every half second; the seconds each move took."""
    s = Session(url, timeout=timeout)
    await s.connect()
    await s.open("alignment")
    await s.change("Show", "Step by step")
    moves, step = [], 1
    while not until.is_set():
        step = step % 4 + 1
        moves.append((await s.change("Decoding step", step)).seconds)
        await asyncio.sleep(0.5)
    await s.close()
    return moves


async def generate_phase(
    url, n, pid, *, window: float, timeout: float, seed: int, first: int = 0
) -> dict:
    """n students seated on the Chat page, then each presses Generate at a random moment
    within ``window`` seconds: outcomes, press → finished times, the server's tokens/s, the
    memory it took over the server's size before (the model already loaded), and how long
    a slider move on another page took meanwhile. Students are numbered from ``first``:
    a later phase on the same server must not ask an earlier phase's prompts, which the
    server answers from its finished-result cache at once."""
    rng = random.Random(seed)
    seated = await asyncio.gather(
        *(_seated(url, first + i, timeout) for i in range(n)), return_exceptions=True
    )
    sessions = [s for s in seated if isinstance(s, Session)]
    setup_errors = [f"{type(e).__name__}: {e}" for e in seated if not isinstance(e, Session)]
    sampler = Sampler(pid)
    start_rss = sampler.now()
    sampler.start()
    cpu0, load0 = cpu_seconds(pid) if pid else None, [round(x, 2) for x in os.getloadavg()]
    ticks0 = cpu_ticks()
    finished = asyncio.Event()
    teacher = asyncio.create_task(_elsewhere(url, timeout, finished))
    t0 = time.perf_counter() + 0.2
    presses = await asyncio.gather(*(_press(s, t0 + rng.uniform(0, window)) for s in sessions))
    finished.set()
    try:
        moves = await teacher
    except (ProtocolError, OSError, websockets.WebSocketException, KeyError) as exc:
        moves, setup_errors = [], [*setup_errors, f"teacher: {type(exc).__name__}: {exc}"]
    cpu = cpu_seconds(pid) - cpu0 if pid else None
    peak = await sampler.stop()
    made = [p for p in presses if p["outcome"] == "generated"]
    secs = [p["seconds"] for p in made]
    wall = max(p["finished"] for p in presses) - min(p["pressed"] for p in presses)
    tokens = sum(p["tokens"] for p in presses)
    count = Counter(p["outcome"] for p in presses)
    return {
        "sessions": n,
        "generated": count.get("generated", 0),
        "refused": count.get("refused", 0),
        "errors": count.get("error", 0) + len(setup_errors),
        "error_samples": sorted({e for p in presses for e in p["errors"]} | set(setup_errors))[:5],
        "p50_s": _round(percentile(secs, 0.5)),
        "p95_s": _round(percentile(secs, 0.95)),
        "max_s": _round(max(secs, default=None)),
        "p95_all_s": _round(percentile([p["seconds"] for p in presses], 0.95)),
        "tokens": tokens,
        "wall_s": round(wall, 2),
        "tokens_per_s": round(tokens / wall, 1) if wall > 0 else None,
        "server_cpu_s": round(cpu, 1) if cpu is not None else None,
        "tokens_per_cpu_s": round(tokens / cpu, 1) if cpu else None,
        "rss_peak_b": peak,
        "rss_start_b": start_rss,
        "rss_over_start_b": peak - start_rss if peak and start_rss else None,
        "elsewhere_moves": len(moves),
        "elsewhere_p50_ms": _round(1000 * percentile(moves, 0.5)) if moves else None,
        "elsewhere_max_ms": _round(1000 * max(moves)) if moves else None,
        "load_before": load0,
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "steal_percent": steal_percent(ticks0, cpu_ticks()),
    }


def report_generate(mode: str, p: dict) -> str:
    return (
        f"{mode:>9} N={p['sessions']:>3}: generated {p['generated']}, refused {p['refused']}, "
        f"errors {p['errors']}; press→finished p50 {p['p50_s']} s, p95 {p['p95_s']} s, max "
        f"{p['max_s']} s; {p['tokens']} tokens in {p['wall_s']} s = {p['tokens_per_s']} "
        f"tokens/s ({p['tokens_per_cpu_s']} per server CPU second); +{_gb(p['rss_over_start_b'])}"
        f"; a slider elsewhere p50 {p['elsewhere_p50_ms']} ms, max {p['elsewhere_max_ms']} ms"
        f" ({p['elsewhere_moves']} moves); load {p['load_after']}; stolen by the host "
        f"{p['steal_percent']} %"
    )


async def generate_run(args, url: str, pid: int | None, mode: str) -> list[dict]:
    """One warm-up student (the model loaded, the page compiled), then each phase."""
    warm = await _seated(url, 10_000, args.timeout)
    await warm.close()
    if pid:
        await wait_until_idle(pid)
    phases, first = [], 0
    for n in args.sessions:
        p = await generate_phase(
            url, n, pid, window=args.window, timeout=args.timeout, seed=n, first=first
        )
        first += n  # every phase's prompts are new to the server
        print(report_generate(mode, p), flush=True)
        phases.append(p)
        if pid:
            await wait_until_idle(pid)
    return phases


def generate_targets(out: dict) -> dict:
    checks = {}
    for n, want in GENERATE_TARGETS.items():
        p = next((p for p in out["batched"] if p["sessions"] == n), None)
        if p is None:
            continue
        for k, v in want.items():
            got = p[k]
            within = k.endswith(("_s", "_ms"))
            checks[f"{k}_{n}"] = got is not None and (got <= v if within else got == v)
        over = p["rss_over_start_b"]
        checks[f"memory_{n}"] = over is not None and over <= TARGET_OVER_MODEL_B
    ratio = out.get("ratio_tokens_per_s", {}).get(30)
    if ratio is not None:
        checks["ratio_30_ge_3"] = ratio >= TARGET_RATIO
    phases = [p for mode in ("batched", "unbatched") for p in out.get(mode, [])]
    stolen = max((p.get("steal_percent") or 0 for p in phases), default=0)
    # A run the host took CPU from is no verdict either way: at 40 % stolen every time here
    # doubled, and the unbatched half (longer) lost more, inflating the ratio.
    trusted = stolen <= MAX_STEAL_PERCENT
    met = bool(checks) and all(checks.values())
    return {"measured": bool(checks), "trusted": trusted, "met": met and trusted, **checks}


def generate_main(args) -> dict:
    """The generate flow on one server, or on two (batching on, then off) in one run."""
    modes = {"batched": {}}
    if args.compare_batching:
        modes["unbatched"] = {"ATTENTION_STUDIO_BATCHING": "0"}
    out = {
        "flow": "generate",
        "window_s": args.window,
        "new_tokens": 20,
        "template": True,
        "cores": os.cpu_count(),
        "load_before": [round(x, 2) for x in os.getloadavg()],
    }
    for mode, env in modes.items():
        with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
            if args.url:
                url, pid, proc = args.url.rstrip("/"), args.pid, None
            else:
                port = free_port()
                url = f"http://127.0.0.1:{port}"
                proc = start_server(port, Path(tmp) / "streamlit.log", env=os.environ | env)
                wait_for_health(url, proc)
                pid = proc.pid
            try:
                out[mode] = asyncio.run(generate_run(args, url, pid, mode))
            finally:
                if proc is not None:
                    stop_target(proc)
    if "unbatched" in out:
        out["ratio_tokens_per_s"] = {
            b["sessions"]: round(b["tokens_per_s"] / u["tokens_per_s"], 2)
            for b, u in zip(out["batched"], out["unbatched"], strict=True)
            if b["tokens_per_s"] and u["tokens_per_s"]
        }
    out["targets"] = generate_targets(out)
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


async def one_session(url, flow, seed, think, timeout, start_delay) -> dict:
    rng = random.Random(seed)
    await asyncio.sleep(start_delay)

    async def pause():
        await asyncio.sleep(rng.uniform(*think))

    s = Session(url, timeout=timeout)
    opens, changes, errors = [], [], []
    try:
        opens.append(await s.connect())
        more_opens, changes = await FLOWS[flow](s, rng, pause)
        opens += more_opens
    except (ProtocolError, OSError, websockets.WebSocketException) as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        try:
            await s.close()
        except Exception:  # noqa: BLE001 - a close on a dead socket is not a new error
            pass
    errors += [e for r in opens + changes for e in r.errors]
    return {
        "outcomes": s.outcomes,
        "runs": [(r.action, r.seconds) for r in opens + changes],
        "open_s": [r.seconds for r in opens],
        "change_s": [r.seconds for r in changes],
        "errors": errors,
        "bytes": sum(r.bytes for r in opens + changes),
    }


# --- server memory -----------------------------------------------------------------------


def tree_pids(root: int) -> list[int]:
    """root and all its descendants (from /proc; Linux only)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def tree_rss(root: int) -> int:
    """Bytes resident in root and all its descendants."""
    total = 0
    for pid in tree_pids(root):
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


def cpu_ticks() -> list[int]:
    """The machine's CPU time so far by kind (/proc/stat's first line, in ticks)."""
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:]]


def steal_percent(before: list[int], after: list[int]) -> float | None:
    """The share of the machine's CPU time the hypervisor gave to other guests between two
    :func:`cpu_ticks` (a shared cloud machine: at 50 % every timing here doubles)."""
    d = [b - a for a, b in zip(before, after, strict=False)]
    return round(100 * d[7] / sum(d), 1) if len(d) > 7 and sum(d) else None


def cpu_seconds(root: int) -> float:
    """User + system CPU time so far of root and its descendants (every replica)."""
    ticks = 0
    for pid in tree_pids(root):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            continue
    return ticks / os.sysconf("SC_CLK_TCK")


async def wait_until_idle(
    pid: int, *, busy: float = 0.05, quiet: int = 4, limit: float = 300
) -> float:
    """Wait until the server uses < ``busy`` CPU in each of ``quiet`` seconds in a row; the
    seconds waited.

    A page starts work in the background (the memory page's UMAP warm-up compiles numba
    kernels for ~20 s and ~150 MB; the first visit's preload waits 2 s, then loads the chat
    model and writes the Chat page's default views for ~30 s): "start" memory and a phase's
    timings are measured after it, not during it. One idle second is not enough: it was the
    preload's own 2 s pause, and a class of 10 then measured 20.9 s instead of 7.2 s.
    """
    t0, calm = time.perf_counter(), 0
    while time.perf_counter() - t0 < limit and calm < quiet:
        before = cpu_seconds(pid)
        await asyncio.sleep(1.0)
        calm = calm + 1 if cpu_seconds(pid) - before < busy else 0
    return round(time.perf_counter() - t0, 1)


class Sampler:
    """Peak RSS of the server's process tree, sampled twice a second."""

    def __init__(self, pid: int | None):
        self.pid, self.peak, self._task = pid, 0, None

    def now(self) -> int | None:
        return tree_rss(self.pid) if self.pid else None

    async def _loop(self):
        while True:
            self.peak = max(self.peak, await asyncio.to_thread(tree_rss, self.pid))
            await asyncio.sleep(0.5)

    def start(self):
        self.peak = self.now() or 0
        if self.pid:
            self._task = asyncio.create_task(self._loop())

    async def stop(self) -> int | None:
        if self._task:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        return self.peak if self.pid else None


# --- one phase and the whole run ---------------------------------------------------------


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


async def phase(url, n, flow, pid, *, think, ramp, timeout, settle, seed) -> dict:
    sampler = Sampler(pid)
    start_rss = sampler.now()
    sampler.start()
    t0 = time.perf_counter()
    results = await asyncio.gather(
        *(
            one_session(url, flow, seed * 1000 + i, think, timeout, ramp * i / max(n, 1))
            for i in range(n)
        )
    )
    wall = time.perf_counter() - t0
    await asyncio.sleep(settle)
    peak = await sampler.stop()
    after = sampler.now()
    changes = [x for r in results for x in r["change_s"]]
    opens = [x for r in results for x in r["open_s"]]
    errors = [e for r in results for e in r["errors"]]
    by_action: dict[str, list[float]] = {}
    for r in results:
        for action, seconds in r["runs"]:
            by_action.setdefault(action, []).append(seconds)
    trains = [x for r in results for x in r["outcomes"]]
    live = {
        "outcomes": dict(Counter(o for o, _ in trains)),
        "train_p50_s": _round(percentile([s for _, s in trains], 0.5)),
        "train_max_s": _round(max((s for _, s in trains), default=None)),
    }
    return {
        "sessions": n,
        **({"live": live} if trains else {}),
        "change_p50_s": _round(percentile(changes, 0.5)),
        "change_p95_s": _round(percentile(changes, 0.95)),
        "changes": len(changes),
        "open_p50_s": _round(percentile(opens, 0.5)),
        "open_p95_s": _round(percentile(opens, 0.95)),
        "opens": len(opens),
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:5],
        "rss_start_b": start_rss,
        "rss_peak_b": peak,
        "rss_after_b": after,
        "rss_after_vs_start": round(after / start_rss - 1, 3) if start_rss else None,
        "wall_s": round(wall, 1),
        "mb_received": round(sum(r["bytes"] for r in results) / 2**20, 1),
        "p50_by_action_s": {a: _round(percentile(v, 0.5)) for a, v in by_action.items()},
    }


def _round(x):
    return None if x is None else round(x, 3)


def _gb(b):
    return "n/a" if b is None else f"{b / 2**30:.2f} GB"


def report(p: dict) -> str:
    return (
        f"N={p['sessions']:>3}: change→finished p50 {p['change_p50_s']} s, p95 "
        f"{p['change_p95_s']} s ({p['changes']} changes); page open p50 {p['open_p50_s']} s, "
        f"p95 {p['open_p95_s']} s; errors {p['errors']}; RSS start {_gb(p['rss_start_b'])}, "
        f"peak {_gb(p['rss_peak_b'])}, +{p['settle_s']:.0f} s {_gb(p['rss_after_b'])} "
        f"({p['rss_after_vs_start']:+.0%} vs start); wall {p['wall_s']} s"
        if p["rss_after_vs_start"] is not None
        else f"N={p['sessions']:>3}: change→finished p50 {p['change_p50_s']} s, p95 "
        f"{p['change_p95_s']} s; errors {p['errors']}; wall {p['wall_s']} s"
    )


def targets(phases: list[dict]) -> dict:
    at = next((p for p in phases if p["sessions"] == TARGET_N), None)
    if at is None:
        return {"n": TARGET_N, "measured": False}
    checks = {
        "errors_0": at["errors"] == 0,
        "p95_le_3s": at["change_p95_s"] is not None and at["change_p95_s"] <= TARGET_P95_S,
        "peak_le_4GB": at["rss_peak_b"] is not None and at["rss_peak_b"] <= TARGET_RSS_B,
        "back_within_10pct": at["rss_after_vs_start"] is not None
        and at["rss_after_vs_start"] <= TARGET_BACK,
    }
    return {"n": TARGET_N, "measured": True, "met": all(checks.values()), **checks}


def replica_urls(run_dir: Path) -> list[str]:
    """The replicas behind serve.sh's nginx, read from the config it generated."""
    conf = (run_dir / "nginx.conf").read_text()
    return [f"http://{a}" for a in re.findall(r"^\s*server (127\.0\.0\.1:\d+)", conf, re.M)]


def start_target(args, run_dir: Path) -> tuple[str, int, subprocess.Popen]:
    """Start one server, or serve.sh with replicas; return (url, pid to measure, process)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    if args.replicas:
        log = open(run_dir / "serve.log", "w")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(
            ["bash", str(ROOT / "scripts/serve.sh"), "--replicas", str(args.replicas)]
            + ["--port", str(port), "--address", "127.0.0.1", "--run-dir", str(run_dir)],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        wait_for_health(url, proc, timeout=180)
    else:
        proc = start_server(port, run_dir / "streamlit.log")
        wait_for_health(url, proc)
    return url, proc.pid, proc


def stop_target(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


async def run_all(args, url: str, pid: int | None, warm_urls: list[str]) -> dict:
    think = tuple(float(x) for x in args.think.split(","))
    out = {
        "url": url,
        "replicas": args.replicas or None,
        "flow": args.flow,
        "think_s": list(think),
        "ramp_s": args.ramp,
        "cores": os.cpu_count(),
        "load_before": [round(x, 2) for x in os.getloadavg()],
        "rss_cold_b": tree_rss(pid) if pid else None,
    }
    # One session per process first, so every model is loaded and compiled before "start"
    # is measured: the caches are meant to stay, the sessions' own memory must come back.
    out["warmup"] = []
    for warm_url in warm_urls:
        warm = await one_session(warm_url, args.flow, 0, (0, 0), args.timeout, 0)
        out["warmup"].append(
            {"url": warm_url, "open_s": [round(x, 2) for x in warm["open_s"]]}
            | {"errors": warm["errors"]}
        )
    out["idle_wait_s"] = await wait_until_idle(pid) if pid else None
    out["phases"] = []
    for n in args.sessions:
        p = await phase(
            url,
            n,
            args.flow,
            pid,
            think=think,
            ramp=args.ramp,
            timeout=args.timeout,
            settle=args.settle,
            seed=n,
        )
        p["settle_s"] = args.settle
        p["load_after"] = [round(x, 2) for x in os.getloadavg()]
        out["phases"].append(p)
        print(report(p), flush=True)
    out["targets"] = targets(out["phases"])
    return out


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", help="an already running server or nginx front (default: start one)")
    ap.add_argument("--pid", type=int, help="with --url: the server process whose tree to measure")
    ap.add_argument("--replicas", type=int, default=0, help="start scripts/serve.sh --replicas N")
    ap.add_argument(
        "--sessions", default="10,30,60", help="comma-separated session counts, run in order"
    )
    ap.add_argument("--flow", choices=sorted(FLOWS) + ["generate"], default="classroom")
    ap.add_argument("--think", default="1,3", help="a student's pause between actions, min,max s")
    ap.add_argument("--ramp", type=float, default=5.0, help="seconds over which sessions join")
    ap.add_argument("--settle", type=float, default=10.0, help="seconds before the 'after' RSS")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds allowed for one run")
    ap.add_argument(
        "--window", type=float, default=2.0, help="generate flow: seconds the presses spread over"
    )
    ap.add_argument(
        "--compare-batching",
        action="store_true",
        help="generate flow: run the phases again on a server with ATTENTION_STUDIO_BATCHING=0",
    )
    ap.add_argument("--save", action="store_true", help="keep the JSON in bench/results/")
    args = ap.parse_args(argv)
    args.sessions = [int(x) for x in args.sessions.split(",")]
    return args


def main(argv=None) -> dict:
    args = parse_args(argv)
    if args.flow == "generate":
        out = generate_main(args)
        if args.save:
            save(out, "load-generate")
            path = RESULTS / "load-generate.json"
            path.write_text(
                json.dumps(
                    json.loads(path.read_text()) | GENERATE_SECTION, indent=1, ensure_ascii=False
                )
                + "\n"
            )
        print(json.dumps(out))
        return out
    proc = None
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        if args.url:
            url, pid = args.url.rstrip("/"), args.pid
            warm_urls = [url]  # behind someone else's nginx the replicas are unknown
        else:
            url, pid, proc = start_target(args, Path(tmp))
            warm_urls = replica_urls(Path(tmp)) if args.replicas else [url]
        try:
            out = asyncio.run(run_all(args, url, pid, warm_urls))
        finally:
            if proc is not None:
                stop_target(proc)
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
