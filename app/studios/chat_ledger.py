"""Chat › Cache policies › the eviction ledger: which tokens the policy has evicted as the
model writes, what the full cache would have read there, and what it costs (issue 32)."""

import streamlit as st
from kit import chart, t
from state.ledger import ledger
from views import chat as chat_figs
from views.ledger import ledger_figure


def eviction_ledger(request, policy) -> None:
    st.subheader(t("chat.ledger_heading"))
    st.markdown(t("chat.ledger_intro"))
    led = ledger(request, policy)
    if led.stopped:
        st.info(t("chat.stopped", n=len(led.mass)))
    if not led.mass:
        return
    chart(ledger_figure(led), key="chat-ledger")
    _step(led)


@st.fragment
def _step(led) -> None:
    """One step of the ledger: a slider move redraws this part only."""
    n = len(led.mass)
    s = st.slider(t("chat.ledger_pick"), 1, n, n, key="chat-ledger-step") - 1 if n > 1 else 0
    gone = [led.tokens[j] for j in led.evicted[s]]
    shown = ", ".join(f"«{chat_figs.inert(x)}»" for x in gone[-12:])
    st.markdown(
        t(
            "chat.ledger_at",
            step=s + 1,
            written=chat_figs.inert(led.written[s]),
            full=chat_figs.inert(led.full_tokens[s]),
            n=len(gone),
            tokens=shown or "–",
            mass=f"{led.mass[s]:.3f}",
            kl=f"{led.kl[s]:.3f}",
        )
    )
