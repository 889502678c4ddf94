"""The engine's one error type: input a person can fix, named by a message id.

``InputError("text.too_many_tokens", n=60, limit=50)`` raises message id
``text.too_many_tokens`` of :mod:`engine.messages`: ``str(exc)`` is its English text and
``exc.message`` the :class:`~engine.messages.Message` an interface translates. Only ids
are accepted, so every text the engine shows has a translation (the app's own texts,
already translated, travel as ``kit.errors.PageError``). Anything else the engine raises
is a bug, and the app logs it with an incident id instead of showing it.
"""

from __future__ import annotations

from engine.messages import MESSAGES, Message


class InputError(ValueError):
    """Input the user can fix; the message says how, and pages show it as is."""

    def __init__(self, message: str | Message, **params):
        if isinstance(message, Message):  # an id already bound to its values
            super().__init__(message)
            return
        if message not in MESSAGES:
            # A programming error, not the user's: the engine speaks only in message ids.
            raise KeyError(f"InputError needs a message id of engine.messages, not {message!r}")
        super().__init__(Message(message, **params))

    @property
    def message(self) -> Message:
        return self.args[0]
