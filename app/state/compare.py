"""The Compare page's calls: every model's alignments of one input, on axes chosen to match.

A model's own alignment is used when its translation is the one on the axes (the gold
translation when the grammar gives one); otherwise its alignment is read with that
translation fed in (forced). Each Panel says which.
"""

from __future__ import annotations

from dataclasses import dataclass

from kit.i18n import t

from engine.models.registry import Alignment, ModelCard
from engine.variants import get, names
from state import models
from state.alignments import VersusGold, gold_pair, versus_gold


@dataclass(frozen=True)
class Panel:
    name: str
    label: str  # "α" for RNNsearch, "L1 H3" for a Transformer's cross-attention head
    alignment: Alignment  # rows: target words on the shared axes, columns: source words
    forced: bool  # True: read with the axes' translation fed in, not the model's own
    translation: str  # what the model itself produced
    scored: VersusGold | None  # against the gold links, when the grammar gives them
    trace: object = None  # the model's own Trace (what "Download this view" exports)

    @property
    def reading(self) -> str:
        return t("state.forced_alignment" if self.forced else "state.own_translation")

    def drawn(self, title: str) -> dict:
        """What an alignment figure takes: the map, its axes, a title, the gold links."""
        a, gold = self.alignment, self.scored.pair if self.scored else None
        links = dict(sure=gold.sure, possible=gold.possible) if gold else {}
        return dict(weights=a.weights, src=a.source, tgt=a.target, title=title, **links)


def tasks() -> list[str]:
    """Tasks with a model that returns target × source alignments, most models first."""
    found = [c.task for c in models.cards().values() if c.aligns]
    return sorted(dict.fromkeys(found), key=lambda t: -found.count(t))


def variants() -> list[str]:
    """The attention variants a swappable model can run with (``attend=``)."""

    return names()


def variant(name: str):
    """The registry's variant ``name``: its title and the parameters it states."""
    return get(name)


def aligners(task: str) -> list[ModelCard]:
    """The task's models that return target × source alignments (translation models)."""
    return [c for c in models.by_task(task) if c.aligns]


def without_alignment(task: str) -> list[ModelCard]:
    """The task's models with no attention to align (the RNNencdec baseline)."""
    return [c for c in models.by_task(task) if not c.aligns]


def panels(
    name: str, text: str, options: dict | None = None, *, target: tuple[str, ...] | None = None
) -> dict[str, Panel]:
    """One Panel per alignment the model returns (one per head), all on the same axes.

    Axes: the gold translation when the grammar gives one, else ``target``, else the
    model's own translation.
    """
    card = models.card(name)
    # A default value said out loud is the same trace: one cache entry, not two (the
    # "Two models" view names every option; "Every model" names none).
    defaults = {p.name: p.default for p in card.options}
    options = {k: v for k, v in (options or {}).items() if defaults.get(k, object()) != v}
    trace = models.trace(name, text, **options)
    own = card.alignments(trace)
    if not own:
        return {}
    first = next(iter(own.values()))
    pair = gold_pair(first.source)
    source = pair.src if pair else first.source
    target = pair.tgt if pair else tuple(target) if target else first.target
    forced = (first.source, first.target) != (tuple(source), tuple(target))
    on_axes = (
        models.forced_alignments(name, tuple(source), tuple(target), **options) if forced else own
    )
    return {
        label: Panel(
            name,
            label,
            a,
            forced,
            trace.outputs["translation"],
            versus_gold(a.weights, pair, forced=forced) if pair else None,
            trace,
        )
        for label, a in on_axes.items()
    }


def best(found: dict[str, Panel]) -> Panel:
    """The head that agrees most with the gold links (the first when there are none)."""
    scored = [p for p in found.values() if p.scored is not None]
    return min(scored, key=lambda p: p.scored.aer) if scored else next(iter(found.values()))
