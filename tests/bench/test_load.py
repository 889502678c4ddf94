"""bench/load.py's protocol client against the real server: two sessions, one short flow.

No browser: the client speaks Streamlit's websocket protocol itself, so this runs in seconds
and fails as soon as a Streamlit upgrade changes the messages the benchmark relies on.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.TextArea_pb2 import TextArea

from tests.e2e.support import ROOT, free_port, start_server, wait_for_health

spec = importlib.util.spec_from_file_location("bench_load", ROOT / "bench" / "load.py")
load = importlib.util.module_from_spec(spec)
sys.modules["bench_load"] = load  # dataclasses look their module up while the file runs
spec.loader.exec_module(load)


def in_own_thread(fn, *args):
    """Run fn in a fresh thread: Playwright's sync API leaves an event loop running in this
    one after an e2e test, and asyncio.run refuses to start inside it."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = free_port()
    proc = start_server(port, tmp_path_factory.mktemp("load") / "streamlit.log")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(url, proc)
        yield url, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_two_sessions_short_flow(server, capsys):
    url, pid = server
    out = in_own_thread(
        load.main,
        ["--url", url, "--pid", str(pid), "--flow", "short", "--sessions", "2"]
        + ["--think", "0,0", "--ramp", "0", "--settle", "0", "--timeout", "60"],
    )
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == out
    assert [w["errors"] for w in out["warmup"]] == [[]]
    (p,) = out["phases"]
    assert p["errors"] == 0, p["error_samples"]
    assert p["changes"] == 2 and p["opens"] == 4  # home + basics, twice
    assert 0 < p["change_p50_s"] <= p["change_p95_s"] < 60
    assert set(p["p50_by_action_s"]) == {"open home", "open basics", "set Sentence"}
    assert p["rss_start_b"] > 100 * 2**20 and p["rss_peak_b"] >= p["rss_start_b"]
    assert out["targets"] == {"n": 30, "measured": False}


def test_a_widget_change_reaches_the_script(server):
    """The new text must come back in the page, or the timings measure nothing."""

    async def flow():
        s = load.Session(server[0], timeout=60)
        await s.connect()
        await s.open("basics")
        before = s.find("Sentence")
        run = await s.change("Sentence", "one two three four five six seven")
        await s.close()
        return before, run, s

    before, run, s = in_own_thread(asyncio.run, flow())
    assert run.errors == [] and before.kind == "text_area"
    assert "7 tokens" in " ".join(s.texts)
    with pytest.raises(load.ProtocolError, match="no widget labelled"):
        s.find("a label no page has")


def test_two_students_generate_at_once(server, capsys):
    """The generate flow on the real Chat page: own prompts, Generate pressed together."""
    url, pid = server
    out = in_own_thread(
        load.main,
        ["--url", url, "--pid", str(pid), "--flow", "generate", "--sessions", "2"]
        + ["--window", "0.5", "--timeout", "300"],
    )
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == out
    (p,) = out["batched"]
    assert (p["generated"], p["refused"], p["errors"]) == (2, 0, 0), p["error_samples"]
    assert 2 <= p["tokens"] <= 40 and p["tokens_per_s"] > 0
    assert 0 < p["p50_s"] <= p["p95_s"] == p["max_s"] < 300
    assert "unbatched" not in out and out["targets"]["measured"] is False


def test_students_prompts_are_their_own_and_about_twenty_words():
    prompts = [load.student_prompt(i) for i in range(60)]
    assert len(set(prompts)) == 60
    assert all(18 <= len(p.split()) <= 24 for p in prompts)


def test_widget_states_follow_streamlits_serde():
    area = load.Widget("text_area", TextArea(id="a", label="Input"), "")
    assert load.widget_state(area, "hi").string_value == "hi"
    slider = load.Widget("slider", Slider(id="s", label="Step"), "")
    assert list(load.widget_state(slider, 2).double_array_value.data) == [2.0]


def test_cpu_the_host_stole_is_measured_and_a_robbed_run_gives_no_verdict():
    before, after = [0] * 10, [60, 0, 10, 10, 0, 0, 0, 20, 0, 0]
    assert load.steal_percent(before, after) == 20.0
    assert load.steal_percent(before, before) is None
    ticks = load.cpu_ticks()
    assert len(ticks) >= 8 and all(t >= 0 for t in ticks)
    phase = {"sessions": 30, "generated": 30, "refused": 0, "p95_s": 5.0}
    phase |= {"elsewhere_p50_ms": 40.0, "rss_over_start_b": 1, "steal_percent": 2.0}
    out = {"batched": [phase], "unbatched": [dict(phase)], "ratio_tokens_per_s": {30: 3.5}}
    assert load.generate_targets(out)["met"] and load.generate_targets(out)["trusted"]
    out["unbatched"][0]["steal_percent"] = 40.0
    verdict = load.generate_targets(out)
    assert not verdict["trusted"] and not verdict["met"] and verdict["ratio_30_ge_3"]


def test_each_phase_of_a_run_asks_prompts_the_server_has_not_answered(monkeypatch):
    # A later phase asking an earlier phase's prompts is answered from the server's result
    # cache at once: that once inflated the unbatched half's tokens/s at 30 students.
    asked = []

    class Warm:
        async def close(self):
            pass

    async def seated(url, i, timeout):
        return Warm()

    async def phase(url, n, pid, *, window, timeout, seed, first=0):
        asked.append([load.student_prompt(first + i) for i in range(n)])
        return {"sessions": n}

    monkeypatch.setattr(load, "_seated", seated)
    monkeypatch.setattr(load, "generate_phase", phase)
    monkeypatch.setattr(load, "report_generate", lambda mode, p: "")
    args = load.parse_args(["--flow", "generate", "--sessions", "10,30"])
    asyncio.run(load.generate_run(args, "http://127.0.0.1:1", None, "batched"))
    assert [len(a) for a in asked] == [10, 30]
    assert len({p for a in asked for p in a}) == 40
