"""The Compare page in Chromium with the network cut: Bahdanau and Transformer alignments
of one sentence side by side with their AER, then two models and their difference."""

import pytest

from tests.e2e.support import assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e


def test_bahdanau_and_transformer_side_by_side_with_aer(studio_url, page):
    page.goto(f"{studio_url}/compare")
    wait_for_app(page, timeout_ms=180_000)
    assert_no_exception(page)
    assert page.locator("h1").first.inner_text() == "Compare models"
    # One map per model with attention, all on the same source words.
    plots = page.locator(".js-plotly-plot")
    page.wait_for_function(
        "document.querySelectorAll('.js-plotly-plot').length >= 2", timeout=120_000
    )
    titles = " ".join(plots.locator(".gtitle").all_text_contents())
    assert "RNNsearch" in titles and "Transformer" in titles
    for k in range(plots.count()):
        assert "european" in " ".join(plots.nth(k).locator(".xtick text").all_text_contents())
    # Each panel states its AER against the grammar's gold links.
    page.get_by_text("· α ·", exact=False).first.wait_for(timeout=30_000)
    page.get_by_text("· L1 H", exact=False).first.wait_for(timeout=30_000)
    assert page.get_by_text("AER", exact=False).count() >= 2

    page.get_by_role("radio", name="Two models", exact=True).click()
    wait_for_app(page, timeout_ms=120_000)
    page.locator(".js-plotly-plot .gtitle", has_text="α_A − α_B").first.wait_for(timeout=60_000)
    assert_no_exception(page)
