"""What the causal tools share: one cached run of a decoder and a rerun of its upper layers.

Ablation (:mod:`engine.analysis.ablation`), activation patching
(:mod:`engine.analysis.patching`) and the logit lens (:mod:`engine.analysis.logit_lens`)
read and edit two activations, named as TransformerLens names them:

- ``resid_pre[l]``: the residual stream entering layer l, ``[T, d]`` (``resid_pre[L]`` is
  the stream leaving the last layer, before the final norm);
- ``z[l]``: every head's output at layer l, ``[T, H, d_head]``: the input of the layer's
  output projection W_O (``o_proj``), which concatenates them, so head h's slice is
  ``z[l][:, h]`` and its contribution to the stream is ``z[l][:, h] W_O[h]``.

They are read and edited by hooks on the HuggingFace model's own modules (a pre-forward
hook on each layer and on each ``o_proj``), installed once per model and idle unless the
calling thread has asked for them: a model shared by sessions, or by the batcher's thread,
runs unchanged. The head hooks fit any model with an output projection W_O
(:func:`install_heads`): MiniLM's and the project's Transformer's ablations use them too.

Everything below layer l is the same whatever is done at layer l or above, so an edit at
layer l reruns only layers l … L − 1 (:func:`run_from`) from the cached ``resid_pre[l]``,
for a batch of edited copies at once, with the mask and rotary embeddings of the first run.
Arithmetic is chosen once for a whole measurement (``precision.only``): a baseline and its
edited copies are computed alike, and a copy whose edit changes nothing gives the
baseline's logits bit for bit (tests/unit/test_causal.py).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from threading import Lock

import torch
from torch import nn

from engine.errors import InputError
from engine.models import chat as chat_model
from engine.models import precision

MAX_TOKENS = 64  # a sweep reruns the upper layers L·H times; 64 tokens keep it under ~1 min
ARITHMETIC = {"bfloat16": torch.bfloat16, "float32": torch.float32}

# What the calling thread asks of the hooks: None (idle), or a Probe.
_PROBE: ContextVar = ContextVar("attention_studio_causal_probe", default=None)
_INSTALLING = Lock()


@dataclass
class Probe:
    """Per call: record the residual stream and head outputs, and/or edit head outputs.

    Head outputs are keyed as their hooks were installed (:func:`install_heads`): the
    layer index for the chat model, ``(kind, layer)`` for an encoder–decoder.
    """

    record: bool = False
    resid: dict[int, torch.Tensor] = field(default_factory=dict)
    z: dict[Hashable, torch.Tensor] = field(default_factory=dict)
    layer_kwargs: dict | None = None
    # key → f(z [B, T, H, d_head]) -> z, applied to that output projection's input
    edits: dict[Hashable, Callable[[torch.Tensor], torch.Tensor]] = field(default_factory=dict)


@dataclass
class Run:
    """One cached forward pass (the TransformerLens ``ActivationCache`` of two names)."""

    ids: list[int]
    resid_pre: torch.Tensor  # (L + 1, T, d)
    z: torch.Tensor  # (L, T, H, d_head)
    logits: torch.Tensor  # (T, V), float32
    layer_kwargs: dict  # the mask, positions and rotary embeddings layer 0 was called with
    arithmetic: str


def _layers(chat) -> Sequence[torch.nn.Module]:
    return chat.model.model.layers


def install_heads(model: nn.Module, projections: dict[Hashable, nn.Module], n_heads: int):
    """Idle pre-forward hooks on each output projection W_O (its input: the heads'
    outputs side by side), once per model; they act only inside :func:`probing`."""
    with _INSTALLING:
        if getattr(model, "_causal_heads", False):
            return
        for key, projection in projections.items():
            projection.register_forward_pre_hook(_z_hook(key, n_heads))
        model._causal_heads = True


def install(chat) -> None:
    """The chat model's hooks: head outputs at each ``o_proj``, the residual stream
    entering each layer and the final norm."""
    layers = _layers(chat)
    install_heads(chat.model, {li: b.self_attn.o_proj for li, b in enumerate(layers)}, chat.n_heads)
    with _INSTALLING:
        if getattr(chat.model, "_causal_resid", False):
            return
        for li, layer in enumerate(layers):
            layer.register_forward_pre_hook(_resid_hook(li), with_kwargs=True)
        final = _resid_hook(len(layers))
        chat.model.model.norm.register_forward_pre_hook(final, with_kwargs=True)
        chat.model._causal_resid = True


def _resid_hook(li: int):
    def hook(module, args, kwargs):
        probe = _PROBE.get()
        if probe is not None and probe.record:
            h = args[0] if args else kwargs["hidden_states"]
            probe.resid[li] = h.detach().float()
            if li == 0:
                probe.layer_kwargs = dict(kwargs)
        return None

    return hook


def _z_hook(key: Hashable, n_heads: int):
    def hook(module, args):
        probe = _PROBE.get()
        if probe is None:
            return None
        x = args[0]
        z = x.unflatten(-1, (n_heads, -1))  # (B, T, H, d_head)
        if probe.record:
            probe.z[key] = z.detach().float()
        edit = probe.edits.get(key)
        if edit is None:
            return None
        return (edit(z).flatten(-2).to(x.dtype),)

    return hook


@contextmanager
def probing(probe: Probe):
    """The installed hooks (:func:`install`, :func:`install_heads`) act for this thread
    (and its context) only, while inside."""
    token = _PROBE.set(probe)
    try:
        yield probe
    finally:
        _PROBE.reset(token)


def arithmetic(name: str) -> torch.dtype:
    """The products' dtype by name (``bfloat16``: ≈ 2–6× faster on this CPU; ``float32``).
    ``bfloat16`` takes float32 where this CPU's bfloat16 products are not row-stable
    (:func:`precision.rows_invariant`): a batch of edited copies is compared with its
    baseline, and a zero effect must read 0 (float32: to its last bits at worst)."""
    if name not in ARITHMETIC:
        raise ValueError(f"arithmetic must be one of {sorted(ARITHMETIC)}, not {name!r}")
    if ARITHMETIC[name] == torch.bfloat16 and not precision.rows_invariant(torch.bfloat16):
        return torch.float32
    return ARITHMETIC[name]


def check_ids(chat, ids: Sequence[int], limit: int | None = MAX_TOKENS) -> list[int]:
    """Token ids of one prompt, or an InputError: none at all, over ``limit``, or one that
    is not an id of ``chat``'s vocabulary."""
    ids = chat_model.check_token_ids(chat, ids)
    if not ids:
        raise InputError("causal.empty")
    if limit is not None and len(ids) > limit:
        raise InputError("causal.too_many_tokens", n=len(ids), limit=limit)
    return ids


def encode(chat, prompt: str, *, template: bool = False, limit: int = MAX_TOKENS) -> list[int]:
    """A prompt's token ids (raw text by default: the causal tools study a continuation)."""
    if not isinstance(prompt, str) or not prompt.strip():
        raise InputError("causal.empty")
    return check_ids(chat, chat_model.encode(chat, prompt, template=template), limit)


def token_id(chat, text: str | int) -> int:
    """The one token ``text`` is (e.g. ``" Mary"``), or an InputError if it is not one."""
    if isinstance(text, int):
        if not 0 <= text < chat.model.config.vocab_size:
            raise InputError("causal.not_one_token", text=str(text), n=0)
        return text
    ids = chat.tokenizer(text, add_special_tokens=False)["input_ids"]
    if len(ids) != 1:
        raise InputError("causal.not_one_token", text=text, n=len(ids))
    return int(ids[0])


def run_with_cache(chat, ids: Sequence[int], *, arith: str = "bfloat16") -> Run:
    """One forward pass of ``ids`` recording ``resid_pre`` and ``z`` of every layer."""
    ids = check_ids(chat, ids, limit=None)
    L = chat.n_layers
    install(chat)
    probe = Probe(record=True)
    with (
        probing(probe),
        torch.inference_mode(),
        precision.only(arithmetic(arith)),
    ):
        out = chat.model(input_ids=torch.tensor([ids]), use_cache=False)
    kwargs = {k: v for k, v in probe.layer_kwargs.items() if k not in ("cache", "use_cache")}
    return Run(
        ids=ids,
        resid_pre=torch.stack([probe.resid[i][0] for i in range(L + 1)]),
        z=torch.stack([probe.z[i][0] for i in range(L)]),
        logits=out.logits[0].float(),
        layer_kwargs=kwargs,
        arithmetic=arith,
    )


def run_from(
    chat,
    run: Run,
    layer: int,
    h: torch.Tensor,
    edits: dict[int, Callable[[torch.Tensor], torch.Tensor]] | None = None,
    *,
    last_only: bool = False,
    exact: bool = True,
) -> torch.Tensor:
    """Logits ``[B, T, V]`` of layers ``layer`` … L − 1, the final norm and the unembedding
    applied to ``h`` (``[B, T, d]``, the residual entering ``layer``), with ``edits`` to
    head outputs; the mask and rotary embeddings are those ``run`` was computed with.
    ``last_only``: the last position's logits alone, ``[B, 1, V]`` (what a logit
    difference reads; the unembedding is a third of a sweep's work and B·T·V floats).
    ``exact=False``: the last row alone in every arithmetic, at the price of float32's
    last bits (≈1e-6 in a log p; an ablation's Δ, not patching's zero-effect check).

    The layers are the model's own modules, called as its forward calls them, so a copy
    with no edit reproduces ``run.logits`` exactly.
    """
    model = chat.model
    install(chat)
    with (
        probing(Probe(edits=edits or {})),
        torch.inference_mode(),
        precision.only(arithmetic(run.arithmetic)),
    ):
        for block in _layers(chat)[layer:]:
            h = block(h, **run.layer_kwargs)
        # float32 products round a row differently when few rows are multiplied (a row
        # alone differs from the same row among T in the last bits), so an exact float32
        # read unembeds every position and keeps the last: bit for bit the model's logits.
        float32 = precision.resolve(arithmetic(run.arithmetic)) == torch.float32
        if last_only and (not exact or not float32):
            h = h[:, -1:]
        logits = model.lm_head(model.model.norm(h)).float()
        return logits[:, -1:] if last_only else logits


def copies(x: torch.Tensor, n: int) -> torch.Tensor:
    """``n`` copies of ``x`` along a new batch dimension (a real copy: edits stay apart)."""
    return x[None].repeat(n, *([1] * x.dim()))


def check_head(chat, layer: int, head: int) -> tuple[int, int]:
    """``(layer, head)`` if the model has it, else an InputError naming the ranges."""
    L, H = chat.n_layers, chat.n_heads
    ok = all(isinstance(v, int) and not isinstance(v, bool) for v in (layer, head))
    if not (ok and 0 <= layer < L and 0 <= head < H):
        raise InputError(
            "causal.head_range", layer=layer, head=head, last_layer=L - 1, last_head=H - 1
        )
    return layer, head


def log_probs(logits: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(logits.float(), dim=-1)


def prompt_loss(logits: torch.Tensor, ids: Sequence[int]) -> torch.Tensor:
    """Mean next-token cross-entropy over the prompt, per copy: ``logits`` ``[B, T, V]`` →
    ``[B]`` (position t predicts ids[t + 1]; a one-token prompt has no loss: NaN)."""
    if len(ids) < 2:
        return torch.full(logits.shape[:1], float("nan"))
    target = torch.as_tensor(ids[1:])
    lp = log_probs(logits[:, :-1])  # (B, T − 1, V)
    return -lp.gather(-1, target.expand(lp.shape[0], -1)[..., None])[..., 0].mean(-1)
