"""Friendly errors: the engine's input errors as they are, anything else as a quotable bug.

Only :class:`engine.errors.InputError` (the engine's, by message id) and :class:`PageError`
(a page's own, already in the reader's language) are something the user can fix, so only
they are shown as a calm message. Everything else (a ``ValueError`` included) is a bug:
its traceback goes to the server log under a short id, and the page shows one line with
that id, which a teacher can quote when reporting it. The audience never sees a stack trace, and the
developer never loses one.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import secrets

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from engine.errors import InputError
from kit.i18n import engine_text, t

log = logging.getLogger("attention_studio")


class PageError(Exception):
    """A page's own refusal, its text already translated (``PageError(t("basics.empty"))``).

    The engine's errors carry message ids for any interface; a page's carry the text its
    locale files give, so the two never mix in one type.
    """


def incident_id() -> str:
    """A short random id, written both in the log line and on the page."""
    return secrets.token_hex(4)


@contextlib.contextmanager
def friendly_errors(what: str | None = None):
    """Show an InputError as it is; log anything else with its traceback and an id; then
    stop the page (the steps below depend on this one)."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - the last line of defence for the audience
        report(exc, what)
        halt()


def fragment(draw):
    """``st.fragment`` whose failure is this part's message, while the page around it stays.

    A fragment reruns alone, outside its page's ``friendly_errors`` blocks: an exception in
    one (a bug in the positional curves) reached Streamlit's own red error box. Every
    fragment of the app is made with this decorator instead (a page-rule test holds it).
    ``st.stop`` and ``st.rerun`` are not exceptions of this kind and pass through."""

    @functools.wraps(draw)
    def guarded(*args, **kwargs):
        try:
            return draw(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - as in friendly_errors
            report(exc, None)

    return st.fragment(guarded)


def report(exc: Exception, what: str | None) -> None:
    """The message for ``exc``, raised while doing ``what``: a refusal as it is, a bug as
    one line with an id, its traceback logged under that id (call it where it was caught)."""
    if isinstance(exc, InputError):
        st.info(engine_text(exc, markdown=True))
    elif isinstance(exc, PageError):
        st.info(str(exc))
    else:
        incident = incident_id()
        what = what or t("kit.this_step")
        log.exception("error %s in %s (%s)", incident, what, type(exc).__name__)
        st.error(t("kit.went_wrong", what=what, id=incident))


def halt() -> None:
    """``st.stop()`` that forgets the widgets this run did not reach, as the browser does.

    A stopped run skips Streamlit's clean-up of widgets it did not draw, so the server
    keeps their values while the browser drops them: drawn again later, such a widget
    shows its default while the page reads its old value (a picker showing six variants
    while the maps use two). Run the clean-up first, then stop.
    """
    ctx = get_script_run_ctx()
    if ctx is not None:
        ctx.session_state.on_script_finished(ctx.shared.widget_ids_this_run.snapshot())
    st.stop()
