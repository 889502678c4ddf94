"""Presenter mode on a 1024 × 768 projector, figure downloads and the copy-link box, offline."""

import re

import pytest
from kit.fonts import label_px
from views.heatmap import PRESENTER_MAP_TICK_PX

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
    # Every word of Figure 3(a) labelled on both axes (thinned for a 535-px page and an
    # 18-px font, every other one was missing, "agreement" among them), none on another.
    x, y = (figure.locator(f".{a}tick text").all_text_contents() for a in "xy")
    assert "agreement" in x and len(x) == 13, x
    assert {"accord", "signé"} <= set(y) and len(y) == 14, y
    boxes = figure.locator(".ytick text").evaluate_all(
        "ts => ts.map(t => t.getBoundingClientRect()).map(r => [r.top, r.bottom])"
    )
    tops = sorted(boxes)
    assert all(a[1] <= b[0] + 1 for a, b in zip(tops, tops[1:], strict=False)), tops
    # The words in the projector's type, and their margin laid out from the font's own
    # widths (label_px): never narrower than a word as drawn, nor a third wider.
    drawn = figure.locator(".ytick text").evaluate_all(
        "ts => ts.map(t => [t.textContent, parseFloat(getComputedStyle(t).fontSize),"
        " t.getBBox().width])"
    )
    for word, size, width in drawn:
        assert size == PRESENTER_MAP_TICK_PX, (word, size)
        assert width <= label_px([word], size) <= 1.3 * width + 2, (word, width)


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


# ---- every page, section default and lesson step at 1024 × 768, in both languages --------

# What counts as "the figure": a Plotly chart, an HTML map grid, an embedded view (iframe),
# an image; on a lesson step that shows only a table, the table.
FIGURE = (
    ".js-plotly-plot, [data-testid=stHtml] .kit-agrid, [data-testid=stHtml] .kit-vgrid, "
    "[data-testid=stIFrame], [data-testid=stHtml] iframe, [data-testid=stImage] img"
)
# The first figure, the predict box of a pending reveal (the block around a "…-reveal"
# button), the first slider that drives a figure, and any deck management still visible.
_MEASURE = """(figure) => {
  const box = (el) => {
    const r = el && el.getBoundingClientRect();
    return r && r.width > 20 && r.height > 20 ? {top: r.top, bottom: r.bottom} : null;
  };
  const first = (sel) => [...document.querySelectorAll(sel)].map(box).find(Boolean) || null;
  const reveal = [...document.querySelectorAll('[class*="st-key-"]')].find((el) =>
    [...el.classList].some((c) => c.startsWith('st-key-') && c.endsWith('-reveal')));
  const wrapper = reveal && reveal.closest('[data-testid=stVerticalBlock]');
  const manage = [...document.querySelectorAll(
    '[class*=st-key-lesson-deck], [data-testid=stDownloadButton]')].map(box).find(Boolean);
  // The slider that drives the figure: a step slider, or any slider not among the input
  // controls that presenter mode moves below the figures (presenter.controls()).
  const key = (el) => [...(el.closest('[class*="st-key-"]') || {classList: []}).classList]
    .find((c) => c.startsWith('st-key-')) || '';
  const driving = [...document.querySelectorAll('[data-testid=stSlider]')].filter((el) =>
    key(el).includes('step') || !el.closest('[class*=st-key-kit-controls]'));
  // What a slider can drive: the figures, and views drawn as HTML (a shaded story).
  const views = [...document.querySelectorAll(figure + ', [data-testid=stHtml]')]
    .map(box).filter(Boolean);
  const alerts = [...document.querySelectorAll('[data-testid=stAlert]')].map(box);
  return {figure: first(figure), table: first('[data-testid=stDataFrame], [data-testid=stTable]'),
          alerts: alerts.filter(Boolean).length,
          predict: box(wrapper), slider: driving.map(box).find(Boolean) || null,
          lowest: Math.max(0, ...views.map((v) => v.bottom)), manage: manage || null};
}"""
SCREEN = 768
_DRAWN = f"() => {{ const m = ({_MEASURE})({FIGURE!r}); return m.figure || m.predict || m.table; }}"
_CLICK_REVEAL = """() => [...document.querySelectorAll('[class*="st-key-"]')].find((el) =>
  [...el.classList].some((c) => c.startsWith('st-key-') && c.endsWith('-reveal')))
  .querySelector('button').click()"""


def _first_screen(pg, where: str, shots) -> dict:
    """Wait for the view's figure (or its predict box), then check the presenter promise;
    a failing view is saved as a screenshot under ``shots``."""
    wait_for_app(pg, timeout_ms=180_000)
    assert_no_exception(pg)
    try:  # the figure (or predict box) appears once Plotly or the iframe has drawn it
        pg.wait_for_function(_DRAWN, timeout=20_000)
    except Exception:  # noqa: BLE001 - a view that draws nothing is reported below
        pass
    # A page may rerun once it is drawn (a link's parameters written back): measure until
    # two readings a quarter of a second apart agree.
    m = None
    for _ in range(8):
        pg.wait_for_timeout(250)
        wait_for_app(pg)
        again = pg.evaluate(_MEASURE, FIGURE)
        if again == m:
            break
        m = again
    first = m["predict"] or m["figure"] or m["table"]
    problems = []
    if "lesson" in where and m["manage"] is not None:
        problems.append("deck management shown while presenting")
    if first is None and not ("lesson" in where and m["alerts"] >= 2):
        # A lesson step's view may be a note beside its question ("no attention to draw").
        problems.append("no figure, predict box or table")
    elif first is not None and first["top"] >= SCREEN:
        problems.append(f"the figure starts at {first['top']:.0f} px")
    if m["predict"] is None and m["slider"] is not None and m["figure"] is not None:
        # The step slider sits beside or above the figure it drives: not below every view.
        if m["slider"]["top"] >= m["lowest"]:
            problems.append("the slider is below the figures")
    if problems:
        pg.screenshot(path=str(shots / f"{re.sub(r'[^a-z0-9]+', '-', where)}.png"))
        pytest.fail(f"{where} ({pg.url}): {'; '.join(problems)}: {m}")
    return m


PAGES = ["basics", "positional", "alignment", "memory", "transformer", "chat", "retrieval"]
PAGES += ["learning", "compare", "variants"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_presenter_promise_on_every_page_and_lesson_step(studio_url, projector, lang, tmp_path):
    pg = projector
    for path in PAGES:
        pg.goto(f"{studio_url}/{path}?present=1&lang={lang}")
        _first_screen(pg, f"{path} ({lang})", tmp_path)
    # Unknown words: the notes on the input go below the map.
    pg.goto(f"{studio_url}/alignment?present=1&lang={lang}&text=the+zebra+eats+the+cake")
    _first_screen(pg, f"alignment with an unknown word ({lang})", tmp_path)
    from kit import decks

    for name in sorted(decks.shipped()):
        pg.goto(f"{studio_url}/lessons?present=1&lang={lang}&deck={name}&step=1")
        i = 1
        while True:
            m = _first_screen(pg, f"lesson {name} step {i} ({lang})", tmp_path)
            if m["predict"] is not None:  # revealed, the map itself is on the first screen
                pg.evaluate(_CLICK_REVEAL)
                wait_for_app(pg)
                m = _first_screen(pg, f"lesson {name} step {i} revealed ({lang})", tmp_path)
                assert m["figure"] or m["table"], f"lesson {name} step {i}: nothing revealed"
            following = pg.locator(".st-key-lesson-next button")
            if following.is_disabled():
                break
            following.click()
            i += 1


def _top(pg, selector: str, timeout_ms: int = 60_000) -> dict:
    """The first visible ``selector``'s box (top, bottom) once it is drawn."""
    el = pg.locator(selector).first
    el.wait_for(state="visible", timeout=timeout_ms)
    box = el.bounding_box()
    return {"top": box["y"], "bottom": box["y"] + box["height"]}


def test_home_and_a_model_without_attention_show_a_figure_on_the_first_screen(
    studio_url, projector
):
    """The home page opens on a measured figure (BLEU by length, with and without
    attention); a model with no map to draw shows that figure in the map's place."""
    pg = projector
    for path in ("?present=1", "alignment?present=1&model=nmt-enfr-none"):
        pg.goto(f"{studio_url}/{path}")
        wait_for_app(pg, timeout_ms=180_000)
        assert_no_exception(pg)
        figure = _top(pg, ".js-plotly-plot")
        assert figure["top"] < SCREEN, (path, figure)


def test_a_section_run_on_demand_keeps_its_button_above_the_figure(studio_url, projector):
    """Chat › Variants inside runs only when asked: presenting, its form (with the Run
    button) stays above where the figure comes, and the figure follows the button."""
    pg = projector
    pg.goto(f"{studio_url}/chat?present=1&section=variants&vn=16")
    wait_for_app(pg, timeout_ms=180_000)
    # Presenter mode's layout (no sidebar, controls below) lands after the first paint.
    pg.locator("[data-testid=stSidebar]").wait_for(state="hidden", timeout=60_000)
    button = _top(pg, ".st-key-chat-variants-run button")
    assert button["top"] < SCREEN, button
    pg.locator(".st-key-chat-variants-run button").first.click()
    wait_for_app(pg, timeout_ms=240_000)
    assert_no_exception(pg)
    figure = _top(pg, "[data-testid=stMain] .js-plotly-plot")
    assert button["bottom"] <= figure["top"] < SCREEN, (button, figure)


def test_a_warning_about_the_input_stands_above_the_maps_it_qualifies(studio_url, projector):
    """A teacher types a sentence outside the Transformer's grammar while presenting: the
    maps came first and "the output below is not a translation of your sentence" stood with
    the controls, a screen and a half further down. Now the output and the warning are above
    the maps, on the first screen, and the maps still start on it."""
    pg = projector
    pg.goto(
        f"{studio_url}/transformer?present=1&model=transformer-enfr-sinusoidal"
        "&text=zorp%20blick%20qux%20the%20cat"
    )
    wait_for_app(pg)
    figure = pg.locator(".js-plotly-plot").first
    figure.locator(".heatmaplayer").first.wait_for(timeout=60_000)
    warning = pg.locator("[data-testid=stAlert]", has_text="not in this model's vocabulary")
    box, top = warning.bounding_box(), figure.bounding_box()["y"]
    assert box is not None and box["y"] + box["height"] <= top, (box, top)
    assert top < 768 * 0.75, f"the maps start at {top:.0f} px"
    assert pg.locator("[data-testid=stTextInput] input").first.bounding_box()["y"] > top
    assert_no_exception(pg)
