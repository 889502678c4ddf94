"""Small page helpers: friendly errors instead of tracebacks, export buttons."""

from __future__ import annotations

import contextlib
import logging

import streamlit as st

from engine.text import InputError

log = logging.getLogger("attention_studio")


@contextlib.contextmanager
def friendly_errors(what: str = "this step"):
    """Show input problems as they are and anything unexpected as one calm sentence.

    The full exception goes to the server log, where a developer can read it; the
    audience in front of a projector never sees a stack trace.
    """
    try:
        yield
    except InputError as exc:
        st.info(str(exc))
        st.stop()
    except (ValueError, FileNotFoundError) as exc:
        st.warning(f"Could not run {what}: {exc}")
        st.stop()
    except Exception as exc:  # noqa: BLE001 - the last line of defence for the audience
        log.exception("unexpected error in %s", what)
        st.error(
            f"Something went wrong in {what} ({type(exc).__name__}). "
            "The details are in the server log."
        )
        st.stop()


def export_buttons(trace, stem: str) -> None:
    """Download the Trace as JSON and NPZ: the same format the engine reads back."""
    c1, c2 = st.columns(2)
    c1.download_button(
        "Download trace (JSON)",
        trace.to_json(),
        f"{stem}.json",
        mime="application/json",
        key=f"dl-json-{stem}",
    )
    c2.download_button(
        "Download trace (NPZ)",
        trace.to_npz(),
        f"{stem}.npz",
        mime="application/octet-stream",
        key=f"dl-npz-{stem}",
    )
