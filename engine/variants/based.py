"""Based (Arora et al. 2024, arXiv 2402.18668): linear attention with a 2nd-order Taylor
feature map, small enough to recall and cheap enough to keep a fixed state.

q and k are projected to d' feature dims (the paper's 16) by learned maps (the paper's
``proj_q``, ``proj_k``: d_model → d'). Here those maps are the model's own W_Q, W_K: the
feature inputs are the first d' dims of each head's q and k (d' is clamped to the head
width). A fixed random projection in their place (this variant until issue 31) left a
trained Based on the recall plateau: on Zoology's (128, 8) at d = 64 it stayed at chance
(0.015 after 2,000 steps), the first d' dims reach 1.000 by step ~300. Then

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

from engine.variants import linear
from engine.variants.base import FLOAT_BYTES, Output, Param, Variant, dense_pattern

ROWS = 512  # tokens whose features are formed at once: they stay in cache


def feature_inputs(q: torch.Tensor, k: torch.Tensor, d_feat: int):
    """q̃, k̃ ``[..., min(d', d)]``: the first d' dims of q and k, so the model's learned
    W_Q, W_K rows are the paper's feature projections (no weights of the variant's own)."""
    return q[..., :d_feat], k[..., :d_feat]


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


def causal_blocks(qf, kf, v) -> torch.Tensor:
    """linear.causal_linear block by block, each block's φ formed as it is reached (the
    whole φ(Q), φ(K) at once made the causal time grow as n^1.26)."""
    block = linear.BLOCK
    f = taylor_features(kf[..., :1, :]).shape[-1]
    S = v.new_zeros(*v.shape[:2], f, v.shape[-1])
    z = v.new_zeros(S.shape[:-1])
    outs = []
    for r0 in range(0, kf.shape[-2], block):
        fq, fk = (taylor_features(x[:, :, r0 : r0 + block]) for x in (qf, kf))
        vb = v[:, :, r0 : r0 + block]
        a = (fq @ fk.transpose(-2, -1)).tril()  # pairs j ≤ i inside the block
        num = fq @ S + a @ vb
        den = fq @ z[..., None] + a.sum(-1, keepdim=True)
        outs.append(num / den)
        S = S + fk.transpose(-2, -1) @ vb
        z = z + fk.sum(dim=-2)
    return torch.cat(outs, dim=2)


def bidirectional(qf, kf, v, rows: int = ROWS) -> torch.Tensor:
    """φ(Q)·S / φ(Q)·z with S = φ(K)ᵀV and z = Σ φ(k_j), ``rows`` tokens of features at a
    time: the whole φ(Q) and φ(K), (1 + d' + d'²) numbers per token (72 MB each at
    n = 16k, 4 heads), left the caches and made the time grow as n^1.6."""
    S = v.new_zeros(*v.shape[:2], taylor_features(kf[..., :1, :]).shape[-1], v.shape[-1])
    z = v.new_zeros(S.shape[:-1])
    for r0 in range(0, kf.shape[-2], rows):
        phi_k = taylor_features(kf[:, :, r0 : r0 + rows])
        S = S + phi_k.transpose(-2, -1) @ v[:, :, r0 : r0 + rows]
        z = z + phi_k.sum(dim=-2)
    outs = []
    for r0 in range(0, qf.shape[-2], rows):
        phi_q = taylor_features(qf[:, :, r0 : r0 + rows])
        outs.append((phi_q @ S) / (phi_q @ z[..., None]))
    return torch.cat(outs, dim=2)


class Based(Variant):
    name = "based"
    grid_budget = {"features": 16}
    title = "Based (Taylor linear attention)"
    needs_training = "llm_variant.why_based"
    paper = (
        "Arora et al. 2024, Simple linear attention language models balance the "
        "recall-throughput tradeoff"
    )
    time_complexity = "O(n·d'²·d)"
    memory_complexity = "O(d'²·d)"
    params = (
        Param(
            "features",
            "feature dim d'",
            16,
            1,
            64,
            help="state (1 + d' + d'²)·(d + 1) per head, d' at most the head width",
        ),
    )
    map_exact = False
    map_implied = True
    map_note = (
        "Implied map: rows of 1 + s + s²/2 (Taylor exp) on the first d' dims of q, k, "
        "normalised; positive."
    )
    approximates_full = False

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        qf, kf = feature_inputs(q, k, hp["features"])
        if causal:
            out = causal_blocks(qf, kf, v)
        else:
            out = bidirectional(qf, kf, v)
        if not want_map:
            return Output(out)
        a = kernel_matrix(qf, kf)
        if causal:
            a = a.tril()
        return Output(out, a / a.sum(-1, keepdim=True), dense_pattern(q.shape[-2], causal))

    def flops(self, n, d, hp):
        f = 1 + min(hp["features"], d) + min(hp["features"], d) ** 2
        # The features, φ(K)ᵀV and φ(Q)S with their normalisers (no projection of its own).
        return 2.0 * n * f + 4.0 * n * f * (d + 1)

    def memory(self, n, d, hp):
        f = 1 + min(hp["features"], d) + min(hp["features"], d) ** 2
        # One block of φ features at a time (ROWS rows at most, for φ(Q), φ(K) and their
        # products) and the state S, z.
        rows = min(n, ROWS)
        return (4.0 * rows * f + f * (d + 1)) * FLOAT_BYTES

    def cache_bytes(self, n: int, d: int, heads: int, hp: dict | None = None) -> int:
        """the (1 + d' + d'²)·(d + 1) state per head, whatever the length"""
        hp = self.resolve(hp)
        d_feat = min(hp["features"], d)
        f = 1 + d_feat + d_feat**2
        return heads * f * (d + 1) * FLOAT_BYTES
