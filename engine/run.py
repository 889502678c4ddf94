"""The run context: what a long engine call polls and reports to.

A training loop, a sweep or a generation asks ``stopping()`` before each unit of work (a
Cancel button, a time limit) and reports each unit done (``step``) and each timeline
snapshot (``snapshot``). One type for all of them, so a page wires its queue's Cancel and
progress bar to any call the same way, and a command line passes nothing. No torch here:
a page imports it before any model is loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Run:
    """``should_stop()`` → True ends the call at the next unit; ``on_step(done, loss)`` sees
    each unit as it finishes; ``on_snapshot(step, metrics, traces)`` each timeline snapshot
    as it is taken (a live view). Every field may be None."""

    should_stop: Callable[[], bool] | None = None
    on_step: Callable[[int, float], None] | None = None
    on_snapshot: Callable[[int, dict, list], None] | None = None

    def stopping(self) -> bool:
        return self.should_stop is not None and bool(self.should_stop())

    def step(self, done: int, loss: float) -> None:
        if self.on_step is not None:
            self.on_step(done, loss)

    def snapshot(self, step: int, metrics: dict, traces: list) -> None:
        if self.on_snapshot is not None:
            self.on_snapshot(step, metrics, traces)


NOTHING = Run()  # a command line's run: never stopped, reports to no one
