"""The induction toy (Olsson et al. 2022) as model cards: the two-layer attention-only
Transformer that forms an induction head, and its one-layer control.

They live in their own folder (``assets/checkpoints/induction/``): the toy is studied
through its training timeline (the Learning page), and it reads token ids, not text. A
trace runs BOS and the typed ids (``"12 7 33 12 7"``) through the model: every head's map,
and the next token each position predicts.
"""

from __future__ import annotations

import importlib

from engine import checkpoints
from engine.messages import Message
from engine.models.card import Example, Limits, ModelCard

FOLDER = "induction"  # under the checkpoints folder
RESULT = checkpoints.result_name("induction")

# A block of ids, then the block again: the second copy is where an induction head
# attends to the token after the current token's earlier copy and predicts it.
REPEATED = "12 7 33 51 9 12 7 33 51 9 12 7"


class InductionCard(ModelCard):
    family = "induction"
    runtime_module = "engine.models.induction"
    paper = "Olsson et al. 2022; Elhage et al. 2021"
    default_variant = "2 layers"  # the model that forms the induction head

    @property
    def layers(self) -> int:
        return int(self.meta["config"]["n_layers"])

    @property
    def task(self) -> str:
        return "induction"

    @property
    def variant(self) -> str:
        return f"{self.layers} layers" if self.layers > 1 else "1 layer"

    @property
    def title(self) -> str:
        c = self.meta["config"]
        return Message("card.induction.title", layers=self.layers, heads=c["n_heads"])

    @property
    def limits(self) -> Limits:
        return Limits(
            max_chars=self.runtime.MAX_CHARS,
            max_tokens=self.meta["config"]["max_len"] - 1,  # BOS comes first
            token_unit=Message("unit.token_ids"),
            empty=Message("card.induction.empty", top=self.meta["config"]["vocab_size"] - 1),
        )

    @property
    def examples(self) -> tuple[Example, ...]:
        probe = " ".join(str(t) for t in self.meta["probe"][1:])
        return (
            Example(Message("example.repeated_block"), REPEATED),
            Example(Message("example.training_probe"), probe),
        )

    result_name = RESULT
    evaluate_command = "python -m engine.evaluate induction --save"

    def saved_results(self) -> dict | None:
        """The family's evaluation file, beside the other checkpoints' (one folder up)."""
        return checkpoints.load_result(RESULT, self._dir.parent)

    def results(self) -> dict | None:
        """What ``python -m engine.evaluate induction`` measured on this model's shipped
        weights and timeline: held-out loss, ICL score, the best heads, the phase change."""
        saved = self.saved_results()
        return None if saved is None else saved.get("models", {}).get(self.name)

    def sort_key(self) -> tuple:
        return (-self.layers, self.name)

    def load(self):
        return self.runtime.load(self.name, self._dir)

    @property
    def live_steps(self) -> int:
        return _training().LIVE_STEPS

    def train_now(self, seed, steps=None, *, run=None):
        return _training().live(self.layers, seed, steps=steps, run=run)

    def _trace(self, model, input):
        return self.runtime.trace(model, self.name, input)


def _training():
    """The toy's training module (it imports torch: on the first live run, not before)."""
    return importlib.import_module("engine.training.induction")


def folder(directory=None):
    """Where the toy's checkpoints are: their own folder beside the others."""
    return (directory or checkpoints.CHECKPOINT_DIR) / FOLDER
