"""Every page's URL parameters, declared once: what a link to the page may say.

``PAGES[url]`` is one page's table, parameter id → its kind and outer limits. The page's
URL widgets read it (``kit.url``: a link's value is parsed here before the widget sees it,
and a widget that offers a choice or a range the table does not declare is a mistake in
the page, raised as :class:`Undeclared`), and a lesson deck's views are checked against
the same table (``kit.decks.parse_view``), so a link a deck accepts is one its page opens.

A table's limits are the widest any widget of the page offers; a widget may narrow them
to what its model has (a model with 6 layers offers layers 0–5 of the table's 0–29).
No Streamlit and no engine here: decks, tests and CLIs read the tables alike.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,40}$")
# A model's display name or a press task: letters, digits and . _ @ - (no spaces).
ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,79}$")
LINK_PARAMS = ("lang", "present", "predict")  # the studio's, on every page


class Undeclared(RuntimeError):
    """A page's widget uses a parameter, a choice or a range its table does not declare."""


@dataclass(frozen=True)
class Int:
    lo: int
    hi: int

    def parse(self, raw: str) -> int:
        if not re.fullmatch(r"-?\d{1,12}", raw.strip()) or not self.lo <= int(raw) <= self.hi:
            raise ValueError(f"a whole number from {self.lo} to {self.hi}")
        return int(raw)

    def covers(self, lo, hi) -> bool:
        return self.lo <= lo and hi <= self.hi


@dataclass(frozen=True)
class Num:
    lo: float
    hi: float

    def parse(self, raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and self.lo <= value <= self.hi):
            raise ValueError(f"a number from {self.lo:g} to {self.hi:g}")
        return value

    def covers(self, lo, hi) -> bool:
        return self.lo <= lo and hi <= self.hi


@dataclass(frozen=True)
class OneOf:
    ids: tuple[str, ...]

    def parse(self, raw: str) -> str:
        if raw not in self.ids:
            raise ValueError("one of " + ", ".join(self.ids))
        return raw


@dataclass(frozen=True)
class Text:
    """Text up to ``limit`` characters; empty is a value too (the page then says what to
    type), but not in a deck, whose views state what they show (kit.decks)."""

    limit: int

    def parse(self, raw: str) -> str:
        if len(raw) > self.limit:
            raise ValueError(f"text of at most {self.limit:,} characters")
        return raw


@dataclass(frozen=True)
class Pattern:
    """One name (``NAME``: a model or variant as ``python -m engine.models`` lists them)
    or, with ``many``, names separated by commas; ``ID`` for display names and tasks."""

    regex: re.Pattern = NAME
    many: bool = False
    what: str = "a model name as `python -m engine.models` lists them"

    def parse(self, raw: str):
        parts = raw.split(",") if self.many else [raw]
        if not all(self.regex.match(p) for p in parts):
            raise ValueError(self.what)
        return parts if self.many else raw


@dataclass(frozen=True)
class Ints:
    """Whole numbers separated by commas, each within ``lo``–``hi`` (``0,1,4``)."""

    lo: int
    hi: int

    def parse(self, raw: str) -> list[int]:
        parts = [p for p in raw.split(",") if p.strip()]
        if len(parts) > 64 or not all(re.fullmatch(r"-?\d{1,12}", p.strip()) for p in parts):
            raise ValueError(f"whole numbers separated by commas, from {self.lo} to {self.hi}")
        values = [int(p) for p in parts]
        if not all(self.lo <= v <= self.hi for v in values):
            raise ValueError(f"whole numbers separated by commas, from {self.lo} to {self.hi}")
        return values


def one_of(*ids) -> OneOf:
    return OneOf(tuple(map(str, ids)))


FLAG = one_of("0", "1", "true", "false", "on", "off", "yes", "no")
NAMES = Pattern(NAME, True, "names separated by commas, e.g. full,longformer,performer")
MODEL = Pattern()
LABEL = Pattern(ID, False, "a name of letters, digits, '.', '_', '@' or '-'")
ATTEND = Pattern(NAME, False, "exact, or a variant's name as the Variants lab lists it")
# A view's knobs away from their defaults (kit.knobs): "longformer.window:32,beam:4".
KNOB = re.compile(r"^[a-z][a-z0-9_-]{0,40}(\.[a-z][a-z0-9_]{0,40})?:[A-Za-z0-9_.+-]{1,40}$")
KNOBS = Pattern(KNOB, True, "name:value pairs separated by commas, e.g. longformer.window:32")
STEP = Int(0, 10**9)  # a training step of a shipped timeline
SECTION = "section"


@dataclass(frozen=True)
class Page:
    """One page's parameters; ``required``: what a deck's view of it must state;
    ``predict``: the kind of answer a step on it may ask the class to predict."""

    params: dict
    required: tuple[str, ...] = ()
    predict: type | None = None
    sections: tuple[str, ...] = field(default=())

    def __post_init__(self):
        if self.sections:
            self.params[SECTION] = OneOf(self.sections)


TEXT = Text(2000)
STORY = Text(20_000)
LAYER = Int(0, 29)  # the chat model's 30 layers are the most any page shows
HEAD = Int(0, 15)

PAGES: dict[str, Page] = {
    "home": Page({}),
    "basics": Page(
        {
            "text": TEXT,
            "d_model": one_of(16, 32, 64, 128, 256, 512),
            "heads": Int(1, 16),
            "head": HEAD,
            "seed": Int(0, 10_000),
            "step": Int(0, 99),
        }
    ),
    "positional": Page(
        {"k": Int(-100_000, 100_000), "d_model": Int(2, 1024), "length": Int(1, 2048)}
        | {"dims": Ints(0, 1023)},
        sections=("curves", "table", "similarity", "rotation", "learned"),
    ),
    "alignment": Page(
        {
            "task": one_of("en-fr", "dates"),
            "model": MODEL,
            "text": TEXT,
            "beam": Int(1, 10),
            "compare": one_of("scoring", "beams"),
            "seed": Int(0, 999),
            "step": Int(1, 2000),
            "tstep": STEP,
            "probe": Int(0, 99),
            "find": Text(40),  # the vocabulary's search
            "part": one_of(
                *("all", "thing", "person", "verb", "adjective", "name", "city", "number"),
                *("month", "word"),
            ),
        },
        required=("model", "text"),
        predict=str,
        sections=(
            *("alignment", "steps", "side-by-side", "head-view", "faithfulness", "measured"),
            *("vocabulary", "training", "live"),
        ),
    ),
    "memory": Page(
        {
            "model": MODEL,
            "task": Int(1, 20),
            "story": Int(0, 199),
            "text": STORY,
            "question": Text(300),
            "own": one_of(0, 1),
            "colour": one_of("task", "entity"),
            "probe": Int(0, 999),
            "step": STEP,
            "hop": Int(1, 3),
        },
        predict=int,
        sections=("hops", "map", "training", "faithfulness"),
    ),
    "transformer": Page(
        {
            "family": one_of("ours", "pretrained"),
            "model": Text(255),  # a trained model's name, or a model folder's (any name)
            "example": Int(0, 99),
            "text": TEXT,
            "new": Int(0, 64),
            "attention": one_of("cross", "encoder_self", "decoder_self"),
            "reading": one_of("heads", "mean", "rollout"),
            "layer": LAYER,
            "head": HEAD,
            "view": one_of("head", "model"),
            "query": Int(0, 4095),
            "colour": one_of("position", "token"),
            "probe": Int(0, 999),
            "step": STEP,
            "mode": one_of("zero", "mean"),
            "read": Int(0, 4095),
            "merge": FLAG,
            "hide": FLAG,
        },
        required=("model", "text"),
        predict=str,
        sections=("grid", "bertviz", "neuron", "qk", "training", "causal"),
    ),
    "chat": Page(
        {
            "text": TEXT,
            "template": FLAG,
            # The chat card's sampling options, as its Params state them (a test holds
            # them equal): a deck's link to a value the page would refuse is refused too.
            "tokens": Int(1, 64),
            "sampling": one_of("greedy", "sample"),
            "seed": Int(0, 2**31 - 1),
            "temperature": Num(0.05, 2.0),  # sampling's lowest; greedy is sampling=greedy
            "top_k": Int(0, 200),
            "top_p": Num(0.01, 1.0),
            "token": Int(1, 64),
            "layer": LAYER,
            "first": Int(1, 4),
            "measure": one_of("mass_first", "local_width", "entropy"),
            "kind": one_of("previous", "duplicate", "induction", "retrieval"),
            "pick": LABEL,
            "policy": one_of("full", "window", "sinks", "h2o"),
            "window": Int(1, 4096),
            "sinks": Int(1, 16),
            "budget": Int(1, 4096),
            "ptask": LABEL,
            "press": LABEL,
            "ratio": Num(0.0, 1.0),
            "pseed": Int(0, 999),
            "ask": one_of(1),
            "ctask": LABEL,  # a task of the press sweep, "niah_number@1024"
            "n": Int(64, 2048),
            "budgets": Ints(1, 4096),
            "metric": one_of("ppl", "agreement", "kl"),
            "vn": Int(8, 1024),
            "variants": NAMES,
            "layers": Ints(0, 29),
            "check": one_of("lens", "ablate", "patch", "faithful"),
            "sweep": one_of("heads", "residual"),
            "lstep": Int(1, 4096),  # the eviction ledger's decoding step
            "hide": FLAG,
            "mode": one_of("zero", "mean"),
            "clean": TEXT,
            "corrupted": TEXT,
            "answer": Text(80),
            "wrong": Text(80),
            "written": Int(0, 4095),
            "read_layer": LAYER,
            # The IOI lesson's heads, "22.7,24.4" (layer.head): a lesson draws their
            # patterns beside the shipped IOI patching; the page patches the pair live.
            "heads": Pattern(re.compile(r"^\d{1,2}\.\d{1,2}$"), True, "layer.head pairs"),
        },
        required=(SECTION,),
        predict=str,
        sections=("timeline", "sinks", "cache", "presses", "heads", "variants", "causal"),
    ),
    "retrieval": Page(
        {
            "store": one_of("babi", "own", "text"),
            "task": Int(1, 20),
            "story": Int(0, 199),
            "text": STORY,
            "question": Text(300),
            "k": Int(1, 10),
            "floor": Num(-1.0, 1.0),
            "context": one_of("retrieved", "story", "none"),
            "tokens": Int(1, 32),
            "layer": Pattern(re.compile(r"^(mean|\d{1,2})$"), False, "mean or a layer"),
            "head": Pattern(re.compile(r"^(mean|\d{1,2})$"), False, "mean or a head"),
            "share": FLAG,
        },
        required=(SECTION,),
        predict=str,
        sections=("addressing", "reading", "side-by-side", "faithfulness", "measured"),
    ),
    "learning": Page(
        {"step": STEP, "seed": Int(0, 999), "layers": one_of(2, 1), "text": Text(200)},
        sections=("maps", "curves", "own", "live"),
    ),
    "compare": Page(
        {
            "task": LABEL,
            "a": MODEL,
            "b": MODEL,
            "a_attend": ATTEND,
            "b_attend": ATTEND,
            "a_hp": KNOBS,
            "b_hp": KNOBS,
            "a_head": Text(80),
            "b_head": Text(80),
            "head": Text(80),
            "mode": one_of("every", "two"),
            "example": Int(0, 99),
            "text": TEXT,
        }
    ),
    "variants": Page(
        {
            "variants": NAMES,
            "hp": KNOBS,
            "text": TEXT,
            "head": HEAD,
            "n": Int(8, 32768),
            "source": one_of("minilm", "synthetic", "text", "trained", "npz"),
            "causal": FLAG,
            "structure": one_of("random", "local", "clustered", "global"),
            "sharpness": Num(0.1, 8.0),
            "seed": Int(0, 9999),
            "heads": Int(1, 8),
            "d": Int(8, 128),
            "layer": Int(0, 11),
            "qhead": Int(0, 11),
            "view": one_of("maps", "difference", "overlay"),
            "task": LABEL,
            "cost": one_of("ms_per_step", "flops"),
            "curves": MODEL,
            "lines": NAMES,  # the training curves drawn beside the maps
            "query": Int(0, 4095),
            "step": STEP,
            "pool": one_of("mean", "max"),
            "bias": Num(0.0, 50.0),
            "block": Int(1, 1024),
            "lengths": Ints(64, 32768),
            "time": Int(5, 120),
            "memory": Num(0.25, 4.0),
        },
        required=(SECTION,),
        sections=("compare", "quality", "swap", "profile", "long", "kv", "int8"),
    ),
    "lessons": Page({"deck": MODEL, "step": Int(1, 40), "hop": Int(1, 3)}),
}


def declared(page: str, param: str):
    """The spec of ``?param=`` on ``page``; None for the studio's own (``lang`` …)."""
    if param in LINK_PARAMS:
        return None
    spec = PAGES[page].params.get(param)
    if spec is None:
        raise Undeclared(f"the {page} page uses ?{param}= but kit.params does not declare it")
    return spec
