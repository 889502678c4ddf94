"""The Lessons page in Chromium with the network cut: open a deck, guess, reveal, step on."""

import re

import pytest

from tests.e2e.support import assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e

PLOTS = "document.querySelectorAll('[data-testid=stMain] .js-plotly-plot').length"


def test_open_a_deck_guess_reveal_and_step_on(studio_url, page):
    page.goto(f"{studio_url}/lessons?deck=bahdanau&step=1")
    wait_for_app(page, timeout_ms=180_000)
    assert_no_exception(page)
    page.get_by_role("heading", name="Figure 3(a): one English word per French word").wait_for()
    page.get_by_text("Question for the class:", exact=False).wait_for()
    assert page.evaluate(PLOTS) == 0, "the alignment is hidden until the reveal"

    # The class guesses the source word for « signé »: one word before the model's choice.
    page.get_by_role("radio", name="was (8)", exact=True).click()  # a pill
    wait_for_app(page)
    assert page.evaluate(PLOTS) == 0, "a guess alone reveals nothing"
    page.get_by_role("button", name="Reveal", exact=True).click()
    wait_for_app(page, timeout_ms=120_000)
    page.get_by_text(re.compile(r"attends most to signed \(9\).*1 word\(s\) away")).wait_for()
    page.wait_for_function(f"{PLOTS} >= 1", timeout=60_000)
    assert_no_exception(page)

    page.get_by_role("button", name="Next →").click()
    wait_for_app(page, timeout_ms=120_000)
    page.get_by_role("heading", name="Reordering: the adjective after the noun").wait_for()
    assert "step=2" in page.url
    # The heading can arrive while the rerun is still drawing and the previous step's figure
    # is still on screen (stale, until the run ends): wait for the run to end, then no plot.
    wait_for_app(page, timeout_ms=120_000)
    page.wait_for_function(f"{PLOTS} == 0", timeout=60_000)  # the next answer is hidden again
    assert_no_exception(page)


def test_a_deck_in_chinese(studio_url, page):
    page.goto(f"{studio_url}/lessons?deck=memory&step=2&lang=zh")
    wait_for_app(page, timeout_ms=180_000)
    assert_no_exception(page)
    page.get_by_role("heading", name="最后一跳追踪这个人").wait_for()
    page.get_by_role("button", name="揭晓", exact=True).click()
    wait_for_app(page, timeout_ms=120_000)
    page.get_by_text("没有做出猜测", exact=False).wait_for()
    page.wait_for_function(f"{PLOTS} >= 1", timeout=60_000)
