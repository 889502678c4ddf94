"""An answer is shown as an answer only when the model did not flag it.

The engine's cards put ``outputs["warning"]`` on a Trace whose input is far from what
the model learned (unknown words, low confidence, an impossible date). A page then
says so first and shows the output for what it is, never as a headline translation.
"""

from __future__ import annotations

import streamlit as st

from kit.i18n import engine_text, t


def answer_heading(trace, answer_md: str) -> bool:
    """The answer as a heading, or the warning and the output as a guess; True if trusted."""
    warning = trace.outputs.get("warning")
    if not warning:
        st.markdown(f"### {answer_md}")
        return True
    st.warning(engine_text(warning, markdown=True))
    st.markdown(t("kit.flagged_output", answer=answer_md))
    return False
