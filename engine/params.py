"""A parameter with stated limits: shared by model cards (options) and variants (hyper-parameters).

It sits below both so that neither imports the other to name a knob. ``check`` is the
input gate for options: whatever a page, a URL or a notebook passes (text, ±inf, NaN, a
4,300-digit integer, a list) comes back as a number within the limits or an InputError.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine import gate
from engine.errors import InputError
from engine.messages import Message


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
        if isinstance(self.default, int):  # whole numbers as they are: 2147483647, not 2.14748e+09
            return f"{int(self.low)} … {int(self.high)}"
        return f"{self.low:g} … {self.high:g}"

    def check(self, value: Any) -> Any:
        if self.choices:
            try:
                known = value in self.choices
            except (TypeError, ValueError):  # an array has no single truth value
                known = False
            if not known:
                raise InputError(
                    "param.not_a_choice", label=self.label, limits=self.limits, value=value
                )
            return value
        try:
            number = gate.number(value, type(self.default))
        except (TypeError, ValueError):
            raise InputError("param.not_a_number", label=self.label, limits=self.limits) from None
        if not isinstance(value, (int, str)) and value != number:
            raise InputError("param.not_whole", label=self.label, limits=self.limits)
        if not (self.low <= number <= self.high):
            raise InputError(
                "param.out_of_range", label=self.label, limits=self.limits, value=value
            )
        return number
