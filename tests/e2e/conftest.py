"""The real server in real Chromium, with every request outside localhost cut.

Fixtures (helpers to wait for a page live in support.py):
- ``studio_url``: ``streamlit run app/main.py`` on a free port (one per test session).
- ``page``: a Playwright page whose non-localhost requests are aborted and recorded in
  ``page.outside_requests``; console errors (bar Streamlit's own sub-page probes of
  ``/_stcore/``) are recorded in ``page.console_errors``. Both must be empty at teardown.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.support import (
    CHROMIUM,
    CHROMIUM_ARGS,
    free_port,
    is_local,
    start_server,
    wait_for_health,
)

SERVER_LOGS: list[Path] = []  # every server this session started, for the traceback check


@pytest.fixture(autouse=True)
def no_server_tracebacks():
    """A test fails if the server logged a traceback while it ran (warning level included):
    the studio explains problems on the page and must not be failing quietly in the log."""
    sizes = {log: log.stat().st_size for log in SERVER_LOGS if log.exists()}
    yield
    for log in SERVER_LOGS:
        new = log.read_text(errors="replace")[sizes.get(log, 0) :] if log.exists() else ""
        assert "Traceback" not in new, f"server log {log}:\n{new[-3000:]}"


@pytest.fixture(scope="session")
def studio_url(tmp_path_factory):
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium")
    port = free_port()
    log_path = tmp_path_factory.mktemp("server") / "streamlit.log"
    proc = start_server(port, log_path)
    SERVER_LOGS.append(log_path)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        tail = log_path.read_text()[-3000:]
        if "Traceback" in tail:
            print("server log tail:\n" + tail)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.outside_requests = []
    pg.console_errors = []

    def guard(route):
        if is_local(route.request.url):
            route.continue_()
        else:
            pg.outside_requests.append(route.request.url)
            route.abort()

    context.route("**/*", guard)

    def on_console(msg):
        if msg.type == "error" and "/_stcore/" not in (msg.location or {}).get("url", ""):
            pg.console_errors.append(f"{msg.text} @ {msg.location}")

    pg.on("console", on_console)
    pg.on("pageerror", lambda exc: pg.console_errors.append(f"pageerror: {exc}"))
    yield pg
    context.close()
    assert not pg.outside_requests, f"requests outside localhost: {pg.outside_requests}"
    assert not pg.console_errors, f"browser console errors: {pg.console_errors}"
