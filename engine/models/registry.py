"""Model cards: one entry per shipped checkpoint and per allowed pretrained directory.

Every model the studio can run answers through one card::

    card = registry.get("nmt-enfr-additive")
    trace = card.trace("the agreement was signed .", beam=5)   # -> Trace
    registry.default("en-fr")                          # the card that serves a task
    registry.default("en-fr", family="transformer")
    registry.for_babi_task(3)                          # the MemN2N checkpoint for task 3
    registry.cell("mqar-256-mamba-s0").trace("0")      # a variant-grid cell (not listed)
    registry.get(registry.directory("/models/gpt2"))   # a directory the user typed

A card states what the model is (family, paper, task), what it accepts (limits,
options, curated examples), how well it does (its evaluation JSON, or None when not
measured; the evaluate command writes the file the card names in ``result_name``) and
how to reproduce it (the train and evaluate commands). Checkpoints are
discovered from ``assets/checkpoints/*.json`` (each names its ``family``), so a newly
trained checkpoint appears in the app with no page edit; a family is one module in
``engine/models/cards/`` plus one line in :func:`_families`. Which checkpoint serves a
task by default is the family's to say (``ModelCard.default_variant``). Discovery reads
the JSON alone; a card imports its model module (``ModelCard.runtime_module``) on its
first load or trace, so listing every card costs no torch import.

Nothing here caches a model: :meth:`ModelCard.load` builds one and the caller keeps it
(the app in ``st.cache_resource``, a CLI in a local variable) and hands it back to
:meth:`ModelCard.trace` as ``model=``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from engine import checkpoints
from engine.errors import InputError
from engine.models import model_dirs
from engine.models.card import Alignment, Example, Limits, ModelCard
from engine.models.cards import induction, memn2n, nmt, pretrained, transformer, variant_cell

__all__ = [
    "ALLOWLIST_ENV",
    "CHAT",
    "MINILM",
    "Alignment",
    "Example",
    "Limits",
    "ModelCard",
    "by_family",
    "by_task",
    "cards",
    "cell",
    "chat",
    "default",
    "directory",
    "for_babi_task",
    "get",
    "names",
]

log = logging.getLogger(__name__)

CHAT = pretrained.CHAT_CARD  # the chat model's card: the Chat page's and the batch server's
MINILM = pretrained.MINILM_CARD  # MiniLM's card: the Transformer page's and retrieval's
ALLOWLIST_ENV = model_dirs.ALLOWLIST_ENV  # the variable naming the model directories allowed


def _families() -> dict[str, type[ModelCard]]:
    trained = (nmt.NMTCard, transformer.TransformerCard, memn2n.MemN2NCard, induction.InductionCard)
    trained += (variant_cell.VariantCellCard,)  # discovered one at a time: see cell()
    return {c.family: c for c in trained} | {
        pretrained.PretrainedCard.family: pretrained.PretrainedCard
    }


def _discover(directory: Path) -> list[ModelCard]:
    found = []
    for meta_path in sorted(directory.glob("*.json")):
        card = _read(meta_path)
        if card is not None:
            found.append(card)
    return found


def _read(meta_path: Path) -> ModelCard | None:
    """The card of one checkpoint's JSON; None for an evaluation result, a timeline, or a
    file that cannot be a card (logged)."""
    try:
        if not meta_path.with_suffix(".safetensors").exists() or checkpoints.is_timeline(meta_path):
            return None  # an evaluation result or a training timeline, not a checkpoint
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError):
        log.warning("skipping unreadable checkpoint metadata %s", meta_path)
        return None
    family = meta.get("family") if isinstance(meta, dict) else None
    cls = _families().get(family)
    if cls is None:
        log.warning("skipping %s: unknown family %r", meta_path, family)
        return None
    return cls(meta_path.stem, meta, meta_path.parent)


def cards(directory: Path | None = None) -> list[ModelCard]:
    """Every model: shipped checkpoints (by family, then name), then pretrained models."""
    order = list(_families())
    where = Path(directory) if directory else checkpoints.CHECKPOINT_DIR
    # The induction toy's checkpoints sit in a folder of their own (its timelines beside them)
    shipped = _discover(where) + _discover(induction.folder(where))

    shipped.sort(key=lambda c: (order.index(c.family), c.sort_key()))
    return shipped + pretrained.pretrained_cards()


def get(name: str, directory: Path | None = None) -> ModelCard:
    """The card named ``name``: a listed model, a model directory the user typed (a name
    from :func:`directory`), else a trained cell of the variant grid."""
    if isinstance(name, str) and name.startswith(pretrained.DIRECTORY):
        # checked against the allowlist on every call, so a card obeys a changed list
        return pretrained.directory_card(name.removeprefix(pretrained.DIRECTORY))
    for card in cards(directory):
        if card.name == name:
            return card
    try:
        return cell(name, directory)
    except InputError:
        raise InputError(
            "card.unknown_model", name=name, known=", ".join(names(directory))
        ) from None


def chat() -> ModelCard:
    """The chat model's card even before ``scripts/setup.sh`` converted it (:func:`get`
    lists it only once converted): its ``load()`` then says which command to run."""
    return pretrained.chat_card()


def directory(path: str) -> str:
    """The card name of a model directory the user typed; :func:`get` checks the path
    (allowlist, files) and says in an InputError what is wrong."""
    return pretrained.DIRECTORY + path


def cell(name: str, directory: Path | None = None) -> ModelCard:
    """One trained cell of the variant-quality grid (``<task>-<variant>-s<seed>``), read
    from its own JSON: the grid's hundreds of cells are not listed by :func:`cards`."""
    where = variant_cell.folder(Path(directory) if directory else None)
    found = _read(where / f"{name}.json") if _plain(name) else None
    if found is None or found.family != variant_cell.VariantCellCard.family:
        raise InputError("card.unknown_cell", name=name, folder=str(where))
    return found


def _plain(name) -> bool:
    """A checkpoint's name, not a path: it cannot reach out of the folder it is read from."""
    if not isinstance(name, str) or "\0" in name or len(name) > 200:
        return False
    return name == Path(name).name and name not in ("", ".", "..")


def names(directory: Path | None = None) -> list[str]:
    return [c.name for c in cards(directory)]


def by_task(task: str, directory: Path | None = None) -> list[ModelCard]:
    return [c for c in cards(directory) if c.task == task]


def by_family(family: str, directory: Path | None = None) -> list[ModelCard]:
    return [c for c in cards(directory) if c.family == family]


def default(
    task: str,
    family: str | None = None,
    *,
    variant: str | None = None,
    directory: Path | None = None,
) -> ModelCard:
    """The card that serves ``task`` when no checkpoint is named.

    ``family`` narrows the choice (``default("en-fr", family="transformer")``); ``variant``
    asks for one sibling (``variant="learned"``). Otherwise the family's
    ``default_variant``, the first family in registry order winning; a family that names
    none (pretrained) serves with its first card.
    """
    found = [
        c
        for c in cards(directory)
        if c.task == task and family in (None, c.family) and variant in (None, c.variant)
    ]
    if not found:
        wanted = " ".join(x for x in (family, task, variant) if x)
        raise InputError("card.unknown_model", name=wanted, known=", ".join(names(directory)))
    return next((c for c in found if variant or c.is_default), found[0])


def for_babi_task(babi_task: int, directory: Path | None = None) -> ModelCard:
    """The MemN2N card that answers bAbI task ``babi_task`` (``MemN2NCard.best_for``)."""
    return get(memn2n.MemN2NCard.best_for(babi_task, directory), directory)
