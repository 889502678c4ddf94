"""Refresh docs/screenshot.png: the studio in Chromium, network cut (used by the README)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.support import (  # noqa: E402 - the repository root is added just above
    CHROMIUM,
    CHROMIUM_ARGS,
    ROOT,
    free_port,
    start_server,
    wait_for_app,
    wait_for_health,
)


def main(page_path: str = "alignment", plot: str = "0") -> None:
    """Screenshot ``page_path`` with its ``plot``-th Plotly figure scrolled into view."""
    from playwright.sync_api import sync_playwright

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_server(port, Path("/tmp/screenshot-streamlit.log"))
    try:
        wait_for_health(url, proc)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.route(
                "**/*", lambda r: r.continue_() if "127.0.0.1" in r.request.url else r.abort()
            )
            page.goto(f"{url}/{page_path}")
            wait_for_app(page)
            figure = page.locator(".js-plotly-plot").nth(int(plot))
            figure.wait_for(timeout=60_000)
            figure.scroll_into_view_if_needed()
            page.mouse.wheel(0, -120)  # keep the figure's title in the frame
            page.wait_for_timeout(1500)
            page.screenshot(path=str(ROOT / "docs" / "screenshot.png"))
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main(*sys.argv[1:])
