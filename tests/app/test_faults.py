"""Faults stay local: a corrupt checkpoint or evaluation file gives a clear message on its
own page while every other page keeps working."""

import shutil

import pytest
import streamlit as st

from engine import checkpoints
from tests.app.page_support import messages as shown


@pytest.fixture
def damaged(tmp_path, monkeypatch):
    copy = tmp_path / "checkpoints"
    shutil.copytree(checkpoints.CHECKPOINT_DIR, copy)
    (copy / "nmt-enfr-additive.safetensors").write_bytes(b"not a safetensors file")
    (copy / "transformer-enfr-sinusoidal.json").write_text("{ broken")
    (copy / "memn2n-eval.json").write_text("{ broken")
    monkeypatch.setattr(checkpoints, "CHECKPOINT_DIR", copy)
    st.cache_data.clear()
    st.cache_resource.clear()
    yield copy
    st.cache_data.clear()
    st.cache_resource.clear()


def test_a_corrupt_checkpoint_is_named_on_its_page(damaged, page):
    at = page("alignment")
    assert not at.exception
    assert "nmt-enfr-additive" in shown(at) and "unreadable" in shown(at)


@pytest.mark.parametrize("name", ["basics", "memory", "transformer", "compare", "variants"])
def test_every_other_page_keeps_working(damaged, page, name):
    at = page(name)
    assert not at.exception
    assert not at.error, shown(at)


def test_a_corrupt_evaluation_file_reads_as_not_measured(damaged):
    from engine.models import registry

    names = registry.names()
    assert "transformer-enfr-sinusoidal" not in names  # skipped, with a log line
    assert registry.get("memn2n-task1").results() is None


ERRORS_SCRIPT = """
import streamlit as st
from kit import friendly_errors
from engine.errors import InputError

with friendly_errors("the test step"):
    if st.query_params.get("kind") == "input":
        raise InputError("text.empty")
    raise ValueError("an internal detail the audience should not read")
"""


def test_only_input_errors_are_calm_messages(caplog):
    """An InputError is shown as it is; anything else, a ValueError included, is a bug:
    logged with its traceback under an id, and shown as one line with that id."""
    import re

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(ERRORS_SCRIPT)
    at.query_params["kind"] = "input"
    at.run()
    assert not at.exception and not at.error
    assert [i.value for i in at.info] == ["Type a sentence to begin."]

    at = AppTest.from_string(ERRORS_SCRIPT)
    with caplog.at_level("ERROR", logger="attention_studio"):
        at.run()
    assert not at.exception and not at.info and len(at.error) == 1
    line = at.error[0].value
    assert "the test step" in line and "internal detail" not in line
    incident = re.search(r"\b([0-9a-f]{8})\b", line).group(1)
    logged = [r for r in caplog.records if incident in r.getMessage()]
    assert len(logged) == 1 and logged[0].exc_info[0] is ValueError  # with its traceback


FRAGMENT_SCRIPT = """
import streamlit as st
from kit import fragment
from engine.errors import InputError
from tests.app.page_support import messages as shown

@fragment
def part(kind):
    st.write("before")
    if kind == "input":
        raise InputError("text.empty")
    if kind == "bug":
        raise ValueError("an internal detail the audience should not read")
    if kind == "stop":
        st.stop()
    st.write("after")

part(st.query_params.get("kind"))
st.write("the rest of the page")
"""


@pytest.mark.parametrize("kind", ["input", "bug", "stop", "none"])
def test_a_failing_fragment_is_its_message_and_the_page_goes_on(kind):
    """A fragment reruns outside its page's friendly_errors: kit.fragment gives it its own,
    which ends that part only. st.stop is not a failure and still stops the script."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(FRAGMENT_SCRIPT)
    at.query_params["kind"] = kind
    at.run()
    written = [m.value for m in at.markdown]
    assert not at.exception
    assert written[0] == "before"
    assert ("the rest of the page" in written) is (kind != "stop")
    assert ("after" in written) is (kind == "none")
    assert [i.value for i in at.info] == (["Type a sentence to begin."] if kind == "input" else [])
    assert len(at.error) == (kind == "bug")
    assert "internal detail" not in " ".join(e.value for e in at.error)
