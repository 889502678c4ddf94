"""One interface for every efficient attention variant.

A variant takes per-head ``q, k, v`` of shape ``[B, H, N, D]`` and returns its output
``[B, H, N, D]`` computed the way the method computes it (never materialising the
``N × N`` map where the method avoids it), and, only when asked, its *effective*
attention map for display: exact weights where the method forms them (masked
patterns, tiled FlashAttention), an implied map where it does not (Performer,
Linformer, Mamba). Each variant also states its complexity and a FLOP and memory
model, so a cost profile can compare prediction with measurement.

Adding a variant = one file with a `Variant` subclass + one line in `registry.py`.
"""

from __future__ import annotations

import functools
import math
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

import torch

from engine import gate
from engine.errors import InputError
from engine.masks import causal_mask, padding_lengths
from engine.messages import MESSAGES, Message, joined
from engine.params import Param
from engine.trace import AttentionMap, Trace, renormalized

FLOAT_BYTES = 4


@dataclass
class Output:
    """What a variant computes: ``out [B, H, N, D]``; ``weights`` and ``pattern`` on request.

    ``weights [B, H, N, N]`` is the effective map (see the class flags for what kind);
    ``pattern [N, N]`` or ``[B, H, N, N]`` (bool) marks the keys each query may see.
    ``path`` says which implementation ran (the Triton kernels on CUDA, else PyTorch).
    ``extra`` holds what a variant chose or computed beside the map, for drawing (the
    blocks a query selected, gate values, a sink's mass, each softmax of a difference);
    ``extra["values"]`` is set where the map multiplies values other than the input ``v``
    (pooled or up-projected), so ``out = weights @ extra["values"]``.
    """

    out: torch.Tensor
    weights: torch.Tensor | None = None
    pattern: torch.Tensor | None = None
    notes: list[str] = field(default_factory=list)
    path: str = "pytorch"  # which implementation ran: "pytorch" or "triton"
    extra: dict[str, torch.Tensor] = field(default_factory=dict)


class Variant(ABC):
    """Base class. Subclasses set the class attributes and implement ``compute``.

    ``flops`` and ``memory`` model one (batch, head) slice for sequence length ``n`` and
    head size ``d`` and count what *this implementation* computes, so the fitted
    exponent of the model is the one the measurement should show.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    paper: ClassVar[str]
    time_complexity: ClassVar[str]
    memory_complexity: ClassVar[str]
    params: ClassVar[tuple[Param, ...]] = ()
    # Map honesty flags for the effective map this variant reports.
    map_exact: ClassVar[bool] = True
    map_implied: ClassVar[bool] = False
    map_normalized: ClassVar[bool] = True
    # True where weights can be negative (a difference of softmaxes, a signed kernel):
    # drawn on a diverging scale, never read as a distribution.
    map_signed: ClassVar[bool] = False
    map_kind: ClassVar[str] = "self"
    map_note: ClassVar[str] = ""
    # "optional": honours causal=True/False; "never": bidirectional only; "always": causal only.
    causal_support: ClassVar[str] = "optional"
    # True when the output approximates softmax attention (error vs full is meaningful).
    approximates_full: ClassVar[bool] = True
    # Message id saying why the variant needs parameters a pretrained softmax model lacks
    # (so it is not swapped into one untrained); None when it can be swapped in as is.
    needs_training: ClassVar[str | None] = None
    # Its parameters in the variant-quality grid (engine.training.variants), chosen so that
    # at n = 256 it does not cover the whole sequence (else it would be full attention
    # under another name); ``not_in_grid`` says why it is no cell of that grid instead.
    grid_budget: ClassVar[dict] = {}
    not_in_grid: ClassVar[str] = ""
    # True where it runs untrained inside a pretrained encoder (in_pretrained.swap).
    swappable: ClassVar[bool] = False
    # Its published Long Range Arena average (Tay et al. 2020, Table 1), where it has one.
    lra_average: ClassVar[float | None] = None
    # English text of the message ids only this variant uses; registered with
    # engine.messages when the class is defined, so the variant's file holds them.
    messages: ClassVar[dict[str, str]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        own = dict(cls.__dict__.get("messages", {}))
        if getattr(cls, "name", None) and cls.map_note:
            own[cls.note_key()] = cls.map_note  # its map's sentence, translatable as one
        for key, text in own.items():
            assert MESSAGES.setdefault(key, text) == text, f"message {key} defined twice"

    @classmethod
    def note_key(cls) -> str:
        return f"variants.{cls.name}.map_note"

    # -- to implement -------------------------------------------------------------------
    @abstractmethod
    def compute(self, q, k, v, *, causal: bool, want_map: bool, hp: dict) -> Output:
        """The variant's output, and its map and pattern when ``want_map``."""

    @abstractmethod
    def flops(self, n: int, d: int, hp: dict) -> float:
        """Floating-point operations this implementation performs, per (batch, head)."""

    @abstractmethod
    def memory(self, n: int, d: int, hp: dict) -> float:
        """Peak working-set bytes beyond q, k, v and the output, per (batch, head)."""

    # -- facts a variant may override ---------------------------------------------------
    def pretrained_budget(self, n: int) -> dict:
        """Its parameters inside a pretrained model reading n tokens: its defaults here."""
        return {}

    def cache_bytes_per_token(self, d: int, heads: int, hp: dict | None = None) -> int:
        """KV cache of every token read: 2·H·d numbers a token, every head"""
        return 2 * heads * d * FLOAT_BYTES

    def cache_bytes(self, n: int, d: int, heads: int, hp: dict | None = None) -> int:
        """KV cache of every token read"""
        return n * self.cache_bytes_per_token(d, heads, hp)

    def learned(self, heads: int, d: int) -> dict[str, torch.Tensor]:
        """Initial values of what the variant learns inside a trained model with ``heads``
        heads of size ``d`` (gpt-oss's sink logit per head, MLA's projections): a model
        that trains them holds each as a parameter and hands them to
        ``attend(..., learned=…)``, where they take the place of the ``hp`` entry of the
        same name. None by default: the variant is a function of q, k, v."""
        return {}

    def grid_hp(self, d: int) -> dict:
        """Its parameters in a grid cell whose heads have size ``d``: ``grid_budget``,
        unless a parameter follows the head size in the variant's paper (MLA's latent)."""
        return dict(self.grid_budget)

    # -- shared -------------------------------------------------------------------------
    def resolve(self, hp: dict | None = None, n: int | None = None) -> dict:
        """Defaults filled in, unknown names refused, every value checked against its limit."""
        if hp is not None and not isinstance(hp, dict):
            raise InputError("variant.not_a_table", title=self.title)
        hp = dict(hp or {})
        known = {p.name for p in self.params}
        unknown = set(hp) - known - {"seed"}
        if unknown:
            raise InputError(
                "variant.no_parameter", title=self.title, unknown=", ".join(sorted(unknown))
            )
        out = {p.name: p.check(hp.get(p.name, p.default)) for p in self.params}
        out["seed"] = SEED.check(hp.get("seed", 0))
        if n is not None:
            self.check_length(n, out)
        return out

    def check_length(self, n: int, hp: dict) -> None:
        """Hook for parameter limits that depend on n (e.g. Linformer k ≤ n); none here."""
        return None

    def check_causal(self, causal: bool) -> bool:
        if causal and self.causal_support == "never":
            raise InputError("variant.bidirectional", title=self.title)
        return True if self.causal_support == "always" else causal

    def run(
        self,
        q,
        k,
        v,
        *,
        causal: bool = False,
        want_map: bool = True,
        hp: dict | None = None,
        learned: dict | None = None,
    ) -> Output:
        """Check inputs and parameters, then compute (``learned``: see :meth:`learned`)."""
        if q.dim() != 4 or q.shape != k.shape or k.shape != v.shape:
            shapes = (tuple(t.shape) for t in (q, k, v))
            raise InputError("variant.qkv_shape", **dict(zip("qkv", shapes, strict=True)))
        hp = self.resolve(hp, q.shape[-2])
        if learned:
            unknown = set(learned) - learned_names(self, q.shape[1], q.shape[-1])
            if unknown:  # a caller's mistake, never a user's input
                raise ValueError(f"{self.name} learns no {sorted(unknown)}")
            hp = {**hp, **learned}  # tensors: the model's own values, not the Param's
        causal = self.check_causal(causal)
        # Not while training: a diverging run is the training loop's to report.
        checked = not (torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v)))
        if checked:
            check_inputs(q, k, v)
        res = self.compute(q, k, v, causal=causal, want_map=want_map, hp=hp)
        if checked and not all(finite(t) for t in (res.out, res.weights) if t is not None):
            raise InputError("variant.not_finite", title=self.title)
        return res

    def attend(self, hp: dict | None = None):
        """This variant as an attention function (engine.attention.attend's signature).

        ``attend(q, k, v, *, mask=None, causal=False, want_weights=True) -> (out, weights)``
        plugs into any multi-head layer (``MultiHeadAttention.forward(..., attend=…)``,
        ``transformer.translate(..., attend=…)``, HuggingFace models through
        ``pretrained.ATTEND``). A trace takes the variant's *name* instead, so its maps
        carry what the variant declares (:meth:`map_flags`). Self-attention only (q, k, v of one
        length). A right-padded batch runs each sentence at its own length, padded
        rows 0; any other mask is refused. ``weights`` is the variant's effective map.
        """
        self.resolve(hp)  # refuse unknown or out-of-range parameters before any run

        def attend(
            q, k, v, *, mask=None, causal: bool = False, want_weights: bool = True, learned=None
        ):
            return self._attend(q, k, v, mask, causal, want_weights, hp, learned)

        attend.__name__ = self.name
        return attend

    def _attend(self, q, k, v, mask, causal, want_weights, hp, learned=None):
        B, H, n, _ = q.shape
        if k.shape[-2] != n:
            raise InputError("variant.self_only", title=self.title, n=n, m=k.shape[-2])
        try:
            lengths = padding_lengths(mask, B, n, n, causal=causal)
        except ValueError:
            raise InputError("variant.padding_only", title=self.title) from None
        if lengths is None:
            res = self.run(q, k, v, causal=causal, want_map=want_weights, hp=hp, learned=learned)
            return res.out, res.weights
        out = q.new_zeros(B, H, n, v.shape[-1])
        weights = q.new_zeros(B, H, n, n) if want_weights else None
        for length in lengths.unique().tolist():
            idx = (lengths == length).nonzero().flatten()
            if length == 0:
                continue
            qkv = (t[idx, :, :length] for t in (q, k, v))
            res = self.run(*qkv, causal=causal, want_map=want_weights, hp=hp, learned=learned)
            out[idx, :, :length] = res.out
            if want_weights:
                weights[idx, :, :length, :length] = res.weights
        return out, weights

    def trace(
        self,
        q,
        k,
        v,
        *,
        labels=None,
        causal: bool = False,
        hp: dict | None = None,
        task: str = "variants",
    ) -> Trace:
        """Run with the map and answer with a Trace (map flags from the class)."""
        n, d = q.shape[-2], q.shape[-1]
        hp = self.resolve(hp, n)
        t0 = time.perf_counter()
        res = self.run(q, k, v, causal=causal, want_map=True, hp=hp)
        elapsed = time.perf_counter() - t0
        labels = list(labels) if labels is not None else [str(i) for i in range(n)]
        maps = {"attention": self.attention_map(res.weights, labels, res.notes)}
        if res.pattern is not None:
            maps["pattern"] = pattern_map(res.pattern, labels, q.shape[0], q.shape[1])
        return Trace(
            model=f"variant:{self.name}",
            task=task,
            inputs={
                "variant": self.name,
                "n": n,
                "d": d,
                "causal": bool(self.check_causal(causal)),
                "params": hp,
            },
            outputs={
                "complexity_time": self.time_complexity,
                "complexity_memory": self.memory_complexity,
                "notes": res.notes,
            },
            maps=maps,
            vectors={
                "output": res.out.detach().float().cpu().numpy(),
                **{k: t.detach().float().cpu().numpy() for k, t in res.extra.items()},
            },
            metrics={
                "flops": self.flops(n, d, hp) * q.shape[0] * q.shape[1],
                "memory_bytes": self.memory(n, d, hp) * q.shape[0] * q.shape[1],
            },
            timings={"compute_s": elapsed},
        )

    def map_flags(self, before: str = "", after=()) -> dict:
        """What every map this variant forms says of itself: the honesty flags and its note
        (``before`` it and ``after`` it, a caller's own words, best Messages). The one
        statement a model that swaps the variant in passes on with the map it returns (of
        the model's own kind: self, cross). The note is one Message of Messages, so a page
        translates every part of it."""
        own = Message(self.note_key()) if self.map_note else ""
        parts = [n for n in (before, own, *after) if n]
        return dict(
            exact=self.map_exact,
            implied=self.map_implied,
            normalized=self.map_normalized,
            signed=self.map_signed,
            note=joined(parts, "note.sentences") if parts else "",
        )

    def attention_map(self, weights, labels, notes=()) -> AttentionMap:
        w = weights.detach().float().cpu().numpy()
        if self.map_normalized and not self.map_signed:
            w = renormalized(w)  # a map assembled from pieces: its rows at 1 to float32 rounding
        return AttentionMap(
            weights=w,
            query_labels=labels,
            key_labels=labels,
            kind=self.map_kind,
            layer_labels=[f"b{i}" for i in range(w.shape[0])],
            **self.map_flags(after=notes),
        )


# The seed every variant takes beside its own parameters (random features, projections).
SEED = Param("seed", "Seed", 0, 0, 2**63 - 1)


def finite(t: torch.Tensor) -> bool:
    """No NaN or ±inf in ``t``, by two reductions (NaN propagates through max and min):
    no tensor of flags the size of an n × n map is made, so a cost profile's measured
    peak memory stays the variant's own."""
    return not t.numel() or bool(torch.isfinite(t.amax()) & torch.isfinite(t.amin()))


def check_inputs(q, k, v) -> None:
    """Finite q, k, v whose scores s = q·k/√d float32 can hold (engine.gate.scores).

    Row norms in the inputs' dtype: a norm that overflows float32 is inf, and inf is
    refused as it should be (its scores overflow too)."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not finite(t):
            raise InputError("variant.input_not_finite", name=name)
    if q.numel() and k.numel():
        q_norm = float(torch.linalg.vector_norm(q, dim=-1).amax())
        k_norm = float(torch.linalg.vector_norm(k, dim=-1).amax())
        gate.scores(q_norm, k_norm, default_scale(q.shape[-1]))


def pattern_map(pattern: torch.Tensor, labels, batch: int, heads: int) -> AttentionMap:
    """Which keys each query may see, as a 0/1 masked-only map ``[B, H, N, N]``."""
    p = pattern.to(torch.float32)
    if p.dim() == 2:
        p = p.expand(batch, heads, *p.shape)
    return AttentionMap(
        weights=p.cpu().numpy(),
        query_labels=labels,
        key_labels=labels,
        kind="pattern",
        exact=True,
        masked_only=True,
        normalized=False,
        layer_labels=[f"b{i}" for i in range(batch)],
        note=Message("note.pattern"),
    )


def default_scale(d: int) -> float:
    return 1.0 / math.sqrt(d)


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed))


def dense_pattern(n: int, causal: bool) -> torch.Tensor:
    """``[n, n]`` pattern of a variant that sees every (causally allowed) key."""
    return causal_mask(n, n) if causal else torch.ones(n, n, dtype=torch.bool)


@functools.lru_cache(maxsize=256)
def learned_names(variant: Variant, heads: int, d: int) -> frozenset[str]:
    """The names of ``variant.learned(heads, d)``, made once per shape: a training step
    checks its ``learned`` against them without building the start values again."""
    return frozenset(variant.learned(heads, d))


def per_head(start: dict[str, torch.Tensor], heads: int) -> dict[str, torch.Tensor]:
    """One copy of each start value per head (``[H, …]``): a trained model's own, per head."""
    return {name: t.expand(heads, *t.shape).clone() for name, t in start.items()}
