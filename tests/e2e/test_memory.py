"""The Memory (MemN2N) page in Chromium: a generated story, then the user's own."""

import pytest

from tests.e2e.support import assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e


def test_generated_story_then_own_story(studio_url, page):
    page.goto(f"{studio_url}/memory")
    wait_for_app(page, timeout_ms=180_000)
    assert_no_exception(page)
    page.get_by_text("A:", exact=False).first.wait_for(timeout=30_000)
    # Answer bars and sentences × hops are drawn; the UMAP map is the other section.
    page.wait_for_function(
        "document.querySelectorAll('.js-plotly-plot').length >= 2", timeout=120_000
    )
    assert page.get_by_text("★").count() >= 1, "supporting facts are marked"
    page.get_by_role("radio", name="Memory map", exact=True).click()
    wait_for_app(page, timeout_ms=180_000)
    page.get_by_text("Memory embeddings m_i across many stories").wait_for(timeout=30_000)
    page.wait_for_function(
        "document.querySelectorAll('.js-plotly-plot').length >= 1", timeout=120_000
    )
    assert_no_exception(page)
    # The shipped evaluation's accuracy for this task and model, beside the paper's.
    page.get_by_text("test questions: accuracy", exact=False).wait_for(timeout=30_000)

    page.get_by_text("Your own story").click()
    wait_for_app(page)
    box = page.get_by_label("Story", exact=True)
    box.fill("Mary went to the kitchen.\nJohn went to the garden.\n<script>alert(1)</script>")
    box.press("Control+Enter")
    wait_for_app(page, timeout_ms=120_000)
    assert_no_exception(page)
    page.get_by_text("Words outside the vocabulary were dropped").wait_for(timeout=30_000)
    # The user's markup is shown as text in the shaded story, never run.
    assert page.locator("script", has_text="alert(1)").count() == 0
