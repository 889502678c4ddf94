"""DeltaNet (Yang et al. 2024, arXiv 2406.06484) and Gated DeltaNet (Yang, Kautz &
Hatamizadeh 2024, arXiv 2412.06464): linear attention that *edits* its memory.

Linear attention only adds v_t k_tᵀ to its state; the delta rule first removes what the
state already stores under k_t, so a key written twice is overwritten, not summed:

    DeltaNet:        S_t = S_{t−1} (I − β_t k_t k_tᵀ) + β_t v_t k_tᵀ,        o_t = S_t q_t
    Gated DeltaNet:  S_t = S_{t−1} α_t (I − β_t k_t k_tᵀ) + β_t v_t k_tᵀ

with q, k L2-normalised per head (as both papers), β_t = sigmoid(k_t·w_β) ∈ (0, 1) the
writing strength and α_t = exp(−softplus(k_t·w_α + b_α)) ∈ (0, 1) the gate that lets
the whole memory fade (seeded, untrained; the papers read them from the layer input).
Unrolled, with M_m = α_m (I − β_m k_m k_mᵀ) (α = 1 for DeltaNet):

    o_t = Σ_{j≤t} A_tj v_j,    A_tj = β_j k_jᵀ M_{j+1} ⋯ M_t q_t

— a causal, signed attention matrix (the removals make entries negative) that the model
never forms. The output runs the recurrence step by step (O(n·d²) time, d×d state; the
papers' chunkwise WY form computes the same numbers with matmuls on a GPU);
``implicit_map`` forms A by carrying every query back through the M's, O(n²·d).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from engine.variants.base import FLOAT_BYTES, Output, Variant, dense_pattern, generator

GATE_BIAS = math.log(math.expm1(0.05))  # softplus(b) = 0.05: α ≈ 0.95 before the input


def normalize(x: torch.Tensor) -> torch.Tensor:
    return x / x.norm(dim=-1, keepdim=True).clamp(min=1e-6)


def write_strength(k: torch.Tensor, seed: int, gated: bool):
    """β ``[B, H, N]`` and log α ``[B, H, N]`` (zeros without the gate), seeded."""
    D = k.shape[-1]
    g = generator(seed)
    w_beta = (torch.randn(D, generator=g) / math.sqrt(D)).to(k.dtype)
    w_alpha = (torch.randn(D, generator=g) / math.sqrt(D)).to(k.dtype)
    beta = torch.sigmoid(k @ w_beta)
    log_alpha = -F.softplus(k @ w_alpha + GATE_BIAS) if gated else torch.zeros_like(beta)
    return beta, log_alpha


def delta_recurrent(q, k, v, beta, log_alpha) -> torch.Tensor:
    """o_t = S_t q_t step by step; S is kept transposed ``[B, H, d_k, d_v]``.

    S_t = α_t (S_{t−1} − β_t k_t (k_tᵀ S_{t−1})) + β_t k_t v_tᵀ, the same update.
    """
    B, H, N, D = q.shape
    S = q.new_zeros(B, H, D, v.shape[-1])
    outs = []
    for t in range(N):
        kt = k[:, :, t, :, None]  # (B, H, d, 1)
        a, b = log_alpha[:, :, t, None, None].exp(), beta[:, :, t, None, None]
        S = a * (S - b * kt @ (kt.transpose(-2, -1) @ S)) + b * kt * v[:, :, t, None, :]
        outs.append((q[:, :, t, None, :] @ S).squeeze(-2))
    return torch.stack(outs, dim=2)


def implicit_map(q, k, beta, log_alpha) -> torch.Tensor:
    """A_tj = β_j k_jᵀ M_{j+1} ⋯ M_t q_t ``[B, H, N, N]`` (0 above the diagonal).

    Going backwards over j, row t holds M_{j+1} ⋯ M_t q_t; it is read against k_j, then
    M_j (symmetric) is applied to the rows t ≥ j.
    """
    B, H, N, D = q.shape
    R = q.clone()
    A = q.new_zeros(B, H, N, N)
    rows = torch.arange(N)
    for j in range(N - 1, -1, -1):
        kj = k[:, :, j]  # (B, H, d)
        live = (rows >= j)[:, None]  # (N, 1)
        A[:, :, :, j] = beta[:, :, j, None] * (R @ kj[..., None]).squeeze(-1) * live[:, 0]
        moved = log_alpha[:, :, j, None, None].exp() * (
            R - beta[:, :, j, None, None] * (R @ kj[..., None]) * kj[:, :, None, :]
        )
        R = torch.where(live, moved, R)
    return A


class DeltaNet(Variant):
    name = "deltanet"
    title = "DeltaNet (delta rule)"
    paper = "Yang et al. 2024, Parallelizing Linear Transformers with the Delta Rule"
    time_complexity = "O(n·d²)"
    memory_complexity = "O(n·d + d²)"
    map_exact = False
    map_implied = True
    map_normalized = False
    map_signed = True
    map_note = (
        "Implicit map A_tj = β_j k_jᵀ M_(j+1)⋯M_t q_t of the delta rule; signed (removals "
        "are negative), not normalised."
    )
    causal_support = "always"
    approximates_full = False
    gated: bool = False

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        beta, log_alpha = write_strength(k, hp["seed"], self.gated)
        qn, kn = normalize(q), normalize(k)
        out = delta_recurrent(qn, kn, v, beta, log_alpha)
        if not want_map:
            return Output(out)
        a = implicit_map(qn, kn, beta, log_alpha)
        extra = {"beta": beta}
        if self.gated:
            extra["alpha"] = log_alpha.exp()
        return Output(out, a, dense_pattern(q.shape[-2], True), extra=extra)

    def flops(self, n, d, hp):
        # Per step: kᵀS (2d²), the rank-1 removal and write (≈ 4d²), gate scaling (d²), qS
        # (2d²); the norms and the β (and α) projections.
        return n * (9.0 * d * d + 10.0 * d)

    def memory(self, n, d, hp):
        # Normalised q, k, β (and α), the per-step outputs stacked; the state.
        return (3.0 * n * d + 2.0 * n + d * d) * FLOAT_BYTES

    def state_bytes(self, d: int, heads: int, hp: dict | None = None) -> int:
        return heads * d * d * FLOAT_BYTES

    def cache_bytes(self, n: int, d: int, heads: int, hp: dict | None = None) -> int:
        """What a decoder holds after n tokens, per layer: the state, whatever n."""
        return self.state_bytes(d, heads, hp)


class GatedDeltaNet(DeltaNet):
    name = "gated_deltanet"
    title = "Gated DeltaNet (delta rule + decay)"
    paper = "Yang, Kautz & Hatamizadeh 2024, Gated Delta Networks"
    map_note = (
        "Implicit map A_tj = β_j k_jᵀ M_(j+1)⋯M_t q_t, M = α(I − βkkᵀ); signed, not normalised."
    )
    gated = True
