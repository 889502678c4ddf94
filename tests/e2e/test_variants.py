"""The Variants lab in Chromium with the network cut: compare, stop a sweep, long map."""

import pytest

from tests.e2e.support import assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e


def _section(page, name):
    page.locator("[data-testid=stMain]").get_by_role("radio", name=name).or_(
        page.get_by_text(name, exact=True)
    ).first.click()
    page.wait_for_timeout(300)
    wait_for_app(page)
    assert_no_exception(page)


def test_variants_compare_sweep_stop_and_long_map(studio_url, page):
    page.goto(f"{studio_url}/variants")
    wait_for_app(page)
    assert_no_exception(page)
    assert "Variants lab" in page.locator("h1").first.inner_text()
    page.locator("[data-testid=stDataFrame]").first.wait_for(timeout=60_000)
    page.locator(".kit-vgrid-panel").first.wait_for(timeout=60_000)
    # full + six variants side by side: small multiples, one panel each, in one HTML grid
    assert page.locator(".kit-vgrid-panel").count() >= 7
    assert page.get_by_text("implied").count() >= 1  # Performer / Linformer / Mamba flags

    _section(page, "Quality")
    page.locator(".js-plotly-plot .scatterlayer .point").first.wait_for(timeout=60_000)
    assert page.get_by_text("not ours").count() >= 1  # LRA's numbers, labelled published
    assert page.locator(".kit-vgrid-panel").count() >= 11  # every trained variant's map

    _section(page, "MiniLM swap")
    page.get_by_text("Exact here").wait_for(timeout=120_000)
    page.locator(".js-plotly-plot .bars .point").first.wait_for(timeout=60_000)
    assert page.locator(".js-plotly-plot .bars .point").count() == 11  # a cosine per variant
    assert_no_exception(page)

    _section(page, "Cost profile")
    page.get_by_role("button", name="Run sweep").click()
    page.locator("[data-testid=stProgress]").first.wait_for(timeout=30_000)  # progress shows
    page.get_by_role("button", name="Stop sweep").click()
    page.get_by_text("Sweep stopped").wait_for(timeout=30_000)
    wait_for_app(page)
    assert_no_exception(page)

    _section(page, "Long sequences")
    page.get_by_text("% of the").first.wait_for(timeout=60_000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
    assert page.get_by_text("pooled ×").count() >= 1


def test_a_copied_link_reopens_the_knobs_behind_the_numbers(studio_url, page):
    """Set Longformer's window in the browser; the address follows, and that address in a
    fresh tab opens with the same window and the same errors table."""
    page.goto(f"{studio_url}/variants?section=compare&source=synthetic&variants=longformer")
    wait_for_app(page)
    page.get_by_text("Hyper-parameters").first.click()
    label = "Longformer (window + global): window w (keys each side) (1 … 1024)"
    box = page.get_by_role("spinbutton", name=label)
    box.fill("4")
    box.press("Enter")
    page.wait_for_url("**hp=longformer.window%3A4**", timeout=60_000)
    wait_for_app(page)
    table = page.locator("[data-testid=stDataFrame]").first.inner_text()
    copied = page.context.new_page()  # the same network guard
    copied.goto(page.url)
    wait_for_app(copied)
    assert_no_exception(copied)
    again = copied.get_by_role("spinbutton", name=label)
    assert again.input_value() == "4"  # the link opened its knob, and its section expanded
    assert copied.locator("[data-testid=stDataFrame]").first.inner_text() == table
