"""The Chat model page in Chromium, network cut: generate from a new prompt, then move the
step slider and see the step's figures redrawn."""

from urllib.parse import quote

import pytest

from engine.models import chat as chat_lib
from tests.e2e.support import assert_no_exception, count_notes, wait_for_app

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not chat_lib.available(), reason="run bash scripts/setup.sh first"),
]

STEP = "[data-testid=stMain] [data-testid=stMarkdownContainer] strong"


def step_label(page) -> str:
    """The step's bold heading, "Step s of n.", as the page shows it."""
    return page.locator(STEP, has_text="Step ").first.inner_text()


def test_generate_then_move_the_step_slider(studio_url, page):
    page.goto(f"{studio_url}/chat?tokens=6")
    wait_for_app(page, timeout_ms=240_000)
    assert_no_exception(page)
    page.get_by_text("Output:").first.wait_for(timeout=120_000)

    box = page.get_by_label("Prompt", exact=False)
    box.fill("Name three colours of the rainbow. <b>bold</b>")
    page.get_by_role("button", name="Generate").click()
    wait_for_app(page, timeout_ms=240_000)
    assert_no_exception(page)
    page.wait_for_function(
        "document.querySelectorAll('[data-testid=stMain] .js-plotly-plot').length >= 4",
        timeout=120_000,
    )
    # The prompt is shown as text in the figures' labels, never as markup.
    assert page.locator("[data-testid=stMain] b", has_text="bold").count() == 0
    assert step_label(page).startswith("Step 1 of")

    slider = page.get_by_role("slider", name="Generation step")
    slider.focus()
    slider.press("ArrowRight")
    slider.press("ArrowRight")
    page.wait_for_function(
        f"""() => [...document.querySelectorAll('{STEP}')]
            .some(e => e.textContent.startsWith('Step 3 of'))""",
        timeout=60_000,
    )
    wait_for_app(page)
    assert_no_exception(page)
    assert "token=3" in page.url


def test_click_a_head_in_the_grid_to_see_its_map(studio_url, page):
    """The layer × head grid is clickable: the clicked head's map is drawn on the prompt."""
    page.goto(f"{studio_url}/chat?tokens=3&section=heads&kind=previous")
    wait_for_app(page, timeout_ms=240_000)
    assert_no_exception(page)
    grid = page.locator(".st-key-chat-heads-grid")
    grid.locator("path.point").first.wait_for(state="attached", timeout=180_000)
    # the head in layer 3, query head 4 (the 3·9 + 4 = 31st point): click inside its cell,
    # 40 % of the way to the next head's, where no point is drawn (the cells are a heatmap;
    # the points, invisible, only say which cell a click is nearest)
    point = grid.locator("path.point").nth(3 * 9 + 4)
    point.scroll_into_view_if_needed()  # a mouse click lands only inside the viewport
    box, right = point.bounding_box(), grid.locator("path.point").nth(3 * 9 + 5).bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    x, y = x + 0.45 * (right["x"] - box["x"]), y + 0.45 * (right["y"] - box["y"])  # below it
    # what the class sees: the cells as one heatmap, filling the plot across (as square
    # markers they stood as thin bars with wide gaps on a 1024 px projector)
    cells, plot = grid.locator("g.hm image").first, grid.locator("rect.nsewdrag").first
    assert cells.bounding_box()["width"] >= 0.95 * plot.bounding_box()["width"]
    page.mouse.move(x - 4, y)  # Plotly picks the clicked point from its hover
    page.mouse.move(x, y)
    page.mouse.click(x, y)
    page.wait_for_function(
        "() => document.body.innerText.includes('L3 H4 on your prompt')", timeout=60_000
    )
    wait_for_app(page)
    assert_no_exception(page)
    assert "pick=3.4" in page.url


def test_a_patching_sweep_on_a_typed_pair(studio_url, page):
    """Does it matter? › Patch: a clean/corrupted pair typed in, the sweep run through the
    queue, the layer × head figure drawn (issue 33), with the network cut."""
    page.goto(f"{studio_url}/chat?tokens=2&section=causal&check=patch")
    wait_for_app(page, timeout_ms=240_000)
    assert_no_exception(page)
    box = page.get_by_role
    box("textbox", name="Clean prompt").fill(
        "When Anna and Tom went to the park, Tom gave a ball to"
    )
    box("textbox", name="Corrupted prompt", exact=False).fill(
        "When Anna and Tom went to the park, Anna gave a ball to"
    )
    box("textbox", name="Answer (clean)").fill(" Anna")
    box("textbox", name="Answer (corrupted)").fill(" Tom")
    page.get_by_role("button", name="Patch", exact=True).click()
    wait_for_app(page, timeout_ms=300_000)
    assert_no_exception(page)
    title = page.locator(".js-plotly-plot .gtitle", has_text="clean output patched")
    title.first.wait_for(timeout=300_000)
    assert "corrupted" in title.first.text_content()
    # the link follows the page's last run: under a loaded suite it can lag the figure
    page.wait_for_url(lambda u: "Anna" in u and "Tom" in u, timeout=30_000)
    assert "Anna" in page.url and "Tom" in page.url  # the typed pair is in the link


def test_stop_ends_a_generation_where_it_is(studio_url, page):
    """Stop while the model writes (in the class's batch): the page keeps the steps it wrote,
    says how many, once, and its step slider runs over those steps."""
    asked = quote("Tell me a long story about a dragon who learns to read.")
    page.goto(f"{studio_url}/chat?tokens=64&text={asked}")
    stop = page.get_by_role("button", name="Stop generating", exact=True)
    stop.wait_for(timeout=240_000)
    page.wait_for_function(  # a few tokens written: the status counts them
        """() => /: ([2-9]|\\d\\d) \\/ 64 tokens/.test(
            document.querySelector('[data-testid=stMain]').innerText)""",
        timeout=120_000,
    )
    count_notes(page, "Stopped after")
    stop.click()
    note = page.get_by_text("Stopped after", exact=False)
    note.wait_for(timeout=60_000)
    wait_for_app(page, timeout_ms=120_000)
    said = note.inner_text()
    written = int(said.split("Stopped after ")[1].split(" ")[0])
    assert 1 <= written < 64, said
    assert page.evaluate("window.mostNotes") == 1
    assert step_label(page).endswith(f"of {written}.")  # the steps are the ones it wrote
    assert_no_exception(page)
