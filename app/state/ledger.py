"""The Chat page's eviction ledger (issue 32): the policy's greedy generation beside a
full cache reading the same tokens (``engine.analysis.ledger``), queued with progress and
Stop, cached by the request and the policy."""

from __future__ import annotations

from kit import queue
from kit.i18n import t

from engine.analysis import ledger as ledger_lib
from state import chat as chat_state


def ledger(request: chat_state.Request, policy) -> ledger_lib.Ledger:
    return queue.run(
        t("chat.queue_ledger"),
        _ledger,
        chat_state.model(),
        request,
        policy,
        t("chat.progress_tokens"),
        key=_key(request, policy),
        cancel_label=t("chat.stop"),
    )


def _ledger(chat, request, policy, unit, cancel, progress):
    should_stop = queue.stepper(cancel, progress, request.max_new_tokens, unit)
    return ledger_lib.ledger(
        chat,
        request.prompt,
        policy,
        template=request.template,
        max_new_tokens=request.max_new_tokens,
        should_stop=should_stop,
    )


def warm() -> None:
    """The Cache policies section's default ledger into the queue's result cache (the
    server's preload, after :func:`state.chat.warm`)."""
    request, policy = chat_state.Request(), chat_state.policy(**chat_state.CACHE_DEFAULT)
    queue.prefetch(_ledger, chat_state.model(), request, policy, "", key=_key(request, policy))


def _key(request, policy) -> str:
    """What a ledger depends on (not the sampling settings: it decodes greedily)."""
    return repr((request.prompt, request.template, request.max_new_tokens, policy))
