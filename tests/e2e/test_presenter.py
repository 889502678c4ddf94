"""Presenter mode on a 1024 × 768 projector, figure downloads and the copy-link box, offline."""

import pytest

from tests.e2e.support import assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e


@pytest.fixture
def projector(page):
    page.set_viewport_size({"width": 1024, "height": 768})
    return page


def test_alignment_in_presenter_mode_shows_the_figure_on_the_first_screen(
    studio_url, projector, tmp_path
):
    pg = projector
    pg.goto(f"{studio_url}/alignment?present=1")
    wait_for_app(pg)
    figure = pg.locator(".js-plotly-plot").first
    figure.locator(".xtick text").first.wait_for(timeout=30_000)
    pg.screenshot(path=str(tmp_path / "presenter.png"))
    assert_no_exception(pg)
    top = figure.bounding_box()["y"]
    assert 0 <= top < 768 * 0.6, f"figure starts at {top:.0f} px"
    assert not pg.locator("[data-testid=stSidebar]").is_visible()
    # The controls are still there, below the figure.
    assert pg.locator("textarea").first.bounding_box()["y"] > top


def test_a_figure_downloads_as_png_and_svg_and_the_link_copies(studio_url, page, tmp_path):
    page.goto(f"{studio_url}/alignment?beam=3")
    wait_for_app(page)
    figure = page.locator(".js-plotly-plot").first
    figure.locator(".xtick text").first.wait_for(timeout=30_000)

    def camera() -> bytes:
        figure.hover()
        with page.expect_download() as download:
            figure.locator(".modebar-btn[data-title^='Download plot']").first.click()
        return open(download.value.path(), "rb").read()

    assert camera().startswith(b"\x89PNG")
    page.get_by_role("radio", name="SVG", exact=True).click()
    wait_for_app(page)
    # The rerun that applies the new format may start after the wait above returns: the
    # figure is redrawn with the SVG camera within a few seconds, and only then downloads SVG.
    for _ in range(20):
        figure = page.locator(".js-plotly-plot").first
        figure.locator(".xtick text").first.wait_for(timeout=30_000)
        image = camera()
        if b"<svg" in image[:200]:
            break
        page.wait_for_timeout(500)
    assert b"<svg" in image[:200]
    page.get_by_role("button", name="Copy link to this view").click()
    link = page.locator("#kit-link-text").input_value()
    assert link.startswith(studio_url) and "beam=3" in link and "section=alignment" in link
    assert_no_exception(page)


@pytest.mark.parametrize(
    "path",
    ["basics", "positional", "alignment", "memory", "transformer", "compare", "variants"],
)
def test_every_page_in_presenter_mode_starts_with_its_figure(studio_url, projector, path):
    projector.goto(f"{studio_url}/{path}?present=1")
    wait_for_app(projector, timeout_ms=180_000)
    # A Plotly figure, or the HTML grid a page draws many small maps as (Compare, Variants).
    figure = projector.locator(
        ".js-plotly-plot, [data-testid=stHtml] .kit-agrid, [data-testid=stHtml] .kit-vgrid"
    ).first
    figure.wait_for(timeout=120_000)
    assert_no_exception(projector)
    top = figure.bounding_box()["y"]
    print(f"{path}: first figure at {top:.0f} px")
    assert 0 <= top < 768, f"{path}: the first figure starts at {top:.0f} px"
