"""Half-precision weights for the chat model on a CPU, float32 everywhere else.

A decoder step reads every weight of the model once for one token, so on a CPU it is
bound by memory bandwidth: float32 SmolLM2 moves 540 MB a token (≈ 55 ms on one thread
here). The weights are therefore held once, in float16 (270 MB), and multiplied by the
path that suits the shape:

- up to ``STEP_ROWS`` tokens (a decoder step): in float16. PyTorch's CPU matrix–vector
  kernel for float16 streams the weights ≈ 2.5× faster than float32 (and than
  bfloat16's), accumulating in float32; the result is rounded to float16 once;
- more tokens (a prompt, a text the page reads): in float32 arithmetic on the float16
  weights, rounding nothing more (a float16 product of that shape has no fast kernel);
- ``only(torch.bfloat16)``: asked for by the long evaluations (the cache-policy sweep
  over thousands of tokens), which this CPU multiplies ≈ 2.3× faster than float32 with
  its AVX-512 BF16 dot-product instructions. Its perplexities match float32's to three
  figures (bench/RESULTS.md); single greedy answers can flip where two tokens tie, so
  nothing the user watches being written takes this path. A CPU without bfloat16
  instructions (AVX-512 BF16 or AMX) emulates them ≈ 20× slower than float32 (measured on
  an AMD EPYC without them: 1.57 s against 0.067 s for a 1024 × 576 × 1536 product), so
  there ``only(torch.bfloat16)`` takes the float32 path (:func:`resolve`); a result file
  names the arithmetic that ran (:data:`LONG`).

Rounding the weights to float16 (11 significant bits) moves them far less than they
already moved: the shipped weights are the GGUF's Q4_1 (4 bits, one scale and one
minimum per 32 weights), dequantised. Norms, RoPE, softmax, the residual stream and
every attention weight shown are float32. The largest input any linear layer sees
(``down_proj``, ≈ 3 × 10³ on the shipped text) is far inside float16's range
(6.5 × 10⁴); a float16 product that overflows anyway is recomputed in float32.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

STEP_ROWS = 4  # up to this many rows (tokens) a product takes the float16 path


def _bfloat16_native() -> bool:
    """Whether this CPU multiplies bfloat16 in hardware (Linux reports the flags);
    ``ATTENTION_STUDIO_BFLOAT16=1`` or ``0`` overrides (a test of the bfloat16 path)."""
    forced = os.environ.get("ATTENTION_STUDIO_BFLOAT16")
    if forced in ("0", "1"):
        return forced == "1"
    try:
        flags = set(Path("/proc/cpuinfo").read_text(encoding="utf-8").split())
    except OSError:
        return False
    return bool(flags & {"avx512_bf16", "amx_bf16"})


BFLOAT16_NATIVE = _bfloat16_native()
# What the long evaluations multiply in on this machine.
LONG = torch.bfloat16 if BFLOAT16_NATIVE else torch.float32


@functools.cache
def rows_invariant(dtype: torch.dtype = torch.float32) -> bool:
    """Whether a linear layer in ``dtype`` gives each row the same bits among 2 to 28 rows
    as among 224, measured once on this CPU. The causal checks compare a batch of edited
    copies with its baseline bit for bit; that holds where the BLAS picks one kernel for
    every row count (the AMD EPYC these were built on). An Intel Xeon with AVX-512 and
    AMX picks by the row count: float32 rows then differ in their last bits (≈ 1e-4 in a
    logit), bfloat16 rows by far more (≈ 0.06)."""
    dtype = resolve(dtype)
    g = torch.Generator().manual_seed(0)
    w = torch.randn(1536, 576, generator=g).to(dtype)
    x = torch.randn(224, 576, generator=g).to(dtype)
    every = F.linear(x, w)
    return all(torch.equal(F.linear(x[:m], w), every[:m]) for m in (2, 14, 28))


def resolve(dtype: torch.dtype) -> torch.dtype:
    """The path a product asked for ``dtype`` takes here: bfloat16 only where native."""
    return torch.float32 if dtype == torch.bfloat16 and not BFLOAT16_NATIVE else dtype


# Set by only(), per thread: one session's evaluation never changes another's products.
_local = threading.local()


def _stack() -> list[torch.dtype]:
    if not hasattr(_local, "only"):
        _local.only = []
    return _local.only


@contextmanager
def only(dtype: torch.dtype, *, unless_set: bool = False) -> Iterator[None]:
    """Every :class:`HalfLinear` product inside takes the ``dtype`` path, whatever its shape.

    ``torch.float32`` multiplies the float16 weights in float32 arithmetic, rounding
    nothing more: slow (float32's bandwidth), but a decoder step and a teacher-forced
    pass then differ only in the order of their sums (tests/unit/test_chat.py).
    ``unless_set``: an outer ``only()`` keeps its path (a test comparing a long
    evaluation with decoder steps asks for one arithmetic around both).
    """
    if dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise ValueError(f"HalfLinear multiplies in float16, bfloat16 or float32, not {dtype}")
    stack = _stack()
    stack.append(stack[-1] if unless_set and stack else resolve(dtype))
    try:
        yield
    finally:
        _stack().pop()


class HalfLinear(nn.Module):
    """``y = x Wᵀ`` with W held in float16, x and y in the caller's dtype."""

    def __init__(self, weight: torch.Tensor):
        super().__init__()
        w = weight.detach()
        self.register_buffer("w16", w.to(torch.float16), persistent=False)
        self.wbf16: torch.Tensor | None = None  # made on the first bfloat16 product
        # Exact float32 copies, when a holder keeps them (the batcher's Weights32): the
        # float32 path then converts nothing (an every-head sweep spent 8 % converting).
        self.w32: torch.Tensor | None = None
        self.in_features, self.out_features = w.shape[1], w.shape[0]

    @property
    def weight(self) -> torch.Tensor:
        """The weights as float32 (for code that reads them, e.g. tied embeddings)."""
        return self.w16.float()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.numel() // max(1, x.shape[-1])
        only_ = _stack()
        path = only_[-1] if only_ else torch.float16 if rows <= STEP_ROWS else torch.float32
        if path == torch.bfloat16:
            if self.wbf16 is None:
                self.wbf16 = self.w16.to(torch.bfloat16)
            return F.linear(x.to(torch.bfloat16), self.wbf16).to(x.dtype)
        if path == torch.float16:
            y = F.linear(x.to(torch.float16), self.w16)
            if torch.isfinite(y).all():
                return y.to(x.dtype)
        w32 = self.w32 if self.w32 is not None else self.w16.float()
        return F.linear(x.float(), w32).to(x.dtype)


class HalfEmbedding(nn.Module):
    """Token embeddings read from the float16 copy of a tied ``lm_head``, as float32."""

    def __init__(self, table: HalfLinear, padding_idx: int | None = None):
        super().__init__()
        self.table = table
        self.padding_idx = padding_idx

    @property
    def weight(self) -> torch.Tensor:
        return self.table.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return F.embedding(ids, self.table.w16).float()


def to_half(model: nn.Module) -> int:
    """Every ``nn.Linear`` of ``model`` (no biases here) made a :class:`HalfLinear`, in place.

    A tied input embedding reads the same half-precision table as ``lm_head``. Returns
    the number of layers replaced; the float32 weights are freed.
    """
    embed = model.get_input_embeddings()
    tied = embed.weight is model.get_output_embeddings().weight
    replaced = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.Linear):
                if child.bias is not None:
                    raise ValueError(f"{name} has a bias; HalfLinear has none")
                setattr(parent, name, HalfLinear(child.weight))
                replaced += 1
    if tied:
        head = model.get_output_embeddings()
        model.set_input_embeddings(HalfEmbedding(head, embed.padding_idx))
    # What stays float32 (norms) may be a view into the safetensors file's memory map,
    # which would keep all 540 MB of it mapped; copies let the map go.
    with torch.no_grad():
        for p in model.parameters():
            p.data = p.data.clone()
        for module in model.modules():
            if isinstance(module, HalfLinear):
                continue  # its float16 copies are its own already
            for name, b in list(module.named_buffers(recurse=False)):
                if b is not None:
                    setattr(module, name, b.clone())
    return replaced
