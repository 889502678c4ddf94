"""A parameter with stated limits: shared by model cards (options) and variants (hyper-parameters).

It sits below both so that neither imports the other to name a knob.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.messages import Message
from engine.text import InputError


@dataclass(frozen=True)
class Param:
    """A hyper-parameter with stated limits; ``check`` refuses values outside them."""

    name: str
    label: str
    default: Any
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    help: str = ""

    @property
    def limits(self) -> str:
        if self.choices:
            return Message("param.one_of", choices=", ".join(self.choices))
        return f"{self.low:g} … {self.high:g}"

    def check(self, value: Any) -> Any:
        if self.choices:
            if value not in self.choices:
                raise InputError(
                    "param.not_a_choice", label=self.label, limits=self.limits, value=value
                )
            return value
        try:
            number = type(self.default)(value)
        except (TypeError, ValueError):
            raise InputError("param.not_a_number", label=self.label, limits=self.limits) from None
        if isinstance(value, float) and isinstance(self.default, int) and value != number:
            raise InputError("param.not_whole", label=self.label, limits=self.limits)
        if not (self.low <= number <= self.high):
            raise InputError(
                "param.out_of_range", label=self.label, limits=self.limits, value=value
            )
        return number
