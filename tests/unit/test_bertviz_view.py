"""Offline bertviz pages: no URL, escaped tokens, validated shapes, faithful weights."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest
from kit.errors import PageError
from sections.bertviz_view import render
from views import bertviz_view
from views.bertviz_view import head_view_html, model_view_html

SCRIPT_BREAKER = "</script><script>alert(1)</script>"


def _rows(shape, seed=0) -> np.ndarray:
    x = np.random.default_rng(seed).random(shape)
    return x / x.sum(-1, keepdims=True)


def _params(html: str) -> dict:
    """The params object the page hands to bertviz's script, weights decoded to [0, 1]."""
    call = "const params = attentionStudioWeights("
    start = html.index(call) + len(call)
    params, _ = json.JSONDecoder().raw_decode(html, start)
    for d in params["attention"]:
        raw = np.frombuffer(base64.b64decode(d["attn"]), dtype=np.uint8)
        d["attn"] = raw.reshape(d["shape"]) / 255.0
    return params


@pytest.fixture(scope="module")
def self_page():
    tokens = ["[CLS]", "the", "cat", "[SEP]"]
    return head_view_html(attention=_rows((2, 3, 4, 4)), tokens=tokens)


def test_page_has_no_url_and_no_loader(self_page):
    assert re.search(r"https?://", self_page, re.IGNORECASE) is None
    assert "cdnjs" not in self_page
    assert re.search(r"require\.config\(\{\s*paths", self_page) is None
    assert re.search(r"<script[^>]*\bsrc\s*=", self_page) is None


def test_libraries_are_inlined_before_bertviz_asks_for_them(self_page):
    order = [
        self_page.index("https:\\/\\/d3js.org v5.7.0"),  # d3's header, defanged
        self_page.index("jQuery v2.2.4"),
        self_page.index("RequireJS 2.3.6"),
        self_page.index("define('d3', [], () => window.d3)"),
        self_page.index("define('jquery', [], () => window.jQuery)"),
        self_page.index("requirejs(['jquery', 'd3']"),
    ]
    assert order == sorted(order)


def test_weights_arrive_within_one_byte_step():
    attention = _rows((2, 3, 5, 5), seed=1)
    page = head_view_html(attention=attention, tokens=list("abcde"))
    sent = _params(page)["attention"][0]["attn"]
    assert sent.shape == attention.shape
    assert np.abs(sent - attention).max() <= 0.5 / 255 + 1e-12


def test_script_breaking_tokens_stay_strings():
    tokens = [SCRIPT_BREAKER, "a&b", "x\u2028y", "https://example.org/"]
    page = head_view_html(attention=_rows((1, 1, 4, 4)), tokens=tokens)
    # Only the page's own five scripts are closed: d3, jQuery, require.js, glue, bertviz.
    assert page.lower().count("</script") == 5
    assert "\\u003c\\/script\\u003e\\u003cscript\\u003ealert(1)" in page
    assert "\u2028" not in page and "\\u2028" in page
    assert "a\\u0026b" in page
    assert re.search(r"https?://", page) is None
    # The escapes are plain JSON: bertviz gets the exact tokens back.
    data = _params(page)["attention"][0]
    assert data["left_text"] == tokens and data["right_text"] == tokens


def test_cross_attention_alone_is_one_cross_view():
    src, tgt = ["the", "agreement", "</script>"], ["l'", "accord", "<eos>", "."]
    cross = _rows((1, 1, 4, 3), seed=2)
    page = head_view_html(cross_attention=cross, encoder_tokens=src, decoder_tokens=tgt)
    (data,) = _params(page)["attention"]
    assert data["name"] == "Cross"
    assert data["left_text"] == tgt and data["right_text"] == src
    np.testing.assert_allclose(data["attn"], cross, atol=0.5 / 255)
    assert 'id="filter"' not in page  # nothing to choose between


def test_encoder_decoder_offers_all_three():
    src, tgt = ["a", "b", "c"], ["x", "y"]
    page = head_view_html(
        encoder_attention=_rows((2, 2, 3, 3)),
        decoder_attention=_rows((2, 2, 2, 2)),
        cross_attention=_rows((2, 2, 2, 3)),
        encoder_tokens=src,
        decoder_tokens=tgt,
        layer=np.int64(1),  # numpy indices are fine too
        heads=[np.int64(0)],
    )
    params = _params(page)
    assert [d["name"] for d in params["attention"]] == ["Encoder", "Decoder", "Cross"]
    assert [d["attn"].shape for d in params["attention"]] == [
        (2, 2, 3, 3),
        (2, 2, 2, 2),
        (2, 2, 2, 3),
    ]
    assert params["layer"] == 1 and params["heads"] == [0]


def test_model_view_keeps_only_the_chosen_layer_and_heads():
    attention = _rows((3, 4, 5, 5), seed=3)
    page = model_view_html(attention=attention, tokens=list("abcde"), layer=2, heads=[1, 3])
    assert re.search(r"https?://", page) is None
    sent = _params(page)["attention"][0]["attn"]
    np.testing.assert_allclose(sent, attention[[2]][:, [1, 3]], atol=0.5 / 255)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(attention=np.ones((2, 2, 2)), tokens=["a", "b"]), "shape"),
        (dict(attention=_rows((1, 1, 3, 3)), tokens=["a", "b"]), "3 queries × 3 keys"),
        (dict(attention=_rows((1, 1, 2, 2))), "`tokens` is required"),
        (dict(attention=_rows((1, 1, 2, 2)), tokens="ab"), "list of token strings"),
        (dict(attention=2 * _rows((1, 1, 2, 2)) + 0.5, tokens=["a", "b"]), "[0, 1]"),
        (dict(attention=np.full((1, 1, 2, 2), np.nan), tokens=["a", "b"]), "NaN"),
        (
            dict(attention=_rows((1, 1, 1, 1)), tokens=["a"], cross_attention=_rows((1, 1, 1, 1))),
            "not both",
        ),
        (dict(), "No attention"),
        (dict(cross_attention=_rows((1, 1, 2, 3)), encoder_tokens=list("abc")), "decoder_tokens"),
        (
            dict(
                encoder_attention=_rows((2, 1, 2, 2)),
                cross_attention=_rows((1, 1, 2, 2)),
                encoder_tokens=["a", "b"],
                decoder_tokens=["x", "y"],
            ),
            "same layers and heads",
        ),
        (dict(attention=_rows((2, 2, 2, 2)), tokens=["a", "b"], layer=2), "`layer`"),
        (dict(attention=_rows((2, 2, 2, 2)), tokens=["a", "b"], heads=[0, 0]), "`heads`"),
    ],
)
def test_bad_inputs_get_clear_messages(kwargs, message):
    for build in (head_view_html, model_view_html):
        with pytest.raises(ValueError, match=re.escape(message)):
            build(**kwargs)


def test_oversized_view_is_refused_with_its_size(monkeypatch):
    monkeypatch.setattr(bertviz_view, "MAX_PAYLOAD_BYTES", 1_000)
    with pytest.raises(PageError, match=r"carry \d+\.\d MB .* limit is 0 MB"):
        head_view_html(attention=_rows((2, 2, 20, 20)), tokens=[str(i) for i in range(20)])


def test_transformer_sized_view_fits_in_three_megabytes():
    """Issue 4's budget: 128 tokens × 6 layers × 12 heads ≤ 3 MB (the whole page)."""
    n = 128
    page = head_view_html(
        attention=_rows((6, 12, n, n), seed=4), tokens=[f"t{i}" for i in range(n)]
    )
    assert len(page.encode("utf-8")) <= 3_000_000


def test_vendored_scripts_are_read_once(self_page):
    bertviz_view._vendored_scripts.cache_clear()
    head_view_html(attention=_rows((1, 1, 2, 2)), tokens=["a", "b"])
    model_view_html(attention=_rows((1, 1, 2, 2)), tokens=["a", "b"])
    info = bertviz_view._vendored_scripts.cache_info()
    assert (info.misses, info.hits) == (1, 1)


def test_render_uses_st_iframe(monkeypatch, self_page):
    calls = []
    monkeypatch.setattr("streamlit.iframe", lambda html, height: calls.append((html, height)))
    render(self_page, height=420)
    assert calls == [(self_page, 420)]


def test_a_space_token_is_drawn_not_blank():
    """A character model's space is a token: bertviz would draw it as an empty label."""
    page = head_view_html(attention=_rows((1, 1, 3, 3)), tokens=["a", " ", "b"])
    (shown,) = _params(page)["attention"]
    assert shown["left_text"] == shown["right_text"] == ["a", "␣", "b"]
