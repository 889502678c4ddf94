"""The Compare page in Chromium with the network cut: Bahdanau and Transformer alignments
of one sentence side by side with their AER, then two models and their difference."""

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.support import assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e


def test_bahdanau_and_transformer_side_by_side_with_aer(studio_url, page):
    page.goto(f"{studio_url}/compare")
    wait_for_app(page, timeout_ms=180_000)
    assert_no_exception(page)
    assert page.locator("h1").first.inner_text() == "Compare models"
    # One panel per model with attention, all on the same source words (one HTML grid).
    grid = page.locator("[data-testid=stHtml] .kit-agrid").first
    grid.locator(".kit-agrid-src").first.wait_for(timeout=120_000)
    titles = grid.locator(".kit-agrid-title").all_text_contents()
    assert any("RNNsearch" in t for t in titles) and any("Transformer" in t for t in titles)
    words = grid.locator(".kit-agrid-src").all_text_contents()  # under every panel
    assert words.count("european") == len(titles) >= 2
    assert grid.locator("td").first.get_attribute("title").count("α = ") == 1
    # The grid takes only as many columns as leave each source word its line (14-px type).
    widths = [word.bounding_box()["width"] for word in grid.locator(".kit-agrid-src").all()]
    assert min(widths) >= 15, widths
    # Each panel states its AER against the grammar's gold links.
    page.get_by_text("· α ·", exact=False).first.wait_for(timeout=30_000)
    page.get_by_text("· L1 H", exact=False).first.wait_for(timeout=30_000)
    assert page.get_by_text("AER", exact=False).count() >= 2

    page.get_by_role("radio", name="Two models", exact=True).click()
    wait_for_app(page, timeout_ms=120_000)
    page.locator(".kit-agrid-title", has_text="α_A − α_B").first.wait_for(timeout=60_000)
    assert_no_exception(page)
    # A beside B, their rows level, each map at its labels (measured in the browser): the
    # grid's gap counted short put B under A, and a stretched table left a blank band.
    a, b = page.locator(".kit-agrid").first.locator(".kit-agrid-panel").all()
    box_a, box_b = a.bounding_box(), b.bounding_box()
    assert box_b["x"] > box_a["x"] + box_a["width"] - 1 and box_b["y"] == box_a["y"]
    row_a, row_b = (p.locator("tr").first.bounding_box() for p in (a, b))
    assert abs(row_a["y"] - row_b["y"]) < 1
    cell = a.locator("td").first.bounding_box()
    assert cell["x"] - box_a["x"] < 160  # just past "européenne", not across a blank band
    # An edit reruns the input, the figures and the view's link together: the link
    # (and the bundle's link.txt) follow the sentence just typed.
    box = page.get_by_label("Input", exact=False).first
    box.fill("The minister did not sign the treaty.")
    box.press("Control+Enter")
    wait_for_app(page)
    expect(page.locator("#kit-link-text")).to_have_value(re.compile("minister"), timeout=60_000)
    assert_no_exception(page)


def test_your_own_sentence_is_flagged_and_each_map_stays_under_its_title(studio_url, page):
    """Every model on a sentence outside the grammar: the page says which words no model
    knows, and each model's map (its own translation, of its own length) starts right under
    its title, measured in the browser: at the panel's foot, a two-word translation stood
    a screen below its title."""
    page.goto(f"{studio_url}/compare?text=hello%20my%20friend")
    wait_for_app(page, timeout_ms=180_000)
    grid = page.locator("[data-testid=stHtml] .kit-agrid").first
    grid.locator(".kit-agrid-src").first.wait_for(timeout=120_000)
    expect(page.get_by_text("Not in the models' vocabulary", exact=False)).to_be_visible()
    for _ in range(20):  # measured once the page has settled (CI caught one mid-layout)
        gaps, heights = [], set()
        for panel in grid.locator(".kit-agrid-panel").all():
            title = panel.locator(".kit-agrid-title").bounding_box()
            table = panel.locator("table").bounding_box()
            gaps.append((table["y"] - (title["y"] + title["height"]), title, table))
            heights.add(round(table["height"]))
        if all(0 <= gap < 10 for gap, *_ in gaps):
            break
        page.wait_for_timeout(250)
    assert all(0 <= gap < 10 for gap, *_ in gaps), gaps
    assert len(heights) > 1, "the models' own translations differ in length"
    assert_no_exception(page)
