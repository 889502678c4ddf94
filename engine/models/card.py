"""The card types: what every model states, and the one way it is traced.

A family's card (``engine/models/cards/*``) subclasses :class:`ModelCard`; the registry
discovers them. This module imports no card and not the model registry, so cards, the
registry and the evaluation CLIs all import it without a cycle.

A card is read from its checkpoint's JSON alone: what it states (title, task, limits of
the text, results) needs no torch, so listing every card (the home page) starts without
it. The modules that build and run a model import torch; a card names them
(:attr:`ModelCard.runtime_module`, :data:`TIMELINE`, :data:`VARIANTS`) and imports them on
first use. None of them imports the card layer back (``tests/unit/test_startup.py``), so
no import cycle hides behind the names.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

from engine import checkpoints
from engine.errors import InputError
from engine.messages import Message, joined
from engine.params import Param
from engine.run import Run

if TYPE_CHECKING:  # names for annotations only: listing the cards loads no numpy
    import numpy as np

    from engine.timeline import Timeline
    from engine.trace import Trace

TIMELINE = "engine.timeline"  # a checkpoint's training timeline (torch for its recorder)
VARIANTS = "engine.variants.registry"  # the attention functions a swappable card takes


@dataclass(frozen=True)
class Limits:
    """What one input may be; stated to the user and checked before any model runs."""

    max_chars: int
    max_tokens: int | None = None
    token_unit: str = Message("unit.tokens")
    max_sentences: int | None = None
    empty: str = Message("limits.empty")  # what to type, per family

    def describe(self) -> str:
        parts = [Message("limits.chars", chars=self.max_chars)]
        if self.max_tokens is not None:
            parts.append(Message("limits.tokens", tokens=self.max_tokens, unit=self.token_unit))
        if self.max_sentences is not None:
            parts.append(Message("limits.sentences", sentences=self.max_sentences))
        return joined(parts)

    def check(self, text: str) -> None:
        if not isinstance(text, str) or not text.strip():
            raise InputError(self.empty)
        if len(text) > self.max_chars:
            raise InputError("limits.too_long", n=len(text), limit=self.max_chars)


def forced_tokens(tokens, what: str, name: str, limit: int | None = None) -> list[str]:
    """A forced alignment's source or target (``what``) as a list of words, or an
    InputError: text (a string would be read letter by letter), nothing, something that is
    not words, or more tokens than the model ``name`` reads (``limit``)."""
    what = Message(f"card.forced.{what}")
    words = isinstance(tokens, (list, tuple)) and all(isinstance(t, str) for t in tokens)
    if not words or not tokens:
        raise InputError("card.not_tokens", what=what)
    if limit is not None and len(tokens) > limit:
        raise InputError("card.forced_too_long", what=what, n=len(tokens), name=name, limit=limit)
    return list(tokens)


@dataclass(frozen=True)
class Example:
    label: str
    input: str


@dataclass(frozen=True)
class Alignment:
    """A target × source weight matrix with its labels (end-of-sentence rows dropped)."""

    label: str
    weights: np.ndarray  # (T, S)
    target: tuple[str, ...]
    source: tuple[str, ...]


@dataclass
class ModelCard(ABC):
    name: str
    meta: dict = field(repr=False)
    directory: Path | None = None  # None: assets/checkpoints
    family: ClassVar[str]
    paper: ClassVar[str]
    # The module that builds and runs this family's models; it imports torch, so it is
    # imported on the first load or trace, not when the card is discovered.
    runtime_module: ClassVar[str]

    @property
    def runtime(self) -> ModuleType:
        return importlib.import_module(self.runtime_module)

    # -- what a family states ------------------------------------------------------------
    @property
    @abstractmethod
    def title(self) -> str: ...

    @property
    @abstractmethod
    def task(self) -> str: ...

    @property
    def variant(self) -> str:
        """The family-specific tag that tells this checkpoint from its siblings."""
        return ""

    @property
    @abstractmethod
    def limits(self) -> Limits: ...

    @property
    @abstractmethod
    def examples(self) -> tuple[Example, ...]: ...

    options: ClassVar[tuple[Param, ...]] = ()

    @property
    def config(self) -> dict:
        """The model's configuration as its checkpoint states it (layers, heads, sizes…):
        what a caption says of the model, read without loading it."""
        return dict(self.meta.get("config", {}))

    @property
    def train_command(self) -> str | None:
        return self.meta.get("command")

    @property
    def evaluate_command(self) -> str | None:
        return None

    # The variant (see :attr:`variant`) that serves a task when no checkpoint is asked for;
    # ``engine.models.registry.default`` reads it.
    default_variant: ClassVar[str | None] = None

    @property
    def is_default(self) -> bool:
        return self.default_variant is not None and self.variant == self.default_variant

    @property
    def result_name(self) -> str | None:
        """The evaluation file that holds this model's numbers (``checkpoints.result_name``),
        beside the checkpoint; the evaluate command writes it under this name."""
        return None

    def saved_results(self) -> dict | None:
        """The whole evaluation file this card reads its numbers from, or None."""
        if self.result_name is None:
            return None
        return checkpoints.load_result(self.result_name, self.directory)

    def results(self) -> dict | None:
        """This model's part of :meth:`saved_results`, or None when none is shipped."""
        return None

    def timeline(self) -> Timeline:
        """The training timeline saved beside this checkpoint (:mod:`engine.timeline`): the
        probe set's Traces at log-spaced steps. A missing or damaged one is an InputError
        naming the command that rebuilds it; the finished model is unaffected."""
        return importlib.import_module(TIMELINE).load(
            self.name, self._dir, self.train_command or ""
        )

    def timeline_stamp(self) -> tuple | None:
        """A cache key that changes when the timeline is saved again (None: not shipped)."""
        return importlib.import_module(TIMELINE).stamp(self.name, self._dir)

    # -- train it now -----------------------------------------------------------------
    @property
    def live_steps(self) -> int | None:
        """The steps of :meth:`train_now`'s run; None where this card's kind is not trained
        on a page."""
        return None

    def train_now(self, seed: int, steps: int | None = None, *, run: Run | None = None) -> Timeline:
        """A fresh small model of this card's kind trained from ``seed`` for ``steps``
        (default :attr:`live_steps`), writing nothing; ``run`` stops it and sees its steps
        and snapshots. Its timeline's meta holds ``command`` (the command line that saves
        the same run), ``wall_s`` and ``cpu_s``."""
        raise InputError("card.no_live_training", name=self.name)

    @property
    def _dir(self) -> Path:
        return Path(self.directory) if self.directory is not None else checkpoints.CHECKPOINT_DIR

    @abstractmethod
    def load(self) -> Any:
        """The runnable model; not cached here, the caller keeps it."""

    @abstractmethod
    def _trace(self, model: Any, input: Any, **options) -> Trace: ...

    # -- shared --------------------------------------------------------------------------
    def check(self, input: Any) -> None:
        """Refuse empty or over-long input with a message that names the limit."""
        self.limits.check(input)

    # True when a registry variant can replace the model's attention (``attend=``).
    swappable: ClassVar[bool] = False

    def resolve(self, options: dict) -> dict:
        """Defaults filled in; unknown options and values outside their limits refused.

        A swappable card also takes ``attend`` (a variant name from
        ``engine.variants.registry``; None or "exact" for the model's own attention) and
        ``attend_hp`` (that variant's parameters, checked when the function is built).
        """
        options = dict(options)
        swap = {}
        if self.swappable:
            attend, hp = options.pop("attend", None), options.pop("attend_hp", None)
            if attend not in (None, "exact"):
                # an unknown name is refused here, naming the known ones
                importlib.import_module(VARIANTS).get(attend)
                swap = {"attend": attend, "attend_hp": dict(hp or {})}
        known = {p.name: p for p in self.options}
        unknown = sorted(set(options) - set(known))
        if unknown:
            extra = ["attend", "attend_hp"] if self.swappable else []
            raise InputError(
                "card.no_option",
                name=self.name,
                unknown=", ".join(unknown),
                known=", ".join([*known, *extra]) or "none",
            )
        return {n: p.check(options.get(n, p.default)) for n, p in known.items()} | swap

    # True when the model's work is long enough to be stopped and followed (``run=``)
    takes_run: ClassVar[bool] = False

    def trace(
        self, input: Any, *, model: Any = None, loader=None, run: Run | None = None, **options
    ) -> Trace:
        """Run the model; ``outputs["warning"]`` says plainly when the answer is not to be
        trusted (input far from the model's data), so no page presents it as an answer.

        This is the one place an input's limits are checked, before anything loads: a
        caller that keeps its models passes ``loader`` (called only once the input and
        options are accepted) or an already loaded ``model``. ``run`` (:mod:`engine.run`)
        stops a long call (a card that ``takes_run``) between two of its units of work, and
        a caller's ``should_stop`` that counts its calls is a progress bar; a card whose
        trace takes milliseconds runs it through.
        """
        self.check(input)  # every input, not only text: None or a list is refused here too
        resolved = self.resolve(options)
        if model is None:
            model = loader() if loader is not None else self.load()
        if self.takes_run:
            resolved["run"] = run
        trace = self._trace(model, input, **resolved)
        warning = self.assess(trace)
        if warning:
            trace.outputs["warning"] = warning
        return trace

    def attention_inputs(
        self, input: Any, *, model: Any = None, layer: int = 0, head: int | None = None
    ) -> tuple:
        """Per-head q, k, v ``[1, H, n, d]`` that self-attention ``layer`` computes from
        ``input`` (``head``: that head alone, H = 1) and the tokens: what a variant swapped
        into that layer receives. A card whose model takes variants states them."""
        raise InputError("card.no_attention_inputs", name=self.name)

    def assess(self, trace: Trace) -> str | None:
        """Why this answer should not be read as one, or None when nothing is off."""
        return None

    # True when traces carry target × source alignments (translation models with attention)
    aligns: ClassVar[bool] = False

    def alignments(self, trace: Trace) -> dict[str, Alignment]:
        """Target × source alignments in ``trace`` (translation models), else empty."""
        return {}

    def forced_alignments(
        self, source, target, *, model: Any = None, **options
    ) -> dict[str, Alignment]:
        """Alignments with ``target`` fed in instead of the model's own output; ``options``
        as for :meth:`trace` where they change the attention (``attend=``)."""
        return {}

    def sort_key(self) -> tuple:
        return (0, self.name)

    def describe(self) -> dict:
        """Everything a page or a CLI lists about the card, as plain data."""
        return {
            "name": self.name,
            "family": self.family,
            "title": self.title,
            "paper": self.paper,
            "task": self.task,
            "variant": self.variant,
            "limits": self.limits.describe(),
            "options": {p.name: p.default for p in self.options},
            "examples": [e.label for e in self.examples],
            "train": self.train_command,
            "evaluate": self.evaluate_command,
            "default": self.is_default,
            "measured": self.results() is not None,
        }
