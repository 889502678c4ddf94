"""Bahdanau RNNsearch (and the RNNencdec baseline) checkpoints as model cards."""

from __future__ import annotations

import datetime as dt
import importlib
from typing import ClassVar

from engine import checkpoints
from engine.data import dates, enfr
from engine.messages import Message
from engine.models.card import Alignment, Example, Limits, ModelCard, forced_tokens
from engine.params import Param

SCORING_TITLES = {
    s: Message(f"card.scoring.{s}") for s in ("additive", "dot", "general", "concat", "none")
}
DATE_EXAMPLES = (
    "Tuesday, 3 May 1979",
    "03/05/79",
    "May 3rd 1979",
    "3 mai 1979",
    "the 21st of December, 2012",
)
END = "</s>"
EMPTY = Message("card.nmt.empty")
UNKNOWN_SHARE = 1 / 3  # above this, the output says more about <unk> than about the input
# Each translation model's confidence floor, measured by ``python -m engine.evaluate confidence``.
CONFIDENCE_RESULT = checkpoints.result_name("confidence")


def translation_warning(card, trace) -> str | None:
    """Unknown words, confidence below the model's measured floor, or an impossible date."""
    src, unknown = trace.inputs["tokens"], trace.outputs.get("unknown", [])
    if len(unknown) > UNKNOWN_SHARE * len(src):
        words = ", ".join(f"“{w}”" for w in unknown[:8])
        return Message("warn.unknown_words", n=len(unknown), total=len(src), words=words)
    if card.task == "dates":
        try:
            dt.date.fromisoformat(trace.outputs["translation"])
        except ValueError:
            return Message("warn.not_a_date", output=trace.outputs["translation"])
    floor = card.confidence_floor
    confidence = trace.outputs["log_prob_per_token"]
    if floor is not None and confidence < floor:
        what = Message("warn.what.date" if card.task == "dates" else "warn.what.sentence")
        return Message("warn.low_confidence", what=what, confidence=confidence, floor=floor)
    return None


def _alignment(label: str, alpha, target, source) -> Alignment:
    rows = [i for i, t in enumerate(target) if t != END]
    return Alignment(label, alpha[rows], tuple(target[i] for i in rows), tuple(source))


class TranslationCard(ModelCard):
    """What the two translation families share: the task, its examples, the warning."""

    @property
    def task(self) -> str:
        return self.meta["task"]

    @property
    def direction(self) -> str:
        return Message("card.direction.dates" if self.task == "dates" else "card.direction.en_fr")

    @property
    def examples(self) -> tuple[Example, ...]:
        if self.task == "dates":
            return tuple(Example(d, d) for d in DATE_EXAMPLES)
        names = {
            "Figure 3(a)": "figure_3a",
            "negation": "negation",
            "long sentence": "long_sentence",
        }
        return tuple(
            Example(Message(f"example.{names[k]}") if k in names else k, enfr.detokenize_en(p.src))
            for k, p in enfr.EXAMPLES.items()
        )

    confidence_result: ClassVar[str] = CONFIDENCE_RESULT

    @property
    def confidence_floor(self) -> float | None:
        """The 1st percentile of this model's per-token log-probability on held-out grammar
        inputs; below it, an answer is flagged. None when not measured."""
        saved = checkpoints.load_result(self.confidence_result, self.directory) or {}
        return saved.get(self.name, {}).get("floor")

    def assess(self, trace) -> str | None:
        return translation_warning(self, trace)


class NMTCard(TranslationCard):
    family = "nmt"
    runtime_module = "engine.models.bahdanau"
    paper = "Bahdanau, Cho & Bengio 2014 (RNNsearch); Luong et al. 2015 (scorings)"
    options = (Param("beam", "Beam width", 5, 1, 10, help="1 = greedy decoding"),)
    default_variant = "additive"  # RNNsearch as Bahdanau et al. built it

    @property
    def variant(self) -> str:
        return self.meta["config"]["scoring"]

    @property
    def title(self) -> str:
        scoring = SCORING_TITLES.get(self.variant, self.variant)
        return Message("card.nmt.title", scoring=scoring, direction=self.direction)

    @property
    def limits(self) -> Limits:
        if self.task == "dates":
            return Limits(max_chars=dates.MAX_CHARS, empty=EMPTY)
        return Limits(
            max_chars=2_000,
            max_tokens=enfr.MAX_LEN,
            token_unit=Message("unit.words_and_marks"),
            empty=EMPTY,
        )

    @property
    def evaluate_command(self) -> str:
        beam = " --beam 5" if self.task == "en-fr" else ""
        return f"python -m engine.evaluate nmt --task {self.task}{beam} --save"

    @property
    def result_name(self) -> str:
        return checkpoints.result_name("nmt", self.task)

    def results(self) -> dict | None:
        """The task's default model at the top of its file, the others under ``models``."""
        saved = self.saved_results()
        if saved is None:
            return None
        if saved.get("model") == self.name:
            return {k: v for k, v in saved.items() if k != "models"}
        return saved.get("models", {}).get(self.name)

    def load(self):
        return self.runtime.RNNSearch.from_pretrained(self.name, self.directory)

    def _trace(self, model, input, *, beam: int):
        return model.translate(input, beam=beam)

    # Train it now: a tiny RNNsearch of the task's default model (additive scoring).
    @property
    def live_steps(self) -> int | None:
        return _training().LIVE[self.task]["steps"] if self.is_default else None

    def train_now(self, seed, steps=None, *, run=None):
        if not self.is_default:
            return super().train_now(seed, steps, run=run)
        return _training().live(self.task, seed, steps=steps, run=run).timeline

    def alignments(self, trace) -> dict[str, Alignment]:
        amap = trace.maps.get("alignment")
        if amap is None:
            return {}
        return {"α": _alignment("α", amap.weights[0, 0], amap.query_labels, amap.key_labels)}

    @property
    def aligns(self) -> bool:
        return self.variant != "none"  # the RNNencdec baseline has no attention to show

    def forced_alignments(self, source, target, *, model=None, **options) -> dict[str, Alignment]:
        source = forced_tokens(source, "source", self.name)
        alpha = (model or self.load()).align(source, forced_tokens(target, "target", self.name))
        return {} if alpha is None else {"α": _alignment("α", alpha, target, source)}


def _training():
    """NMT training (it imports torch: on the first live run, not before)."""
    return importlib.import_module("engine.training.nmt")
