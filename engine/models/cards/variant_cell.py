"""The variant-quality grid's trained cells as model cards: a small Transformer trained on a
long-range task (associative recall, copying) with one attention variant in every layer,
one checkpoint per task × variant × seed (``python -m engine.train variants``).

They live in their own folder (``assets/checkpoints/variants/``), and the registry does
not list them with the other models: the grid is hundreds of checkpoints, which the
Variants page reads through its results. ``registry.cell(name)`` (or ``registry.get``)
finds one. A trace runs one of the cell's held-out probe examples, by its number (0 is
the one its training timeline shows): every layer's map as the variant flags it, the
asked positions, the answers and the cell's predictions.
"""

from __future__ import annotations

from engine import checkpoints
from engine.errors import InputError
from engine.messages import Message
from engine.models.card import Example, Limits, ModelCard

FOLDER = "variants"  # under the checkpoints folder
RESULT = checkpoints.result_name("variants")  # the grid's score sheet, one folder up


class VariantCellCard(ModelCard):
    family = "variant-quality"
    runtime_module = "engine.models.variant_lm"
    paper = "Arora et al. 2024 (Zoology); Tay et al. 2021 (Long Range Arena)"

    @property
    def task(self) -> str:
        return self.meta["task"]

    @property
    def variant(self) -> str:
        return self.meta["variant"]

    @property
    def title(self) -> str:
        m = self.meta
        return Message(
            "card.variant_cell.title", variant=m["variant_title"], task=m["task"], seed=m["seed"]
        )

    @property
    def probes(self) -> int:
        """How many held-out probe examples a trace may run (the timeline's probe)."""
        return min(self.runtime.PROBE_SIZE, int(self.meta["test"]["size"]))

    @property
    def limits(self) -> Limits:
        return Limits(max_chars=8, empty=Message("card.variant_cell.empty", last=self.probes - 1))

    @property
    def examples(self) -> tuple[Example, ...]:
        return (Example(Message("example.timeline_probe"), "0"),)

    def check(self, input) -> None:
        """A probe example's number, 0 … probes − 1."""
        super().check(input)
        if not input.strip().isdigit() or int(input) >= self.probes:
            raise InputError("card.variant_cell.empty", last=self.probes - 1)

    result_name = RESULT
    evaluate_command = "python -m engine.evaluate variants --save"

    def saved_results(self) -> dict | None:
        """The grid's evaluation file, beside the other checkpoints' (one folder up)."""
        return checkpoints.load_result(RESULT, self._dir.parent)

    def results(self) -> dict | None:
        """The grid's row for this cell's variant and task: accuracy over its seeds."""
        saved = self.saved_results() or {}
        return saved.get("table", {}).get(self.variant, {}).get(self.task)

    def load(self):
        return self.runtime.load(self.name, self._dir)[0]

    def _trace(self, model, input):
        return self.runtime.trace(model, self.meta, self.name, int(input))


def folder(directory=None):
    """Where the grid's cells are: their own folder beside the other checkpoints."""
    return (directory or checkpoints.CHECKPOINT_DIR) / FOLDER
