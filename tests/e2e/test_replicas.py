"""Two replicas behind nginx (scripts/serve.sh): a session in Chromium, sticky to one replica."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.support import ROOT, assert_no_exception, free_port, wait_for_app, wait_for_health

pytestmark = pytest.mark.e2e
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


@pytest.fixture(scope="module")
def front(tmp_path_factory):
    """serve.sh --replicas 2 on a free port; yields (url, run dir, serve.sh process)."""
    if not Path(NGINX).exists():
        pytest.skip("nginx is not installed: bash scripts/setup.sh --browser (or --serve)")
    run_dir = tmp_path_factory.mktemp("serve")
    port = free_port()
    log = open(run_dir / "serve.out", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        ["bash", "scripts/serve.sh", "--replicas", "2", "--port", str(port)]
        + ["--address", "127.0.0.1", "--run-dir", str(run_dir)],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(url, proc, timeout=180)
        yield url, run_dir, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def access_log(run_dir: Path) -> list[tuple[str, str, str]]:
    """(request, upstream, sticky key) for every request nginx logged."""
    pattern = re.compile(r'"(?P<req>[^"]*)" \d+ upstream=(?P<up>\S+) replica_key=(?P<key>\S+)')
    lines = (run_dir / "nginx-access.log").read_text().splitlines()
    return [(m["req"], m["up"], m["key"]) for m in map(pattern.search, lines) if m]


def test_session_through_nginx_stays_on_one_replica(front, page):
    url, run_dir, _ = front
    page.goto(url)
    wait_for_app(page)
    assert page.locator("h1").first.inner_text() == "Attention Studio"
    page.goto(f"{url}/basics")
    wait_for_app(page)
    box = page.get_by_label("Sentence (up to 256 tokens)")
    box.fill("attention is all you need")
    box.press("Control+Enter")
    page.get_by_text("5 tokens").first.wait_for(timeout=60_000)
    wait_for_app(page)
    assert_no_exception(page)

    cookie = next(c["value"] for c in page.context.cookies() if c["name"] == "studio_replica")
    page.goto("about:blank")  # nginx logs a websocket when it closes
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        mine = [(req, up) for req, up, key in access_log(run_dir) if key == cookie]
        if sum("/_stcore/stream" in req for req, _ in mine) >= 2:  # home, then basics
            break
        time.sleep(0.2)
    assert sum("/_stcore/stream" in req for req, _ in mine) >= 2, f"no websocket via nginx: {mine}"
    assert len({up for _, up in mine}) == 1, f"one browser reached several replicas: {mine}"


def test_new_visitors_spread_over_both_replicas(front):
    url, run_dir, _ = front
    for _ in range(20):  # no cookie: each is a new visitor with a fresh random key
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as r:
            assert r.status == 200
    health = [up for req, up, _ in access_log(run_dir) if "/_stcore/health" in req]
    assert len(set(health[-20:])) == 2, f"20 new visitors all on one replica: {health[-20:]}"


def test_sigterm_stops_nginx_and_every_replica(front):
    _, run_dir, proc = front
    pids = [int(p.read_text()) for p in run_dir.glob("replica-*.pid")]
    pids.append(int((run_dir / "nginx.pid").read_text()))
    assert len(pids) == 3
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [p for p in pids if _alive(p)]
        time.sleep(0.2)
    assert not alive, f"still running after serve.sh stopped: {alive}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is already dead; it only waits for its parent to read its status.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
