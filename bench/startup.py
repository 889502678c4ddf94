"""Start-up and update latency of the studio, measured in real Chromium.

- first_page_s: from launching `streamlit run app/main.py` to the home page drawn.
- basics_first_s: first visit of the basics page (imports torch).
- basics_update_ms: median time from a text change to the updated heatmaps.
Targets (2-core CPU): first page ≤ 2.5 s (issue 28); update ≤ 500 ms.
Last stdout line: one JSON object, saved to bench/results/startup.json.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from _save import save

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.interaction import FIGURE_SIGNATURE  # noqa: E402 - the root is added above
from tests.e2e.support import (  # noqa: E402 - the repository root is added just above
    CHROMIUM,
    CHROMIUM_ARGS,
    free_port,
    start_server,
    wait_for_app,
)

SENTENCES = [f"the quick brown fox number {i} jumps over the lazy dog again" for i in range(7)]


def main() -> None:
    from playwright.sync_api import sync_playwright

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page()
        t0 = time.perf_counter()
        proc = start_server(port, Path("/tmp/bench-startup-streamlit.log"))
        try:
            while True:
                try:
                    page.goto(url, timeout=2_000)
                    break
                except Exception:  # server not listening yet
                    if time.perf_counter() - t0 > 60:
                        raise
                    time.sleep(0.05)
            wait_for_app(page)
            first_page = time.perf_counter() - t0

            t1 = time.perf_counter()
            page.goto(f"{url}/basics")
            wait_for_app(page)
            basics_first = time.perf_counter() - t1

            box = page.get_by_label("Sentence (up to 256 tokens)")
            updates = []
            for sentence in SENTENCES:
                box.fill(sentence)
                before = page.evaluate(FIGURE_SIGNATURE)  # ticks are thinned: compare figures
                t2 = time.perf_counter()
                box.press("Control+Enter")
                page.wait_for_function(
                    f"before => ({FIGURE_SIGNATURE})() !== before", arg=before, timeout=30_000
                )
                wait_for_app(page)
                updates.append((time.perf_counter() - t2) * 1000)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
            browser.close()
    result = {
        "bench": "startup",
        "first_page_s": round(first_page, 3),
        "basics_first_s": round(basics_first, 3),
        "basics_update_ms_median": round(statistics.median(updates[1:]), 1),
        "basics_update_ms_all": [round(u, 1) for u in updates],
        "targets": {"first_page_s": 2.5, "basics_update_ms": 500.0},
    }
    print(json.dumps(save(result)))


if __name__ == "__main__":
    main()
