"""Helpers for starting the studio and driving it in Chromium (tests and bench/startup.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "[::1]"}


def is_local(url: str) -> bool:
    """True for the studio itself and in-page data; every other request is cut."""
    parsed = urlparse(url)
    if parsed.scheme in ("data", "blob", "about", "file"):
        return True
    return parsed.hostname in LOCAL_HOSTS


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_health(url: str, proc: subprocess.Popen | None = None, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"{url} not healthy after {timeout} s")


def start_server(
    port: int, log_path: Path, script: str = "app/main.py", env: dict | None = None
) -> subprocess.Popen:
    env = dict(env or os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    log = open(log_path, "w")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            script,
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def wait_for_app(pg, timeout_ms: int = 90_000) -> None:
    """Wait until the script has run: app idle, no running indicator, some content drawn."""
    pg.wait_for_selector("[data-testid=stApp]", timeout=timeout_ms)
    pg.wait_for_function(
        """() => {
            const app = document.querySelector('[data-testid=stApp]');
            return app && app.getAttribute('data-test-script-state') === 'notRunning'
                && !document.querySelector('[data-testid=stStatusWidget]')
                && document.querySelector('[data-testid=stMain] h1');
        }""",
        timeout=timeout_ms,
    )


def assert_no_exception(pg) -> None:
    shown = pg.locator("[data-testid=stException]")
    assert shown.count() == 0, shown.first.inner_text()


def count_notes(pg, text: str) -> None:
    """From now on, keep in ``window.mostNotes`` the most paragraphs of the main area that
    contain ``text`` seen at once, at every change of the page (a note drawn twice for a
    moment, the faded old one beside the new, is caught)."""
    pg.evaluate(
        """text => {
        const count = () => [...document.querySelectorAll('[data-testid=stMain] p')]
            .filter(e => e.textContent.includes(text)).length;
        window.mostNotes = 0;
        new MutationObserver(() => { window.mostNotes = Math.max(window.mostNotes, count()); })
            .observe(document.body, {childList: true, subtree: true, characterData: true});
    }""",
        text,
    )
