"""Every page of the studio, in Chromium, with the network cut."""

import pytest
from catalog import PAGES

from tests.e2e.support import assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e


def test_home_then_every_page(studio_url, page):
    page.goto(studio_url)
    wait_for_app(page)
    assert page.locator("h1").first.inner_text() == "Attention Studio"
    nav = page.locator("[data-testid=stSidebarNav] a")
    hrefs = [nav.nth(i).get_attribute("href") for i in range(nav.count())]
    labels = nav.all_inner_texts()
    # Each link reads "<icon>\n<title>"; the titles must be ours, not file names (a folder
    # named pages/ beside main.py silently switches Streamlit to its old file-based menu).
    shown = [t.strip().splitlines()[-1].strip() for t in labels]
    assert shown == [p.title for p in PAGES]
    for href in hrefs:
        page.goto(href if href.startswith("http") else studio_url + "/" + href.lstrip("/"))
        wait_for_app(page)
        assert_no_exception(page)


def test_home_typed_as_a_path_opens_the_home_page_with_its_link(studio_url, page):
    """A teacher who types /home got Streamlit's "Page not found" dialog over the page."""
    page.goto(f"{studio_url}/home?lang=zh")
    page.wait_for_url(f"{studio_url}/?lang=zh", timeout=60_000)
    wait_for_app(page)
    assert page.get_by_text("Page not found").count() == 0
    current = page.locator("[data-testid=stSidebarNav] a[aria-current=page]")
    assert current.inner_text().strip() == "首页"  # the home page, in the link's language
    assert_no_exception(page)


def test_basics_updates_on_new_text(studio_url, page):
    page.goto(f"{studio_url}/basics")
    wait_for_app(page)
    box = page.get_by_label("Sentence (up to 256 tokens)")
    box.fill("attention is all you need")
    box.press("Control+Enter")
    page.get_by_text("5 tokens").first.wait_for(timeout=30_000)
    wait_for_app(page)
    assert_no_exception(page)
    # The softmax step is the default: one heatmap whose rows are the five new tokens; its
    # row labels are thinned to what fits the plot (the hover names every row), so each
    # label drawn is one of them.
    page.wait_for_function(
        """() => {
          const plot = document.querySelector('[data-testid=stMain] .js-plotly-plot');
          const rows = plot?.data?.[0]?.y;
          if (!rows || [...rows].sort().join(' ') !== 'all attention is need you') return false;
          const drawn = [...plot.querySelectorAll('.ytick text')].map(t => t.textContent);
          return drawn.length > 0 && drawn.every(t => rows.includes(t));
        }""",
        timeout=30_000,
    )


def test_the_network_guard_can_fail(page):
    """The guard must see an outside request, or every green run above proves nothing."""
    page.set_content('<img src="https://cdn.example.com/x.png">')
    page.wait_for_timeout(300)
    assert page.outside_requests == ["https://cdn.example.com/x.png"]
    page.outside_requests.clear()
    page.console_errors.clear()  # the aborted image logs a console error, by design here
