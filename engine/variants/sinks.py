"""Sliding window + attention sinks: StreamingLLM (Xiao et al. 2023) and gpt-oss's sink logit.

Each query sees the w most recent keys (itself included; |i − j| < w when bidirectional)
and, beside the window, the s first tokens of the sequence: the "attention sinks" that
StreamingLLM keeps so that the softmax has somewhere to put mass it does not need; a
decoder then runs on a cache of s + w tokens, whatever the length.

gpt-oss instead learns one sink logit per head (transformers' ``eager_attention_forward``
for gpt-oss): the logit is appended to every row of scores, the softmax runs over the row
and the sink, and the sink's column is dropped, so each row sums to 1 − m_i with

    m_i = e^{σ_h} / (e^{σ_h} + Σ_j e^{s_ij}) = sigmoid(σ_h − lse_i).

Computed as query blocks against their gathered band plus the s sink columns
(engine.variants.blocks): O(n·(w + s)·d) time. The sink logit then only rescales each
row by 1 − m_i = sigmoid(lse_i − σ_h), so it costs nothing per key. The map is exact;
with the learned sink its rows sum to 1 − m_i: the missing mass is the sink's column,
given as ``extra["sink_mass"] [B, H, N]``, and the Trace carries ``maps["with_sink"]``,
the n × (n + 1) map with that column last, whose rows sum to 1.
"""

from __future__ import annotations

import numpy as np
import torch

from engine.errors import InputError
from engine.messages import Message
from engine.trace import AttentionMap
from engine.variants.base import Output, Param, Variant, default_scale
from engine.variants.blocks import band_allowed, block_attention, blocked_memory, query_positions

SINK_LABEL = "⟨sink⟩"


def _block(w: int) -> int:
    return max(16, min(w, 256))


def window_keys(n: int, w: int, s: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Query positions ``[nb, b]``, key positions ``[nb, kk]`` and which are sink columns."""
    b = _block(w)
    q_pos = query_positions(n, b)
    band = q_pos[:, :1] - (w - 1) + torch.arange(b + 2 * (w - 1))
    sinks = torch.arange(s).expand(q_pos.shape[0], s)
    key_idx = torch.cat([band, sinks], dim=1)
    is_sink = torch.arange(key_idx.shape[1]) >= band.shape[1]
    return q_pos, key_idx, is_sink


def sink_window_attention(q, k, v, w: int, s: int, sink_logits=None, *, causal, want_map):
    """``(out, weights | None, pattern | None, sink_mass [B, H, N])``.

    ``sink_logits [H]`` (or None: no learned sink, rows sum to 1).
    """
    B, H, n, D = q.shape
    q_pos, key_idx, is_sink = window_keys(n, w, s)
    ok = band_allowed(q_pos, key_idx, n, causal=causal)
    i, j = q_pos[:, :, None], key_idx[:, None, :]
    in_window = ((i - j).abs() < w) & (j >= s)  # a sink inside the window comes from its column
    allowed = (ok & (in_window | is_sink)).expand(B, H, *ok.shape)
    out, lse, p = block_attention(
        q, k, v, key_idx, allowed, scale=default_scale(D), want_map=want_map
    )
    pattern = None
    if want_map:
        pattern = torch.zeros(n, n, dtype=torch.bool)
        pi = q_pos[:, :, None].expand(allowed.shape[-3:])
        pj = key_idx[:, None, :].expand(allowed.shape[-3:])
        keep = allowed[0, 0] & (pi < n)
        pattern[pi[keep], pj[keep]] = True
    if sink_logits is None:
        return out, p, pattern, torch.zeros_like(lse)
    keep = torch.sigmoid(lse - sink_logits.to(lse.dtype)[:, None])  # 1 − m_i, (B, H, N)
    out = out * keep[..., None]
    if want_map:
        p = p * keep[..., None]
    return out, p, pattern, 1 - keep


class Sinks(Variant):
    name = "sinks"
    grid_budget = {"window": 16, "sinks": 4}
    title = "Sliding window + sinks (StreamingLLM, gpt-oss)"
    paper = "Xiao et al. 2023, StreamingLLM; OpenAI 2025, gpt-oss (learned sink logit)"
    time_complexity = "O(n·(w + s)·d)"
    memory_complexity = "O(n·(w + s))"
    params = (
        Param("window", "window w (recent keys)", 8, 1, 4096, help="keys i − w < j ≤ i"),
        Param("sinks", "sink tokens s", 2, 0, 64, help="the first s tokens stay visible"),
        Param(
            "sink_logit",
            "learned sink logit σ",
            0.0,
            -20,
            20,
            help="one extra logit per row (each head), dropped after the softmax",
        ),
        Param(
            "logit",
            "learned sink logit",
            "on",
            choices=("on", "off"),
            help="off: StreamingLLM's sink tokens only; rows sum to 1",
        ),
    )
    map_normalized = False
    map_note = (
        "Exact weights of window + sink tokens; rows sum to 1 − m, where m, the mass the "
        "learned sink logit takes, is the sink's own column beside the keys (sink_mass). "
        "In the trained grid σ is a real value learned per head, as in gpt-oss; on "
        "untrained inputs it is the one value set here, for every head."
    )

    def check_length(self, n, hp):
        for name in ("window", "sinks"):
            if hp[name] > n:
                label = next(p.label for p in self.params if p.name == name)
                raise InputError("variant.over_n", label=label, n=n, value=hp[name])

    def learned(self, heads: int, d: int) -> dict[str, torch.Tensor]:
        """gpt-oss's sink logit σ_h, one real value per head, starting at 0 (m = 1/(1 + Σ))."""
        return {"sink_logit": torch.zeros(heads)}

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        H = q.shape[1]
        sink = hp["sink_logit"]  # a number set for every head, or the model's learned [H]
        if hp["logit"] == "off":
            sink = None
        elif not torch.is_tensor(sink):
            sink = torch.full((H,), float(sink), dtype=q.dtype)
        out, p, pattern, mass = sink_window_attention(
            q, k, v, hp["window"], hp["sinks"], sink, causal=causal, want_map=want_map
        )
        if not want_map:
            return Output(out)
        return Output(out, p, pattern, extra={"sink_mass": mass})

    def trace(self, q, k, v, **kw):
        """The base Trace plus ``maps["with_sink"]``: the map with the sink's column appended
        (key label ``⟨sink⟩``), whose rows sum to 1 — where the missing mass went."""
        tr = super().trace(q, k, v, **kw)
        amap = tr.maps["attention"]
        mass = tr.vectors["sink_mass"][..., None]  # (B, H, N, 1)
        tr.maps["with_sink"] = AttentionMap(
            weights=np.concatenate([amap.weights, mass], axis=-1),
            query_labels=amap.query_labels,
            key_labels=[*amap.key_labels, SINK_LABEL],
            kind=amap.kind,
            layer_labels=amap.layer_labels,
            note=Message("note.with_sink"),
        )
        return tr

    def _keys(self, hp):
        w, s = hp["window"], hp["sinks"]
        return _block(w) + 2 * (w - 1) + s

    def flops(self, n, d, hp):
        return 4.0 * n * self._keys(hp) * d + 5.0 * n * self._keys(hp)

    def memory(self, n, d, hp):
        return blocked_memory(n, d, _block(hp["window"]), self._keys(hp))

    def cache_bytes(self, n: int, d: int, heads: int, hp: dict | None = None) -> int:
        """the s sink tokens and the last w tokens: the cache stops growing at s + w"""
        hp = self.resolve(hp)
        return super().cache_bytes(min(n, hp["window"] + hp["sinks"]), d, heads)
