"""The eviction ledger drawn (views.ledger builds its figure): the figure, then one step's
evicted tokens under a slider that redraws that part only."""

from __future__ import annotations

import streamlit as st
from kit import chart, fragment
from kit.i18n import t
from kit.url import url_number
from views.ledger import ledger_figure

from sections.chat import inert


def draw_ledger(led) -> None:
    """The ledger's figure and, under it, one step's evicted tokens (a slider)."""
    st.subheader(t("chat.ledger_heading"))
    st.markdown(t("chat.ledger_intro"))
    if led.stopped:
        st.info(t("chat.stopped", n=len(led.mass)))
    if not led.mass:
        return
    chart(ledger_figure(led), key="chat-ledger")
    _step(led)


@fragment
def _step(led) -> None:
    """One step of the ledger: a slider move redraws this part only."""
    n = len(led.mass)
    label, key = t("chat.ledger_pick"), "chat-ledger-step"
    s = url_number(st.slider, "lstep", label, 1, n, n, key=key) - 1 if n > 1 else 0
    gone = [led.tokens[j] for j in led.evicted[s]]
    shown = ", ".join(f"«{inert(x)}»" for x in gone[-12:])
    st.markdown(
        t(
            "chat.ledger_at",
            step=s + 1,
            written=inert(led.written[s]),
            full=inert(led.full_tokens[s]),
            n=len(gone),
            tokens=shown or "–",
            mass=f"{led.mass[s]:.3f}",
            kl=f"{led.kl[s]:.3f}",
        )
    )
