"""Pretrained HuggingFace models (MiniLM always; others from allowed local directories)."""

from __future__ import annotations

from pathlib import Path

from engine.messages import Message
from engine.models.card import Example, Limits, ModelCard
from engine.params import Param

EXAMPLES = (
    Example(
        Message("example.coreference"),
        "The animal didn't cross the street because it was too tired.",
    ),
    Example(Message("example.agreement"), "The keys to the cabinet are on the table."),
    Example(Message("example.short"), "Attention is all you need."),
)


class PretrainedCard(ModelCard):
    family = "pretrained"
    paper = "Wang et al. 2020 (MiniLM); Vaswani et al. 2017"

    @property
    def swappable(self) -> bool:  # AttentionInterface dispatch: BERT-family encoders here
        return self.meta.get("arch") == "encoder"

    @property
    def path(self) -> Path:
        return Path(self.meta["path"])

    @property
    def task(self) -> str:
        return "sentence"

    @property
    def variant(self) -> str:
        return self.meta.get("arch", "")

    @property
    def title(self) -> str:
        return Message("card.pretrained.title", display=self.meta["display"])

    @property
    def options(self) -> tuple[Param, ...]:
        from engine.models.pretrained import MAX_NEW_TOKENS

        if self.meta.get("arch") == "encoder":
            return ()
        return (Param("max_new_tokens", "New tokens", 12, 0, MAX_NEW_TOKENS),)

    @property
    def limits(self) -> Limits:
        from engine.models.pretrained import MAX_CHARS, MAX_TOKENS

        return Limits(
            max_chars=MAX_CHARS,
            max_tokens=MAX_TOKENS,
            token_unit=Message("unit.subword_tokens"),
            empty=Message("text.empty"),
        )

    @property
    def examples(self) -> tuple[Example, ...]:
        return EXAMPLES

    @property
    def train_command(self) -> str | None:
        return None  # trained elsewhere; shipped read-only

    def load(self):
        from engine.models import pretrained

        return pretrained.load(self.path, self.meta["display"])

    def _trace(self, model, input, **options):
        from engine.models import pretrained

        return pretrained.trace(model, input, **options)


def pretrained_cards() -> list[PretrainedCard]:
    """MiniLM (packaged) first, then every model directory the operator allowed."""
    from engine.models import pretrained

    found = []
    for display, path in pretrained.list_models().items():
        name = "minilm" if display == pretrained.MINILM else f"hf:{display}"
        arch = "encoder" if display == pretrained.MINILM else _arch(path)
        found.append(PretrainedCard(name, {"path": str(path), "display": display, "arch": arch}))
    return found


def _arch(path: Path) -> str:
    import json
    from types import SimpleNamespace

    from engine.models.pretrained import architecture

    try:
        return architecture(SimpleNamespace(**json.loads((path / "config.json").read_text())))
    except (OSError, ValueError, TypeError):
        return ""
