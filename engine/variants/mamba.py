"""Mamba (Gu & Dao 2023): a selective state-space scan, and its hidden attention.

Per channel d and state n, with input-dependent Δ, B, C (the "selection"):

    Ā_t = exp(Δ_t A),   B̄_t = Δ_t B_t,   h_t = Ā_t h_{t−1} + B̄_t x_t,   y_t = C_t h_t

Unrolled (Ali, Zimerman & Wolf 2024, "The Hidden Attention of Mamba Models"):

    y_i = Σ_{j≤i} α_ij x_j,   α_ij = C_i (∏_{k=j+1..i} Ā_k) B̄_j

so Mamba is a causal, data-controlled linear attention whose map is never formed.
In this lab's Q/K/V frame: x = V, B_t = K_t W_B, C_t = Q_t W_C, Δ_t = softplus(V_t W_Δ + b_Δ),
A = −(1 … N) per channel (S4D-real), all seeded and untrained; the D·x skip term is left
out so y = α x holds exactly. It is a different model, not an approximation of softmax
attention: its error vs full attention is shown, but is not a quality score.

A two-level scan (inside chunks of 64 steps, then across chunks) keeps the time
O(n·d·N) and memory O(n·d·N) — linear in n.
Implied map: α_ij averaged over channels, as in Ali et al.; rows do not sum to 1.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from engine.variants.base import FLOAT_BYTES, Output, Param, Variant, generator

CHUNK = 64


def selective_parameters(q, k, v, d_state: int, seed: int):
    """x, Δ ``[B, H, n, D]``, B, C ``[B, H, n, N]`` and A ``[D, N]`` (seeded, untrained)."""
    D = q.shape[-1]
    g = generator(seed)
    W_B = torch.randn(D, d_state, generator=g) / math.sqrt(D)
    W_C = torch.randn(D, d_state, generator=g) / math.sqrt(D)
    W_dt = torch.randn(D, D, generator=g) / math.sqrt(D)
    # Mamba's Δ init: dt log-uniform in [0.001, 0.1], b_Δ = softplus⁻¹(dt).
    dt = torch.exp(torch.rand(D, generator=g) * (math.log(0.1) - math.log(0.001)) + math.log(0.001))
    b_dt = dt + torch.log(-torch.expm1(-dt))
    A = -torch.arange(1, d_state + 1, dtype=torch.float32).expand(D, d_state)
    dtype = q.dtype
    delta = F.softplus(v @ W_dt.to(dtype) + b_dt.to(dtype))
    return v, delta, k @ W_B.to(dtype), q @ W_C.to(dtype), A.to(dtype)


def selective_scan(x, delta, Bm, Cm, A) -> torch.Tensor:
    """y ``[B, H, n, D]`` by a two-level scan (no n × n tensor).

    The sequence is cut into chunks of c steps. Level 1 runs the recurrence inside every
    chunk at once from a zero state, hˡ_i = Ā_i hˡ_{i−1} + B̄_i x_i (c vectorised steps).
    Level 2 carries the state between chunks, h_{a+1} = e^{S_c} h_a + hˡ_c (n/c steps),
    with S_i = Σ_{k≤i} Δ_k A inside the chunk. Then y_i = C_i (hˡ_i + e^{S_i} h_a).
    """
    Bs, H, n, D = x.shape
    N, c = A.shape[-1], CHUNK
    nc = -(-n // c)
    pad = nc * c - n  # zero Δ on padded steps: Ā = 1, B̄ = 0, the state passes through
    delta, x, Bm, Cm = (F.pad(t, (0, 0, 0, pad)).unflatten(2, (nc, c))
                        for t in (delta, x, Bm, Cm))  # (B, H, nc, c, ·)
    log_a = delta[..., None] * A  # log Ā (B, H, nc, c, D, N)
    u = delta[..., None] * Bm[..., None, :] * x[..., None]  # B̄_i x_i
    local = torch.empty_like(u)
    h = u[:, :, :, 0]
    local[:, :, :, 0] = h
    for i in range(1, c):
        h = torch.exp(log_a[:, :, :, i]) * h + u[:, :, :, i]
        local[:, :, :, i] = h
    S = log_a.cumsum(dim=3)
    carry = torch.exp(S[:, :, :, -1])  # (B, H, nc, D, N)
    h = x.new_zeros(Bs, H, D, N)
    starts = []
    for a in range(nc):
        starts.append(h)
        h = carry[:, :, a] * h + local[:, :, a, -1]
    h0 = torch.stack(starts, dim=2)[:, :, :, None]  # (B, H, nc, 1, D, N)
    y = ((local + torch.exp(S) * h0) * Cm[..., None, :]).sum(dim=-1)  # (B, H, nc, c, D)
    return y.flatten(2, 3)[:, :, :n]


def hidden_attention(delta, Bm, Cm, A, *, per_channel: bool = False) -> torch.Tensor:
    """α_ij = C_i (∏_{k=j+1..i} Ā_k) B̄_j, ``[B, H, n, n]`` averaged over channels
    (``[B, H, D, n, n]`` with ``per_channel``). Display sizes only: O(n²·d·N) work."""
    Bs, H, n, D = delta.shape
    dd = delta.double()
    S = (dd[..., None] * A.double()).cumsum(dim=2)  # (B, H, n, D, N)
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    alpha = torch.zeros(Bs, H, D, n, n, dtype=torch.float64)
    for m in range(A.shape[-1]):
        Sm = S[..., m].transpose(-1, -2)  # (B, H, D, n)
        decay = torch.exp((Sm[..., :, None] - Sm[..., None, :]).masked_fill(~causal, -math.inf))
        cb = Cm[..., m].double()[..., :, None] * Bm[..., m].double()[..., None, :]  # (B, H, n, n)
        alpha += decay * cb[:, :, None] * dd.transpose(-1, -2)[..., None, :]  # · Δ_j
    return alpha if per_channel else alpha.mean(dim=2)


class Mamba(Variant):
    name = "mamba"
    title = "Mamba (selective SSM)"
    paper = "Gu & Dao 2023; hidden attention: Ali, Zimerman & Wolf 2024"
    time_complexity = "O(n·d·N)"
    memory_complexity = "O(n·d·N)"
    params = (Param("d_state", "state size N", 16, 1, 64),)
    map_exact = False
    map_implied = True
    map_normalized = False
    map_kind = "hidden"
    map_note = "Hidden attention α_ij (Ali et al. 2024), mean over channels; not normalised."
    causal_support = "always"
    approximates_full = False

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        x, delta, Bm, Cm, A = selective_parameters(q, k, v, hp["d_state"], hp["seed"])
        out = selective_scan(x, delta, Bm, Cm, A)
        weights = hidden_attention(delta, Bm, Cm, A).to(q.dtype) if want_map else None
        pattern = torch.ones(q.shape[-2], q.shape[-2], dtype=torch.bool).tril()
        return Output(out, weights, pattern if want_map else None,
                      notes=["Mamba is causal by construction."])

    def flops(self, n, d, hp):
        N = hp["d_state"]
        projections = 2.0 * n * d * (d + 2 * N)
        return projections + 12.0 * n * d * N

    def memory(self, n, d, hp):
        N = hp["d_state"]
        return (5.0 * n * d * N + 4.0 * n * d + 2 * n * N) * FLOAT_BYTES
