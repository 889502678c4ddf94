"""Linear attention (Katharopoulos et al. 2020, "Transformers are RNNs"), elu + 1 features.

The softmax similarity exp(q·k/√d) is replaced by a kernel φ(q)ᵀφ(k), φ(x) = elu(x) + 1
(positive, so the weights stay non-negative), and the product is reassociated:

    V'_i = φ(Q_i)ᵀ Σ_j φ(K_j) V_jᵀ / φ(Q_i)ᵀ Σ_j φ(K_j)            (eq. 5–6)

Bidirectional: S = φ(K)ᵀV and z = φ(K)ᵀ1 once, O(n·d²) time, O(d²) state. Causal: the sums
run over j ≤ i (S_i = S_{i−1} + φ(K_i)V_iᵀ, the RNN form of §3.4), computed here as
prefix sums over blocks of 64 rows. It is a different attention, not an approximation
of softmax: its error against full attention is shown but is no quality score. It is
the baseline of Zoology (Arora et al. 2023) for associative recall.

Implied map: A_ij = φ(Q_i)·φ(K_j) / Σ_j φ(Q_i)·φ(K_j); out = A V holds exactly.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from engine.variants.base import FLOAT_BYTES, Output, Variant, dense_pattern

BLOCK = 64  # causal rows per block: the (block × d × d) prefix states stay small


def feature_map(x: torch.Tensor) -> torch.Tensor:
    """φ(x) = elu(x) + 1 > 0 (Katharopoulos et al. 2020, eq. 7)."""
    return F.elu(x) + 1


def causal_linear(phi_q, phi_k, v) -> torch.Tensor:
    """Σ_{j≤i} (φ(q_i)·φ(k_j)) v_j / Σ_{j≤i} φ(q_i)·φ(k_j), one block of rows at a time.

    Inside a block the pairs are formed directly (masked to j ≤ i); the state
    S = Σ φ(k_j) v_jᵀ and z = Σ φ(k_j) of all earlier blocks carries the rest.
    """
    B, H, n, D = phi_q.shape
    S = phi_q.new_zeros(B, H, D, v.shape[-1])
    z = phi_q.new_zeros(B, H, D)
    outs = []
    for r0 in range(0, n, BLOCK):
        fq, fk, vb = (t[:, :, r0 : r0 + BLOCK] for t in (phi_q, phi_k, v))
        a = (fq @ fk.transpose(-2, -1)).tril()  # (B, H, c, c): pairs j ≤ i inside the block
        num = fq @ S + a @ vb
        den = (fq * z[:, :, None]).sum(-1, keepdim=True) + a.sum(-1, keepdim=True)
        outs.append(num / den)
        S = S + fk.transpose(-2, -1) @ vb
        z = z + fk.sum(dim=-2)
    return torch.cat(outs, dim=2)


class Linear(Variant):
    name = "linear"
    swappable = True
    title = "Linear attention (elu + 1)"
    paper = "Katharopoulos et al. 2020, Transformers are RNNs"
    time_complexity = "O(n·d²)"
    memory_complexity = "O(d²)"
    map_exact = False
    map_implied = True
    map_note = "Implied map: rows of φ(Q)φ(K)ᵀ normalised, φ = elu + 1."
    approximates_full = False

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        phi_q, phi_k = feature_map(q), feature_map(k)  # (B, H, n, D)
        if causal:
            out = causal_linear(phi_q, phi_k, v)
        else:
            S = phi_k.transpose(-2, -1) @ v  # Σ_j φ(K_j) V_jᵀ (B, H, D, D)
            z = phi_k.sum(dim=-2)  # Σ_j φ(K_j) (B, H, D)
            out = (phi_q @ S) / (phi_q * z[:, :, None]).sum(-1, keepdim=True)
        if not want_map:
            return Output(out)
        a = phi_q @ phi_k.transpose(-2, -1)
        if causal:
            a = a.tril()
        return Output(out, a / a.sum(dim=-1, keepdim=True), dense_pattern(q.shape[-2], causal))

    def cache_bytes(self, n, d, heads, hp=None):
        """Σ φ(k)vᵀ and Σ φ(k): d × (d + 1) per head"""
        return heads * d * (d + 1) * FLOAT_BYTES

    def flops(self, n, d, hp):
        return 2.0 * 2 * n * d * d + 4.0 * n * d + 6.0 * n * d  # φ(K)ᵀV, φ(Q)S; norms; φ

    def memory(self, n, d, hp):
        return (2.0 * n * d + d * d + d) * FLOAT_BYTES  # φ(Q), φ(K), S, z
