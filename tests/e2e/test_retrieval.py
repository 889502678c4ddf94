"""The Retrieval page in Chromium, network cut: ask a question over a bAbI story, see the
retrieved passages and the passages × generated-tokens map, then pick a layer and see the
map redrawn without a new generation."""

import re
import time

import pytest

from engine.models import chat as chat_lib
from tests.e2e.support import assert_no_exception, wait_for_app

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not chat_lib.available(), reason="run bash scripts/setup.sh first"),
]

MAIN = "[data-testid=stMain]"
PASSAGES = f"{MAIN} .retrieved-passages > div"
TITLE = "Attention mass on each passage per generated token"


def map_title(page) -> str:
    """The first figure's title read as one line, without markup: it wraps with <br> to the
    page's width, and the drawn lines' text runs together in the DOM."""
    text = page.evaluate(f"document.querySelector('{MAIN} .js-plotly-plot').layout.title.text")
    return re.sub(r"<[^>]*>", "", (text or "").replace("<br>", " "))


def test_ask_then_see_passages_and_the_map(studio_url, page):
    page.goto(f"{studio_url}/retrieval?store=babi&task=1&story=2&tokens=4")
    wait_for_app(page, timeout_ms=240_000)
    assert_no_exception(page)
    page.get_by_text("A (chat model):").first.wait_for(timeout=120_000)

    box = page.get_by_label("Question", exact=True)
    box.fill("Where is John now? <b>bold</b>")
    page.get_by_role("button", name="Ask").click()
    wait_for_app(page, timeout_ms=240_000)
    assert_no_exception(page)
    page.get_by_text("Where is John now?").first.wait_for(timeout=120_000)

    # The retrieved passages: k = 3 of the story's six sentences, numbered as in the prompt.
    assert page.locator(PASSAGES).count() == 3
    assert "[1]" in page.locator(PASSAGES).first.inner_text()
    # The passages × generated-tokens map of attention mass.
    page.wait_for_function(
        f"document.querySelectorAll('{MAIN} .js-plotly-plot').length >= 1", timeout=120_000
    )
    assert TITLE in map_title(page)
    rows = page.evaluate(f"document.querySelector('{MAIN} .js-plotly-plot').data[0].y.length")
    assert rows == 3, "one row per passage in the prompt"
    # The question is shown as text, never as markup.
    assert page.locator(f"{MAIN} b", has_text="bold").count() == 0

    # A layer is a redraw of the cached generation: no new answer is queued.
    page.get_by_label("Layer", exact=True).click()
    page.keyboard.type("L7")
    page.get_by_role("option", name="L7", exact=True).wait_for(timeout=30_000)
    start = time.monotonic()
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"""() => [...document.querySelectorAll('{MAIN} .js-plotly-plot .gtitle')]
            .some(e => e.textContent.includes('L7,'))""",
        timeout=30_000,
    )
    print(f"layer → map repainted in {time.monotonic() - start:.2f} s")
    wait_for_app(page)
    assert_no_exception(page)
    assert "layer=7" in page.url
    assert page.locator(f"{MAIN} [data-testid=stProgress]").count() == 0

    # Another section reads the same generation: the page reruns, nothing is generated.
    start = time.monotonic()
    page.get_by_role("radio", name="Addressing step", exact=True).click()
    page.wait_for_function(
        f"""() => [...document.querySelectorAll('{MAIN} .js-plotly-plot .gtitle')]
            .some(e => e.textContent.startsWith('Addressing'))""",
        timeout=30_000,
    )
    print(f"section → addressing drawn in {time.monotonic() - start:.2f} s")
    wait_for_app(page)
    assert_no_exception(page)
    assert "section=addressing" in page.url
