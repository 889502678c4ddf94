"""Bahdanau RNNsearch (and the RNNencdec baseline) checkpoints as model cards."""

from __future__ import annotations

from engine import checkpoints
from engine.models.registry import Alignment, Example, Limits, ModelCard
from engine.variants.base import Param

SCORING_TITLES = {
    "additive": "additive scoring (Bahdanau)",
    "dot": "dot scoring (Luong)",
    "general": "general scoring (Luong)",
    "concat": "concat scoring (Luong)",
    "none": "no attention (RNNencdec baseline)",
}
DATE_EXAMPLES = (
    "Tuesday, 3 May 1979",
    "03/05/79",
    "May 3rd 1979",
    "3 mai 1979",
    "the 21st of December, 2012",
)
END = "</s>"
EMPTY = "Type a sentence (or a date) to translate."
UNKNOWN_SHARE = 1 / 3  # above this, the output says more about <unk> than about the input


def translation_warning(card, trace) -> str | None:
    """Unknown words, confidence below the model's measured floor, or an impossible date."""
    import datetime as dt

    from engine.evaluation.confidence import RESULT, per_token_log_prob

    src, unknown = trace.inputs["tokens"], trace.outputs.get("unknown", [])
    if len(unknown) > UNKNOWN_SHARE * len(src):
        words = ", ".join(f"“{w}”" for w in unknown[:8])
        return (
            f"{len(unknown)} of {len(src)} words are not in this model's vocabulary ({words}). "
            "It only knows the words of the grammar it was trained on, so the output below "
            "is not a translation of your sentence. Try one of the examples."
        )
    if card.task == "dates":
        try:
            dt.date.fromisoformat(trace.outputs["translation"])
        except ValueError:
            return (
                f"“{trace.outputs['translation']}” is not a calendar date: the model could not "
                "read a date in this input. It reads dates such as “3 May 1979” or “03/05/79”."
            )
    floor = (checkpoints.load_result(RESULT) or {}).get(card.name, {}).get("floor")
    confidence = per_token_log_prob(trace)
    if floor is not None and confidence < floor:
        what = "a date it can read" if card.task == "dates" else "a sentence of its grammar"
        return (
            f"This input is not {what}: the model's confidence ({confidence:.2f} log-probability "
            f"per token) is below the lowest 1% it shows on inputs like its training data "
            f"({floor:.2f}). Read the output as a guess, not as an answer."
        )
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
        return "dates → ISO 8601" if self.task == "dates" else "English → French"

    @property
    def examples(self) -> tuple[Example, ...]:
        from engine.data import enfr

        if self.task == "dates":
            return tuple(Example(d, d) for d in DATE_EXAMPLES)
        return tuple(Example(k, enfr.detokenize_en(p.src)) for k, p in enfr.EXAMPLES.items())

    def assess(self, trace) -> str | None:
        return translation_warning(self, trace)


class NMTCard(TranslationCard):
    family = "nmt"
    paper = "Bahdanau, Cho & Bengio 2014 (RNNsearch); Luong et al. 2015 (scorings)"
    options = (Param("beam", "Beam width", 5, 1, 10, help="1 = greedy decoding"),)

    @property
    def variant(self) -> str:
        return self.meta["config"]["scoring"]

    @property
    def title(self) -> str:
        return f"RNNsearch · {SCORING_TITLES.get(self.variant, self.variant)} · {self.direction}"

    @property
    def limits(self) -> Limits:
        from engine.data import dates, enfr

        if self.task == "dates":
            return Limits(max_chars=dates.MAX_CHARS, empty=EMPTY)
        return Limits(
            max_chars=2_000, max_tokens=enfr.MAX_LEN, token_unit="words and marks", empty=EMPTY
        )

    @property
    def evaluate_command(self) -> str:
        beam = " --beam 5" if self.task == "en-fr" else ""
        return f"python -m engine.evaluate nmt --task {self.task}{beam} --save"

    def results(self) -> dict | None:
        """``nmt-eval-<task>.json``: the default model at the top, the others under ``models``."""
        saved = checkpoints.load_result(f"nmt-eval-{self.task}")
        if saved is None:
            return None
        if saved.get("model") == self.name:
            return {k: v for k, v in saved.items() if k != "models"}
        return saved.get("models", {}).get(self.name)

    def load(self):
        from engine.models.bahdanau import Translator

        return Translator.load(self.name, self.directory)

    def _trace(self, model, input, *, beam: int):
        return model.translate(input, beam=beam)

    def alignments(self, trace) -> dict[str, Alignment]:
        amap = trace.maps.get("alignment")
        if amap is None:
            return {}
        return {"α": _alignment("α", amap.weights[0, 0], amap.query_labels, amap.key_labels)}

    @property
    def aligns(self) -> bool:
        return self.variant != "none"  # the RNNencdec baseline has no attention to show

    def forced_alignments(self, source, target, *, model=None, **options) -> dict[str, Alignment]:
        alpha = (model or self.load()).align(list(source), list(target))
        return {} if alpha is None else {"α": _alignment("α", alpha, target, source)}
