"""Issue 34: the inputs that still broke a page, each driven on its page. Every one is now
refused with a short message (an info box, never the error box of a bug), or drawn."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from engine.variants.registry import REGISTRY
from tests.app.page_support import messages

PRETRAINED = "pretrained"


def calm(at) -> None:
    """No traceback and no 'Something went wrong' box: only the engine's messages."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, messages(at)


def _npz(magnitude: float, n: int = 16, d: int = 8) -> bytes:
    rng = np.random.default_rng(0)
    arrays = {key: (rng.uniform(-1, 1, (2, n, d)) * magnitude).astype(np.float32) for key in "qkv"}
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def _upload(page, data: bytes, variants: list[str] | None = None) -> AppTest:
    at = page("variants")
    at.radio(key="var-source").set_value("npz").run()
    if variants is not None:
        at.multiselect(key="var-picked").set_value(variants).run()
    at.file_uploader(key="var-npz").set_value(("qkv.npz", data, "application/octet-stream"))
    return at.run()


@pytest.mark.parametrize("magnitude", [1e2, 1e4])
def test_an_upload_of_large_values_draws_every_variant(page, magnitude):
    """Values ±100 give logits ≈ 1e4: the reference map summed to 0.6–0.97 per row and
    every variant failed with 'rows must sum to 1' (Performer's features gave NaN)."""
    every = [name for name in REGISTRY if name != "full"]
    at = _upload(page, _npz(magnitude), every)
    calm(at)
    assert "rows must sum" not in messages(at)
    table = at.dataframe[0].value
    assert set(table["variant"]) == set(every)


def test_an_upload_with_a_damaged_byte_inside_a_member_is_refused(page):
    data = bytearray(_npz(1.0))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = zf.infolist()[0]
    data[info.header_offset + 30 + len(info.filename) + 40] ^= 0xFF  # inside q's data
    at = _upload(page, bytes(data))
    calm(at)  # was zipfile.BadZipFile
    assert "not a readable .npz" in messages(at)


def test_an_upload_of_values_of_1e20_is_refused_naming_the_scores(page):
    at = _upload(page, _npz(1e20))
    calm(at)  # was NaN in every map
    assert "q·k/√d" in messages(at)


@pytest.mark.parametrize("text", ["[SEP]", "[CLS]", "[CLS] [SEP]"])
def test_minilm_text_of_only_sinks_with_them_hidden(page, text):
    at = page("transformer")
    at.radio(key="family").set_value(PRETRAINED).run()
    next(t for t in at.text_input if t.label == "Input").set_value(text).run()
    at.toggle(key="hide-sinks").set_value(True).run()
    calm(at)  # was "nothing is left once …" as an error box
    assert "Nothing is left once the [CLS]/[SEP] tokens are hidden" in messages(at)


def test_a_model_path_with_a_nul_byte(page):
    at = page("transformer")
    at.radio(key="family").set_value(PRETRAINED).run()
    at.selectbox(key="hf-model").set_value("other").run()
    at.text_input(key="hf-path").set_value("/tmp/model\x00dir").run()
    calm(at)  # was ValueError: embedded null byte
    assert "control character (U+0000)" in messages(at)


LONG_NUMBER = "9" * 4_400 + " Mary went to the kitchen.\n2 Where is Mary?\tkitchen\t1\n"


def test_memory_own_story_with_a_line_number_of_thousands_of_digits(page):
    at = page("memory")
    at.radio(key="mem_source").set_value("own").run()
    at.text_area(key="mem_story").set_value(LONG_NUMBER)
    at.text_input(key="mem_question").set_value("Where is Mary?")
    at.run()
    calm(at)  # was Python's 4,300-digit ValueError
    assert "a line number has at most 9 digits" in messages(at)


def test_retrieval_own_story_with_a_line_number_of_thousands_of_digits():
    from catalog import APP_DIR

    at = AppTest.from_file(str(APP_DIR / "studios" / "retrieval.py"), default_timeout=300).run()
    at.radio(key="ret-store").set_value("own").run()
    at.text_area(key="ret-story-text").set_value(LONG_NUMBER).run()
    if "at most 9 digits" not in messages(at):  # the story is read when a question is asked
        next(w for w in at.text_input if w.key.startswith("ret-question-")).set_value("Where?")
        at.button(key="ret-ask").click().run()
    calm(at)
    assert "a line number has at most 9 digits" in messages(at)
