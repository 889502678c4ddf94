"""Retention (Sun et al. 2023, RetNet, arXiv 2307.08621): linear attention with a fixed
exponential decay per head and a rotation for relative position.

Parallel form (eq. 5):   Retention(X) = (Q Kᵀ ⊙ D) V,   D_tj = γ^{t−j} for j ≤ t, else 0
Recurrent form (eq. 6):  S_t = γ S_{t−1} + K_tᵀ V_t,   o_t = Q_t S_t

with Q, K rotated by position (the paper's Θ, e^{inθ}: here RoPE with base 10⁴), K scaled
by 1/√d, and γ_h = 1 − 2^{−5−h} for head h, the paper's multi-scale decays. The paper's
normalisations (of D's rows, then a GroupNorm of each head's output) act on the output
after the map and are left out, so out = A V holds exactly.

The output runs in the chunkwise form (§2.1, eq. 7) shared with GLA (whose per-channel
gate is here one constant, log γ_h, on every channel). The implicit map is the parallel
form's (Q Kᵀ ⊙ D)/√d: causal, signed, not normalised. State: d×d numbers per head.
"""

from __future__ import annotations

import math

import torch

from engine.errors import InputError
from engine.messages import Message
from engine.variants.base import FLOAT_BYTES, Output, Variant, dense_pattern
from engine.variants.gla import chunk_flops, chunk_memory, chunkwise
from engine.variants.mla import rope


def decays(heads: int, dtype=torch.float64) -> torch.Tensor:
    """γ_h = 1 − 2^{−5−h}, h = 0 … H−1: head 0 forgets fastest (half-life ≈ 22 tokens)."""
    return 1 - 2.0 ** (-5 - torch.arange(heads, dtype=dtype))


def decay_matrix(n: int, gamma: torch.Tensor) -> torch.Tensor:
    """D ``[H, n, n]``: γ^{t−j} below the diagonal and on it, 0 above."""
    t = torch.arange(n)
    gap = (t[:, None] - t[None, :]).to(gamma.dtype)
    d = gamma[:, None, None] ** gap.clamp(min=0)
    return d * (gap >= 0)


def rotate(q: torch.Tensor, k: torch.Tensor, scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Q and K rotated by position; K scaled by 1/√d."""
    return rope(q), rope(k) * scale


class RetNet(Variant):
    name = "retnet"
    title = "Retention (RetNet)"
    needs_training = "llm_variant.why_recurrent"
    paper = "Sun et al. 2023, Retentive Network"
    time_complexity = "O(n·(C·d + d²))"
    memory_complexity = "O(n·C·d)"
    map_exact = False
    map_implied = True
    map_normalized = False
    map_signed = True
    map_note = (
        "Implicit map (QKᵀ ⊙ D)/√d, D_tj = γ^(t−j): the parallel form; signed. The decays "
        "are the paper's, γ_h = 1 − 2^(−5−h) for h < H, so they depend on the number of "
        "heads: in the grid's models (2 heads) γ = 0.969 and 0.984, and a key 256 tokens "
        "back keeps at most 1.8 % of its weight (37 % at 64), where the paper's 8 to 16 "
        "heads reach γ = 1 − 2^−12 to 1 − 2^−20."
    )
    causal_support = "always"
    approximates_full = False

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        B, H, N, D = q.shape
        if D % 2:
            raise InputError("variant.even_head", title=self.title, d=D)
        qr, kr = rotate(q, k, 1.0 / math.sqrt(D))
        log_gamma = decays(H, q.dtype).log()[:, None, None].expand(H, N, D)
        out = chunkwise(qr, kr, v, log_gamma.expand(B, H, N, D), 1.0)
        gammas = ", ".join(f"{g:.4f}" for g in decays(H).tolist())
        notes = [Message("note.retnet_gammas", gammas=gammas)]
        if not want_map:
            return Output(out, notes=notes)
        a = (qr @ kr.transpose(-2, -1)) * decay_matrix(N, decays(H, q.dtype))
        return Output(out, a, dense_pattern(N, True), notes=notes)

    def flops(self, n, d, hp):
        return chunk_flops(n, d) + 12.0 * n * d  # the chunkwise retention and the rotations

    def memory(self, n, d, hp):
        return chunk_memory(n, d)

    def cache_bytes(self, n: int, d: int, heads: int, hp: dict | None = None) -> int:
        """the d×d recurrent state per head, whatever the length"""
        return heads * d * d * FLOAT_BYTES
