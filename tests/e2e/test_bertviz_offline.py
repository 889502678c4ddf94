"""The offline bertviz pages, opened from a file in Chromium with the network cut.

Uses the ``page`` fixture of conftest.py (outside requests aborted and recorded,
console errors recorded, both asserted empty at teardown); only the last test starts a server.
On top of that every request is logged here, so a page that fetched anything but
itself (even from localhost) fails, and any dialog (``alert``) is recorded. The
last test runs ``render`` in a real (tiny) Streamlit app.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from views.bertviz_view import head_view_html, model_view_html

from tests.e2e.support import ROOT, free_port, start_server, wait_for_health

pytestmark = pytest.mark.e2e

EVIL = ["</script><script>alert(1)</script>", "<img src=x onerror=alert(2)>", "a&amp;b"]


def _rows(rng, shape) -> np.ndarray:
    x = rng.random(shape)
    return x / x.sum(-1, keepdims=True)


def _open(page, html: str, tmp_path, name: str) -> tuple[list[str], list[str]]:
    """Open ``html`` from a file; return (every request URL, every dialog message)."""
    requests, dialogs = [], []
    page.on("request", lambda r: requests.append(r.url))

    def on_dialog(dialog):
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    path = tmp_path / f"{name}.html"
    path.write_text(html, encoding="utf-8")
    page.goto(path.as_uri())
    return requests, dialogs


def _texts(page) -> list[str]:
    return page.eval_on_selector_all("svg text", "els => els.map(e => e.textContent)")


def test_head_view_draws_tokens_offline_and_escapes_them(page, tmp_path):
    tokens = ["[CLS]", *EVIL, "the", "cat", "[SEP]"]
    n = len(tokens)
    html = head_view_html(attention=_rows(np.random.default_rng(0), (2, 3, n, n)), tokens=tokens)
    requests, dialogs = _open(page, html, tmp_path, "head")
    # Left and right columns each draw one text per token.
    page.wait_for_function(f"document.querySelectorAll('svg text').length >= {2 * n}")
    texts = _texts(page)
    for token in tokens:
        assert texts.count(token) == 2, token
    assert page.eval_on_selector_all("svg line", "els => els.length") == 3 * n * n
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert dialogs == []
    assert requests == [page.url], f"the page fetched more than itself: {requests}"


def test_cross_attention_only_draws_both_sentences(page, tmp_path):
    src = ["the", "agreement", "was", "signed", "</script>"]
    tgt = ["l'", "accord", "a", "été", "signé", "<eos>"]
    html = head_view_html(
        cross_attention=_rows(np.random.default_rng(1), (1, 1, 6, 5)),
        encoder_tokens=src,
        decoder_tokens=tgt,
    )
    requests, dialogs = _open(page, html, tmp_path, "cross")
    page.wait_for_function(f"document.querySelectorAll('svg text').length >= {len(src + tgt)}")
    texts = _texts(page)
    assert all(t in texts for t in src + tgt)
    assert dialogs == []
    assert requests == [page.url]


def test_model_view_draws_every_head_offline(page, tmp_path):
    tokens = ["a", "b", "</script>", "c"]
    html = model_view_html(attention=_rows(np.random.default_rng(2), (3, 2, 4, 4)), tokens=tokens)
    requests, dialogs = _open(page, html, tmp_path, "model")
    page.wait_for_function("document.querySelectorAll('.attn_background').length >= 6")
    assert page.eval_on_selector_all(".attn_background", "els => els.length") == 3 * 2
    assert dialogs == []
    assert requests == [page.url]


def test_render_draws_inside_streamlit(page, tmp_path):
    """`render` in a real Streamlit app: the view draws in its iframe, offline."""
    script = tmp_path / "bertviz_app.py"
    script.write_text(
        "import numpy as np\n"
        "from sections.bertviz_view import render\n"
        "from views.bertviz_view import head_view_html\n"
        "tokens = ['the', '</script>', 'cat']\n"
        "render(head_view_html(attention=np.full((1, 2, 3, 3), 1 / 3), tokens=tokens), 300)\n"
    )
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "app"), str(ROOT)]))
    with start_server(port, tmp_path / "streamlit.log", str(script), env) as proc:
        try:
            wait_for_health(f"http://127.0.0.1:{port}", proc)
            page.goto(f"http://127.0.0.1:{port}")
            texts = page.frame_locator("iframe").locator("svg text")
            texts.first.wait_for(timeout=60_000)
            assert sorted(texts.all_text_contents()) == sorted(2 * ["the", "</script>", "cat"])
        finally:
            proc.terminate()
