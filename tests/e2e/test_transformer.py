"""The Transformer page in Chromium with the network cut: bertviz must draw from vendored JS."""

import time

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from tests.e2e.support import assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e


def open_tab(page, name: str) -> None:
    """Pick a section: one is on screen at a time, chosen in a segmented control."""
    sections = page.locator("[data-testid=stMain] [data-testid=stButtonGroup]")
    sections.get_by_role("radio", name=name, exact=True).click()
    page.wait_for_timeout(300)
    wait_for_app(page)


def bertviz_texts(page, timeout_s: float = 60.0) -> list[str]:
    """The labels bertviz drew, once it has drawn some.

    A view change replaces the iframe: the old one's text can satisfy a plain wait and then
    vanish, and the new one draws a moment after the script run ends. So poll until the
    frame on screen now holds text (or the time is up).
    """
    deadline = time.monotonic() + timeout_s
    texts: list[str] = []
    while time.monotonic() < deadline:
        try:
            texts = (
                page.frame_locator("iframe")
                .first.locator("svg text")
                .evaluate_all("els => els.map(e => e.textContent)")
            )
        except PlaywrightError:  # the frame was swapped while being read
            texts = []
        if texts:
            return texts
        page.wait_for_timeout(250)
    return texts


def test_minilm_bertviz_head_and_model_views_draw_offline(studio_url, page):
    page.goto(f"{studio_url}/transformer")
    wait_for_app(page)
    page.get_by_text("Pretrained (HuggingFace, local files)").click()
    wait_for_app(page)
    assert_no_exception(page)
    open_tab(page, "bertviz")
    texts = bertviz_texts(page)
    assert "[CLS]" in texts and "animal" in texts  # the first example sentence
    page.get_by_text("model view").click()
    wait_for_app(page)
    assert bertviz_texts(page)
    assert_no_exception(page)


def test_hostile_text_stays_text(studio_url, page):
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{studio_url}/transformer")
    wait_for_app(page)
    page.get_by_text("Pretrained (HuggingFace, local files)").click()
    # The click starts a rerun; wait for the pretrained section itself, so the own-model
    # input box still on screen from the last run is not the one typed into.
    page.get_by_text("eager attention").first.wait_for(timeout=60_000)
    wait_for_app(page)
    box = page.get_by_label("Input")
    expect(box).to_have_count(1)
    box.fill("</script><img src=x onerror=alert(1)> zebra")
    box.press("Enter")
    wait_for_app(page)
    open_tab(page, "bertviz")
    assert "zebra" in bertviz_texts(page)
    assert_no_exception(page)
    assert dialogs == []


def test_our_model_views_render(studio_url, page):
    page.goto(f"{studio_url}/transformer")
    wait_for_app(page)
    assert_no_exception(page)
    if page.get_by_text("No trained Transformer is shipped yet").count():
        pytest.skip("no shipped Transformer checkpoint")
    page.locator(".js-plotly-plot").nth(1).wait_for(timeout=60_000)  # grid and enlarged head
    open_tab(page, "bertviz")
    assert bertviz_texts(page)
    open_tab(page, "Query–key map (AttentionViz)")
    page.get_by_text("Pearson r").first.wait_for(timeout=60_000)
    assert_no_exception(page)


# A slider move reruns one fragment from a timeline already in memory. How fast is a
# benchmark's question (bench/interaction.py, transformer · training), not a test's: a timed
# bound failed CI at 2.95 s on a shared host. The time is only printed here (pytest -s).
MAP_TITLE = "encoder self-attention · step {step}"


def saved_steps() -> list[int]:
    from engine.errors import InputError
    from engine.models import registry

    try:
        return registry.get("transformer-dates-sinusoidal").timeline().steps
    except (InputError, KeyError):
        pytest.skip("no shipped Transformer timeline: python -m engine.train transformer")


# The plot whose title, read as one line, starts with ``text`` and a space (so step 1 is not
# step 10). Titles wrap with <br>, and the drawn lines run together in the DOM: the figure's
# own layout is read instead, its markup (Streamlit's <b>, the flags' <span>) dropped.
FIND_MAP = """[...document.querySelectorAll('[data-testid=stMain] .js-plotly-plot')]
    .find(e => (e.layout?.title?.text ?? '').replaceAll('<br>', ' ').replace(/<[^>]*>/g, '')
        .startsWith(text + ' '))"""


def wait_for_map(page, step: int) -> None:
    page.wait_for_function(
        f"(text) => Boolean({FIND_MAP})", arg=MAP_TITLE.format(step=step), timeout=60_000
    )


def map_cells(page, step: int) -> str:
    """The drawn weights of the probe's layers × heads map at ``step``, as JSON text."""
    return page.evaluate(
        f"(text) => JSON.stringify(({FIND_MAP}).data[0].z)", MAP_TITLE.format(step=step)
    )


def test_training_step_slider_redraws_the_probe_map(studio_url, page):
    steps = saved_steps()
    page.goto(f"{studio_url}/transformer?section=training")
    wait_for_app(page, timeout_ms=180_000)
    assert_no_exception(page)
    wait_for_map(page, steps[-1])
    last = map_cells(page, steps[-1])

    slider = page.get_by_role("slider", name="Training step")
    slider.focus()
    started = time.perf_counter()
    slider.press("ArrowLeft")
    wait_for_map(page, steps[-2])
    redraw = time.perf_counter() - started
    print(f"slider move → probe map redrawn in {redraw * 1000:.0f} ms")
    wait_for_app(page)
    assert map_cells(page, steps[-2]) != last  # the map itself changed, not only its title
    page.get_by_text(f"At step {steps[-2]} the model writes", exact=False).wait_for()
    assert f"step={steps[-2]}" in page.url
    assert page.locator("[data-testid=stMain] .js-plotly-plot").count() == 2  # map, curves
    assert_no_exception(page)
    assert page.outside_requests == []
