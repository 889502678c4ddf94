"""Friendly errors: input problems as they are, anything unexpected as one calm sentence."""

from __future__ import annotations

import contextlib
import logging

import streamlit as st

from engine.text import InputError
from kit.i18n import engine_text, t

log = logging.getLogger("attention_studio")


@contextlib.contextmanager
def friendly_errors(what: str | None = None):
    """Show input problems as they are and anything unexpected as one calm sentence.

    The full exception goes to the server log, where a developer can read it; the
    audience in front of a projector never sees a stack trace.
    """
    what = what or t("kit.this_step")
    try:
        yield
    except InputError as exc:
        st.info(engine_text(exc))
        st.stop()
    except (ValueError, FileNotFoundError) as exc:
        st.warning(t("kit.could_not_run", what=what, error=exc))
        st.stop()
    except Exception as exc:  # noqa: BLE001 - the last line of defence for the audience
        log.exception("unexpected error in %s", what)
        st.error(t("kit.went_wrong", what=what, kind=type(exc).__name__))
        st.stop()
