"""The Alignment page in Chromium with the network cut: heatmap, play button, bertviz, new text."""

import pytest

from tests.e2e.support import assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e


def show(page, section: str):
    """Pick one of the page's sections (a segmented control) and wait for it."""
    page.get_by_role("radio", name=section, exact=True).click()
    wait_for_app(page)


def test_alignment_page_plays_and_translates(studio_url, page, tmp_path):
    page.goto(f"{studio_url}/alignment")
    wait_for_app(page)
    page.screenshot(path=str(tmp_path / "alignment.png"), full_page=True)
    assert_no_exception(page)
    assert page.locator("h1").first.inner_text() == "Alignment (Bahdanau)"
    # The Figure 3(a) heatmap: source words on x, French words on y.
    first = page.locator(".js-plotly-plot").first
    first.locator(".xtick text").first.wait_for(timeout=30_000)  # Plotly draws after the run
    assert "european" in " ".join(first.locator(".xtick text").all_text_contents())
    # Plotly's own play button walks the decoding steps (one section on screen at a time).
    show(page, "Step by step")
    title = page.locator(".js-plotly-plot .gtitle", has_text="step 1:")
    title.first.wait_for(timeout=30_000)
    page.get_by_text("▶ Play").first.click()
    page.locator(".js-plotly-plot .gtitle", has_text="step 3:").first.wait_for(timeout=30_000)
    # bertviz renders offline inside its iframe.
    show(page, "Head view")
    frame = page.frame_locator("iframe").first
    frame.locator("svg").first.wait_for(timeout=60_000)
    show(page, "Step by step")
    box = page.get_by_label("Input", exact=False).first
    box.fill("The minister did not sign the treaty.")
    box.press("Control+Enter")
    page.get_by_text("At step", exact=False).first.wait_for(timeout=60_000)
    wait_for_app(page)
    assert_no_exception(page)
