"""简体中文 in Chromium is drawn with a CJK font, not as boxes (Debian's Chromium ships none;
scripts/setup.sh --browser installs fonts-noto-cjk)."""

import pytest

from tests.e2e.support import assert_no_exception, wait_for_app

pytestmark = pytest.mark.e2e

# Each distinct Chinese character of an element, drawn alone in the element's font: with a
# CJK font every character has its own shape; without one, each is the same empty box
# (.notdef), so the bitmaps coincide.
SHAPES = """(el) => {
    const style = getComputedStyle(el);
    const chars = [...new Set([...el.innerText].filter(c => /[\\u4e00-\\u9fff]/.test(c)))];
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 64;
    const ctx = canvas.getContext('2d');
    const shapes = chars.slice(0, 8).map(c => {
        ctx.clearRect(0, 0, 64, 64);
        ctx.font = `${style.fontWeight} 48px ${style.fontFamily}`;
        ctx.textBaseline = 'top';
        ctx.fillText(c, 4, 4);
        const alpha = ctx.getImageData(0, 0, 64, 64).data.filter((_, i) => i % 4 === 3);
        return alpha.join(',');
    });
    return {chars: shapes.length, distinct: new Set(shapes).size};
}"""


def test_a_chinese_heading_renders_with_a_cjk_font(studio_url, page):
    page.goto(f"{studio_url}/basics?lang=zh")
    wait_for_app(page)
    assert_no_exception(page)
    heading = page.locator("[data-testid=stMain] h1").first
    found = heading.evaluate(SHAPES)
    assert found["chars"] >= 3, (heading.inner_text(), found)
    assert found["distinct"] == found["chars"], (
        f"Chinese characters of {heading.inner_text()!r} draw as identical boxes: "
        "no CJK font (apt-get install --no-install-recommends fonts-noto-cjk)"
    )
