"""The Watch-attention-learn page in Chromium, network cut: move the training-step slider and
see the probe's head maps redrawn at the new step, then the curves with the step marked."""

import time

import pytest

from engine.analysis import induction as analysis
from engine.errors import InputError
from tests.e2e.support import assert_no_exception, count_notes, wait_for_app

pytestmark = pytest.mark.e2e

# A slider move reruns one fragment from a timeline in memory. How fast is the
# benchmark's question (bench/interaction.py), not a test's: a timed bound here failed CI
# on a shared host (2.95 s against 2.0). The time is only printed (pytest -s).


def saved_steps() -> list[int]:
    try:
        return [int(s) for s in analysis.load_timeline(2)["steps"]]
    except InputError:
        pytest.skip("no shipped induction timeline: python -m engine.train induction")


def wait_for_title(page, text: str) -> None:
    page.wait_for_function(
        """(text) => [...document.querySelectorAll('[data-testid=stMain] .gtitle')]
            .some(e => e.textContent === text)""",
        arg=text,
        timeout=60_000,
    )


def test_move_the_step_slider(studio_url, page):
    steps = saved_steps()
    page.goto(f"{studio_url}/learning")
    wait_for_app(page, timeout_ms=180_000)
    assert_no_exception(page)
    page.wait_for_function(
        "document.querySelectorAll('[data-testid=stMain] .js-plotly-plot').length >= 2",
        timeout=120_000,
    )
    wait_for_title(page, f"2-layer model · step {steps[-1]}")

    slider = page.get_by_role("slider", name="Training step")
    slider.focus()
    started = time.perf_counter()
    slider.press("ArrowLeft")
    wait_for_title(page, f"2-layer model · step {steps[-2]}")
    redraw = time.perf_counter() - started
    print(f"slider move → maps redrawn in {redraw * 1000:.0f} ms")
    wait_for_title(page, f"1-layer model · step {steps[-2]}")  # the control moves with it
    wait_for_app(page)
    assert_no_exception(page)
    assert f"step={steps[-2]}" in page.url

    page.get_by_role("radio", name="Curves", exact=True).click()
    wait_for_app(page)
    page.get_by_text("Shaded: the phase change", exact=False).wait_for(timeout=60_000)
    assert page.locator("[data-testid=stMain] .js-plotly-plot").count() == 1
    assert_no_exception(page)


def test_cancel_stops_a_live_run(studio_url, page):
    """Train it now, then Cancel: the run stops there and says so. The section is a
    fragment, and a button in a fragment asks for a rerun that Streamlit queues behind the
    running script: before kit.queue read the press while it polled, Cancel took effect
    only once all 800 steps had run (and the page then claimed the command line's last map)."""
    saved_steps()
    page.goto(f"{studio_url}/learning?section=live&seed=17")
    wait_for_app(page, timeout_ms=180_000)
    page.get_by_role("button", name="Train it now", exact=True).last.click()
    cancel = page.get_by_role("button", name="Cancel", exact=True)
    cancel.wait_for(timeout=60_000)
    page.wait_for_function(  # a few steps in: a film of one snapshot draws no caption
        """() => [...document.querySelectorAll('[data-testid=stMain] .gtitle')]
            .some(e => /Training live · step [1-9]/.test(e.textContent))""",
        timeout=120_000,
    )
    count_notes(page, "Cancelled at step")
    cancel.click()
    page.get_by_text("Cancelled at step", exact=False).wait_for(timeout=60_000)
    page.wait_for_timeout(3_000)  # the rerun Cancel asks for draws the note in the same place
    assert page.evaluate("window.mostNotes") == 1  # never beside the faded one of the run before
    said = page.inner_text("[data-testid=stMain]")
    assert "before it stopped" in said and "its last map equals" not in said
    step = int(said.split("Cancelled at step ")[1].split(";")[0])
    assert step < 800, step  # stopped, not trained to the end
    assert_no_exception(page)
