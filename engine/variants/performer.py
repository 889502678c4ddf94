"""Performer (Choromanski et al. 2021): FAVOR+ positive orthogonal random features.

softmax kernel exp(qᵀk) = E_ω[φ(q)ᵀφ(k)] with φ(x) = exp(ωᵀx − ‖x‖²/2)/√m, ω ~ N(0, I_d)
drawn in orthogonal blocks (FAVOR+). With x = q/d^{1/4} and k/d^{1/4} the scaled
softmax of attention is approximated without the n × n matrix:

    out = D⁻¹ (φ(Q) (φ(K)ᵀ V)),   D = diag(φ(Q) (φ(K)ᵀ 1_n))

Time O(n·m·d), memory O(n·m + m·d): linear in n (not O(n log n) as some tables say).
Implied map: the rows of φ(Q)φ(K)ᵀ normalised by D. Bidirectional here (the causal form
needs prefix sums).
"""

from __future__ import annotations

import torch

from engine.variants.base import FLOAT_BYTES, Output, Param, Variant, generator


def orthogonal_features(m: int, d: int, seed: int) -> torch.Tensor:
    """ω ``[m, d]``: stacked orthogonal d×d blocks with chi-distributed row norms."""
    g = generator(seed)
    blocks = []
    for _ in range((m + d - 1) // d):
        Qm, _ = torch.linalg.qr(torch.randn(d, d, generator=g))
        blocks.append(Qm.T)
    W = torch.cat(blocks)[:m]
    norms = torch.randn(m, d, generator=g).norm(dim=1, keepdim=True)
    return W * norms


def positive_features(x: torch.Tensor, W: torch.Tensor, *, per_row: bool) -> torch.Tensor:
    """φ(x) = exp(ωᵀx − ‖x‖²/2 − c)/√m; c (a row max or one global max) cancels in D⁻¹."""
    logits = (x @ W.T).sub_((x * x).sum(dim=-1, keepdim=True) / 2)  # (B, H, n, m)
    c = logits.amax(dim=-1, keepdim=True) if per_row else logits.amax(dim=(-2, -1), keepdim=True)
    if torch.is_grad_enabled() and logits.requires_grad:  # autograd keeps exp's output
        return (logits - c).exp() * W.shape[0] ** -0.5
    # In place: at long n the (n × m) feature maps are what the time is spent moving.
    return logits.sub_(c).exp_().mul_(W.shape[0] ** -0.5)


class Performer(Variant):
    name = "performer"
    title = "Performer (FAVOR+)"
    paper = "Choromanski et al. 2021, Rethinking Attention with Performers"
    time_complexity = "O(n·m·d)"
    memory_complexity = "O(n·m + m·d)"
    params = (
        Param("features", "random features m", 128, 8, 4096, help="more features → lower variance"),
    )
    map_exact = False
    map_implied = True
    map_note = "Implied map: rows of φ(Q)φ(K)ᵀ normalised."
    causal_support = "never"

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        d = q.shape[-1]
        W = orthogonal_features(hp["features"], d, hp["seed"]).to(q.dtype)
        scale = d**-0.25
        phi_q = positive_features(q * scale, W, per_row=True)  # (B, H, n, m)
        phi_k = positive_features(k * scale, W, per_row=False)
        kv = phi_k.transpose(-2, -1) @ v  # (B, H, m, D)
        z = phi_q @ phi_k.sum(dim=-2, keepdim=True).transpose(-2, -1)  # (B, H, n, 1) = D
        out = (phi_q @ kv) / z
        weights = None
        if want_map:
            a = phi_q @ phi_k.transpose(-2, -1)
            weights = a / a.sum(dim=-1, keepdim=True)
        return Output(out, weights)

    def flops(self, n, d, hp):
        m = hp["features"]
        return 2.0 * 2 * n * m * d + 2.0 * n * m * d * 2 + 4.0 * n * m

    def memory(self, n, d, hp):
        m = hp["features"]
        return (3.0 * n * m + m * d) * FLOAT_BYTES
