"""Based (Arora et al. 2024, arXiv 2402.18668): linear attention with a 2nd-order Taylor
feature map, small enough to recall and cheap enough to keep a fixed state.

q and k are projected to d' feature dims (the paper's 16), then

    φ(x) = [1, x / d'^{1/4}, (x ⊗ x) / (√2·√d')]   so   φ(q)·φ(k) = 1 + s + s²/2,
    s = q̃·k̃ / √d',

the Taylor expansion of exp(s) to second order. 1 + s + s²/2 > 0 for every s, so the
weights stay positive and each row is normalised as in linear attention:

    o_i = Σ_{j≤i} φ(q_i)·φ(k_j) v_j / Σ_{j≤i} φ(q_i)·φ(k_j)

The recurrent state is S = Σ φ(k_j) v_jᵀ and z = Σ φ(k_j): (1 + d' + d'²)·(d + 1)
numbers per head, fixed in n. The Based architecture interleaves these layers with
small sliding-window softmax layers (``sinks`` with s = 0 is that window). The implicit
map (1 + s + s²/2) row-normalised is exact for the output: out = A V.
"""

from __future__ import annotations

import math

import torch

from engine.variants.base import FLOAT_BYTES, Output, Param, Variant, dense_pattern, generator
from engine.variants.linear import causal_linear


def projections(d: int, d_feat: int, seed: int, dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """W_q, W_k ``[d, d']`` (seeded): the feature projection of queries and keys."""
    g = generator(seed)
    return tuple((torch.randn(d, d_feat, generator=g) / math.sqrt(d)).to(dtype) for _ in range(2))


def taylor_features(x: torch.Tensor) -> torch.Tensor:
    """φ(x) ``[..., 1 + d' + d'²]`` with φ(q)·φ(k) = 1 + q·k/√d' + (q·k)²/(2d')."""
    d_feat = x.shape[-1]
    x = x / d_feat**0.25
    outer = (x[..., :, None] * x[..., None, :]).flatten(-2) / math.sqrt(2)
    return torch.cat([torch.ones_like(x[..., :1]), x, outer], dim=-1)


def kernel_matrix(qf: torch.Tensor, kf: torch.Tensor) -> torch.Tensor:
    """1 + s + s²/2 with s = q̃·k̃/√d', formed directly (not through φ)."""
    s = (qf @ kf.transpose(-2, -1)) / math.sqrt(qf.shape[-1])
    return 1 + s + s * s / 2


class Based(Variant):
    name = "based"
    title = "Based (Taylor linear attention)"
    paper = (
        "Arora et al. 2024, Simple linear attention language models balance the "
        "recall-throughput tradeoff"
    )
    time_complexity = "O(n·d'²·d)"
    memory_complexity = "O(d'²·d)"
    params = (
        Param(
            "features", "feature dim d'", 16, 1, 64, help="state (1 + d' + d'²)·(d + 1) per head"
        ),
    )
    map_exact = False
    map_implied = True
    map_note = "Implied map: rows of 1 + s + s²/2 (Taylor exp) normalised; positive."
    approximates_full = False

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        W_q, W_k = projections(q.shape[-1], hp["features"], hp["seed"], q.dtype)
        qf, kf = q @ W_q, k @ W_k
        phi_q, phi_k = taylor_features(qf), taylor_features(kf)
        if causal:
            out = causal_linear(phi_q, phi_k, v)
        else:
            S = phi_k.transpose(-2, -1) @ v
            z = phi_k.sum(dim=-2)
            out = (phi_q @ S) / (phi_q * z[:, :, None]).sum(-1, keepdim=True)
        if not want_map:
            return Output(out)
        a = kernel_matrix(qf, kf)
        if causal:
            a = a.tril()
        return Output(out, a / a.sum(-1, keepdim=True), dense_pattern(q.shape[-2], causal))

    def flops(self, n, d, hp):
        f = 1 + hp["features"] + hp["features"] ** 2
        # Projections to d', the features, φ(K)ᵀV and φ(Q)S with their normalisers.
        return 4.0 * n * d * hp["features"] + 2.0 * n * f + 4.0 * n * f * (d + 1)

    def memory(self, n, d, hp):
        f = 1 + hp["features"] + hp["features"] ** 2
        # φ(Q), φ(K), the normaliser's product φ(Q)·z and the projections (≈ 4·n·f measured).
        return (4.0 * n * f + f * (d + 1)) * FLOAT_BYTES

    def state_bytes(self, d: int, heads: int, hp: dict | None = None) -> int:
        hp = self.resolve(hp)
        f = 1 + hp["features"] + hp["features"] ** 2
        return heads * f * (d + 1) * FLOAT_BYTES

    def cache_bytes(self, n: int, d: int, heads: int, hp: dict | None = None) -> int:
        """What a decoder holds after n tokens, per layer: the state, whatever n."""
        return self.state_bytes(d, heads, hp)
