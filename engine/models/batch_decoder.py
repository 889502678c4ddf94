"""Many sequences' KV caches in one set of tensors, advanced by one forward per step.

:class:`engine.models.chat.Decoder` runs one sequence; a decoding step there reads every
weight of the model for one token. Here the step of every sequence in the batch is one
forward (Orca's iteration-level batching, Yu et al. OSDI 2022; vLLM's scheduler), so the
weights are read once for B tokens. The arithmetic is the Decoder's, row for row:

- **Prefill** (:func:`prefill`): the new tokens of several sequences are *packed* into
  one ``(ΣT, d_model)`` block for the linear layers (vLLM's varlen layout: no padding);
  attention runs per sequence, causal, over that sequence's own cache. A sequence may
  start after a cached prefix (``start > 0``): its queries then also read the prefix K/V.
- **Step** (:func:`step`): one token per sequence. Keys are held rotated at their text
  position (for the full cache, rotating once or at every step gives the same numbers);
  attention runs over ``(B, H_kv, N, d)`` with each row's positions past its own length
  masked to −inf, so the softmax gives them exactly 0.
- **Both at once** (:func:`mixed`): the prompts of requests joining a running batch ride
  in its step's forward (Sarathi-Serve's stall-free batching, vLLM's chunked prefill), so
  the weights are read once and the batch does not stall for a prefill pass.

Linear layers (engine.models.precision): a lone step multiplies in float16 (the weights
and the input rounded to float16, products summed in float32, the result rounded to
float16). That kernel costs B times one row for B rows on this CPU (it is a loop of
matrix–vector products: each row's result is bit-identical to the row alone), so up to
``FP16_ROWS`` rows it is used as is; above, the same rounding is done around a float32
product (oneDNN's, :func:`batch_linear`) on float32 copies of the float16 weights (exact
copies), which a batch amortises. The two differ only in the order of the float32 sums
(≈ 0.2 % of outputs by one float16 ulp). Attention over padded rows also sums in another
order than over the row alone. So a batch of one is bit-identical to the Decoder, and a
larger batch equals it to float16 rounding (≈ 10⁻³ in a map;
tests/unit/test_chat_batch.py). A prefill is the Decoder's float32 product; packing
prompts together changes none of its bits. A prompt that joins a running batch
(:func:`mixed`) is multiplied with the step's rows by oneDNN: the same float32 product,
summed in another order (≈ 10⁻⁶ relative).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F

from engine.models import llama

# Up to this many rows a step multiplies with the float16 kernel (bit-identical to a
# lone step); above, float32 on held copies is cheaper. Measured with
# engine.models.batching.measure, one thread (CPU seconds a whole step): float16 0.085 /
# 0.15 / 0.29 at 4 / 8 / 16 rows, the float32 path (oneDNN) 0.093 / 0.13 / 0.16 / 0.20
# at 4 / 8 / 16 / 32.
FP16_ROWS = 4


def _onednn_linear():
    """oneDNN's float32 product (the one PyTorch's own CPU compiler emits for a linear
    layer), or None where this PyTorch build has none."""
    try:
        op = torch.ops.mkldnn._linear_pointwise
    except (AttributeError, RuntimeError):
        return None
    return op if torch.backends.mkldnn.is_available() else None


_ONEDNN = _onednn_linear()


def batch_linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """``x Wᵀ`` for a batch's rows. MKL's sgemm, which ``F.linear`` calls, runs a product of
    a few dozen rows on one core; oneDNN's splits it over all of them. Measured here (2
    cores, SmolLM2's 576 × 1536 layer, weights out of cache): 30 rows 0.48 ms against
    0.92, the 49,152-word head 14 ms against 28; one core, 0.83 against 1.06. The two sum
    in other orders (≈ 10⁻⁶ relative), which a batch's rows already do (module docstring)."""
    if _ONEDNN is None or not x.is_contiguous():
        return F.linear(x, w)
    return _ONEDNN(x, w, None, "none", [], "")


class Weights32:
    """Float32 copies of every float16 weight of the model (540 MB for SmolLM2), made
    once: a float32 product over them equals HalfLinear's float32 path bit for bit,
    without converting 270 MB of weights in every forward."""

    def __init__(self, model: torch.nn.Module):
        self._w = {}
        for m in model.modules():
            if hasattr(m, "w16"):
                # shared with the layer, whose own float32 products then convert nothing
                m.w32 = self._w[id(m)] = m.w16.float()

    def __call__(self, lin, x: torch.Tensor, *, step: bool) -> torch.Tensor:
        """``x Wᵀ`` as the Decoder would compute each row (see the module docstring)."""
        if not hasattr(lin, "w16"):
            return lin(x)  # a model left in float32: its own product
        w32 = self._w[id(lin)]
        if not step:
            return F.linear(x, w32)
        if x.shape[0] <= FP16_ROWS:
            y = F.linear(x.to(torch.float16), lin.w16).float()
        else:
            y = batch_linear(x.to(torch.float16).float(), w32).to(torch.float16).float()
        # A row's sum is finite iff the row is (float16-range values cannot overflow a
        # float32 sum): one reduction instead of isfinite's four passes over (B, V).
        bad = ~torch.isfinite(y.sum(dim=-1))
        if bad.any():  # a row past float16's range: float32, as HalfLinear falls back
            y[bad] = F.linear(x[bad], w32)
        return y

    def rows(self, lin, x: torch.Tensor, *, step: int) -> torch.Tensor:
        """The first ``step`` rows as a step's (above ``FP16_ROWS``), the rest as a
        prefill's, in one float32 product over the held copy."""
        if not hasattr(lin, "w16"):
            return lin(x)
        head = x[:step].to(torch.float16).float()
        y = batch_linear(torch.cat([head, x[step:]]), self._w[id(lin)])
        out = y[:step].to(torch.float16).float()
        bad = ~torch.isfinite(out.sum(dim=-1))
        if bad.any():  # past float16's range: float32, as HalfLinear falls back
            out[bad] = F.linear(x[:step][bad], self._w[id(lin)])
        y[:step] = out
        return y


@dataclass
class Part:
    """One sequence's share of a packed prefill: ``ids`` at positions ``start …``, its
    K/V written into ``keys[l]``/``values[l]`` ``(H_kv, ≥ start + T, d)``, whose first
    ``start`` positions already hold its prefix."""

    ids: list[int]
    start: int
    keys: list[torch.Tensor]
    values: list[torch.Tensor]


def _packed(parts: list[Part]):
    """The parts' ids and positions packed, each part's row span and causal mask."""
    spans, a = [], 0
    for p in parts:
        spans.append((a, a + len(p.ids)))
        a += len(p.ids)
    ids = [i for p in parts for i in p.ids]
    pos = torch.cat([torch.arange(p.start, p.start + len(p.ids)) for p in parts])
    masks = [
        torch.full((len(p.ids), p.start + len(p.ids)), -math.inf).triu(p.start + 1) for p in parts
    ]
    return ids, pos, spans, masks


def _prefill_attend(chat, parts: list[Part], spans, masks, cos, sin, weights):
    """attend() for packed prompt rows ``(ΣT, H, d)``: each part causal over its own cache,
    its K/V written there; each part's α appended to its list in ``weights``."""
    scale = chat.head_dim**-0.5

    def attend(li, q, k, v):
        q = llama.rope(q.transpose(0, 1), cos, sin)  # (H, ΣT, d)
        k = llama.rope(k.transpose(0, 1), cos, sin)  # (H_kv, ΣT, d)
        v = v.transpose(0, 1)
        o = torch.empty_like(q)
        for p, (s0, s1), mask, out in zip(parts, spans, masks, weights, strict=True):
            n = p.start + s1 - s0
            p.keys[li][:, p.start : n] = k[:, s0:s1]
            p.values[li][:, p.start : n] = v[:, s0:s1]
            keys, values = p.keys[li][:, :n], p.values[li][:, :n]  # (H_kv, N, d)
            o[:, s0:s1], alpha = llama.attention(q[:, s0:s1], keys, values, scale=scale, mask=mask)
            out.append(alpha)  # (H, T, N)
        return o.transpose(0, 1)  # (ΣT, H, d)

    return attend


def prefill(chat, w: Weights32, parts: list[Part]) -> list[torch.Tensor]:
    """Every part's tokens in one packed pass; each part's attention ``[L, H, T, start + T]``
    (float32), causal over its own cache only."""
    ids, pos, spans, masks = _packed(parts)
    cos, sin = llama.rotary(chat.model, pos)  # (ΣT, d)
    weights: list[list[torch.Tensor]] = [[] for _ in parts]
    attend = _prefill_attend(chat, parts, spans, masks, cos, sin, weights)
    with torch.inference_mode():
        llama.forward(
            chat.model, torch.tensor(ids), attend, linear=partial(w, step=False), head=False
        )
    return [torch.stack(out) for out in weights]


class SlotCache:
    """The K/V of up to S sequences: per layer ``(S, H_kv, N, d)``, keys rotated at their
    text position; sequence b lives in slot b (the batch is kept compact)."""

    def __init__(self, chat):
        self.chat = chat
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []

    @property
    def shape(self) -> tuple[int, int]:
        """(slots, positions) allocated."""
        return (self.keys[0].shape[0], self.keys[0].shape[2]) if self.keys else (0, 0)

    def ensure(self, slots: int, length: int) -> None:
        """Room for ``slots`` sequences of ``length`` positions (grown by copying; rare)."""
        s0, n0 = self.shape
        if slots <= s0 and length <= n0:
            return
        s1, n1 = max(slots, s0), max(n0, 64 * math.ceil(length / 64))
        c = self.chat
        for store in (self.keys, self.values):
            for li in range(c.n_layers):
                bigger = torch.zeros(s1, c.n_kv_heads, n1, c.head_dim)
                if store and li < len(store):
                    bigger[:s0, :, :n0] = store[li]
                    store[li] = bigger
                else:
                    store.append(bigger)

    def slot(self, b: int) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Views of slot b's K/V, per layer ``(H_kv, N, d)``."""
        return [k[b] for k in self.keys], [v[b] for v in self.values]

    def move(self, src: int, dst: int, length: int) -> None:
        """Slot ``src``'s first ``length`` positions into slot ``dst`` (filling a hole)."""
        for store in (self.keys, self.values):
            for t in store:
                t[dst, :, :length] = t[src, :, :length]

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.keys + self.values)


def _step_attend(chat, cache: SlotCache, positions: list[int], cos, sin, weights: list):
    """attend() for one token per sequence ``(B, H, d)``: sequence b in slot b attends over
    its positions 0 … positions[b] (the rest masked to −inf); its α appended to ``weights``."""
    b = len(positions)
    pos = torch.tensor(positions)
    n = int(pos.max()) + 1
    rows = torch.arange(b)
    blocked = torch.arange(n)[None] > pos[:, None]  # (B, N): past the row's own position
    mask = torch.zeros(b, n).masked_fill_(blocked, -math.inf)[:, None, None]  # (B, 1, 1, N)
    cos, sin = cos[:, None], sin[:, None]  # (B, 1, d)
    scale = chat.head_dim**-0.5

    def attend(li, q, k, v):
        q = llama.rope(q, cos, sin)  # (B, H, d)
        cache.keys[li][rows, :, pos] = llama.rope(k, cos, sin)  # (B, H_kv, d) each
        cache.values[li][rows, :, pos] = v
        keys, values = cache.keys[li][:b, :, :n], cache.values[li][:b, :, :n]
        o, alpha = llama.attention(q[:, :, None], keys, values, scale=scale, mask=mask)
        weights.append(alpha[:, :, 0])  # (B, H, N)
        return o[:, :, 0]  # (B, H, d)

    return attend


def step(chat, w: Weights32, cache: SlotCache, tokens: list[int], positions: list[int]):
    """One token per sequence b (slot b) at text position ``positions[b]``, each attending
    over its own positions 0 … positions[b].

    Returns logits ``(B, V)`` and attention ``(B, L, H, N)`` with N = max position + 1
    (row b is 0 past its own position)."""
    cos, sin = llama.rotary(chat.model, torch.tensor(positions))
    weights: list[torch.Tensor] = []
    attend = _step_attend(chat, cache, positions, cos, sin, weights)
    with torch.inference_mode():
        logits = llama.forward(chat.model, tokens, attend, linear=partial(w, step=True))
    return logits, torch.stack(weights, dim=1)


def mixed(chat, w: Weights32, cache: SlotCache, tokens, positions, parts: list[Part]):
    """:func:`step` for every sequence and :func:`prefill` of ``parts`` in one forward, so
    the weights are read once for both (Sarathi-Serve's stall-free batching; vLLM's chunked
    prefill): the B step rows come first, then the packed prompt rows. Row for row the
    arithmetic is the two passes' up to the order of sums (one :func:`batch_linear` for
    both): step rows rounded through float16 around the float32 product (used above
    ``FP16_ROWS`` rows), prompt rows a plain float32 product. In each
    layer the prompts' K/V are written before the step rows read the cache, so a sequence
    whose prompt is in ``parts`` takes its first step in the same pass.

    Returns :func:`step`'s logits and attention, and :func:`prefill`'s maps."""
    b = len(tokens)
    ids, pos, spans, masks = _packed(parts)
    cos, sin = llama.rotary(chat.model, torch.cat([torch.tensor(positions), pos]))
    maps: list[list[torch.Tensor]] = [[] for _ in parts]
    steps: list[torch.Tensor] = []
    prompt = _prefill_attend(chat, parts, spans, masks, cos[b:], sin[b:], maps)
    one = _step_attend(chat, cache, positions, cos[:b], sin[:b], steps)

    def attend(li, q, k, v):
        o = prompt(li, q[b:], k[b:], v[b:])  # first: the step rows may read these K/V
        return torch.cat([one(li, q[:b], k[:b], v[:b]), o])

    m = chat.model
    with torch.inference_mode():
        x = llama.forward(m, list(tokens) + ids, attend, linear=partial(w.rows, step=b), head=False)
        logits = w(m.lm_head, m.model.norm(x[:b]), step=True)
    return logits, torch.stack(steps, dim=1), [torch.stack(out) for out in maps]
