"""Mamba (Gu & Dao 2023): a selective state-space scan, and its hidden attention.

Per channel d and state n, with input-dependent Δ, B, C (the "selection"):

    Ā_t = exp(Δ_t A),   B̄_t = Δ_t B_t,   h_t = Ā_t h_{t−1} + B̄_t x_t,   y_t = C_t h_t

Unrolled (Ali, Zimerman & Wolf 2024, "The Hidden Attention of Mamba Models"):

    y_i = Σ_{j≤i} α_ij x_j,   α_ij = C_i (∏_{k=j+1..i} Ā_k) B̄_j

so Mamba is a causal, data-controlled linear attention whose map is never formed.
In this lab's Q/K/V frame: x = V, B_t = K_t W_B, C_t = Q_t W_C, Δ_t = softplus(V_t W_Δ + b_Δ),
A = −(1 … N) per channel (S4D-real), all seeded and untrained in the lab; inside the
grid's trained models W_B, W_C, W_Δ, b_Δ and log(−A) are learned per head from there, as
the paper learns them. The D·x skip term is left out so y = α x holds exactly. It is a
different model, not an approximation of softmax attention: its error vs full attention
is shown, but is not a quality score.

A two-level scan (inside chunks of 16 steps, then across chunks), run over segments of
steps with the state carried between them, keeps the time O(n·d·N) and the working set
to a few segments of ``SEGMENT_BYTES`` on top of the O(n·d) inputs and outputs — linear
in n. Within a segment the tensors are step-major, so each of the chunk's sequential
steps is one fused multiply-add over contiguous memory, and the segment fits in cache.
Implied map: α_ij averaged over channels, as in Ali et al.; rows do not sum to 1.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from engine.messages import Message
from engine.variants.base import (
    FLOAT_BYTES,
    Output,
    Param,
    Variant,
    dense_pattern,
    generator,
    per_head,
)

CHUNK = 16  # ≈ √(steps per segment): the two levels then loop about equally often
SEGMENT_BYTES = 2**20  # one [steps, B·H, d, N] float tensor of a segment: stays in L2


def segment_steps(batch_heads: int, d: int, d_state: int) -> int:
    """Steps per segment (a multiple of CHUNK) for one tensor of about SEGMENT_BYTES."""
    steps = SEGMENT_BYTES // (FLOAT_BYTES * batch_heads * d * d_state)
    return max(CHUNK, steps - steps % CHUNK)


SELECTION = ("W_B", "W_C", "W_dt", "b_dt", "A_log")  # what a trained model learns


def selection_weights(d: int, d_state: int, seed: int) -> dict[str, torch.Tensor]:
    """Seeded W_B, W_C ``[D, N]``, W_Δ ``[D, D]``, b_Δ ``[D]`` and A_log ``[D, N]``
    (A = −exp(A_log) = −(1 … N) per channel, S4D-real)."""
    g = generator(seed)
    W_B = torch.randn(d, d_state, generator=g) / math.sqrt(d)
    W_C = torch.randn(d, d_state, generator=g) / math.sqrt(d)
    W_dt = torch.randn(d, d, generator=g) / math.sqrt(d)
    # Mamba's Δ init: dt log-uniform in [0.001, 0.1], b_Δ = softplus⁻¹(dt).
    dt = torch.exp(torch.rand(d, generator=g) * (math.log(0.1) - math.log(0.001)) + math.log(0.001))
    b_dt = dt + torch.log(-torch.expm1(-dt))
    A_log = torch.arange(1, d_state + 1, dtype=torch.float32).log().expand(d, d_state)
    return {"W_B": W_B, "W_C": W_C, "W_dt": W_dt, "b_dt": b_dt, "A_log": A_log.clone()}


def selective_parameters(q, k, v, W: dict):
    """x, Δ ``[B, H, n, D]``, B, C ``[B, H, n, N]`` and A from ``W`` (selection_weights',
    ``[D, N]``; or a trained model's, one per head: A ``[H, D, N]``)."""
    dtype = q.dtype
    W = {name: t.to(dtype) for name, t in W.items()}
    b_dt = W["b_dt"] if W["b_dt"].dim() == 1 else W["b_dt"][:, None, :]  # per head: [H, 1, D]
    delta = F.softplus(v @ W["W_dt"] + b_dt)
    return v, delta, k @ W["W_B"], q @ W["W_C"], -W["A_log"].exp()


def selective_scan(x, delta, Bm, Cm, A) -> torch.Tensor:
    """y ``[B, H, n, D]``, segment by segment so the working set stays bounded."""
    Bs, H, n, D = x.shape
    if A.dim() == 3:  # one A per head: one per sequence of the flattened (B·H) batch
        A = A.repeat(Bs, 1, 1)[:, None]  # (B·H, 1, D, N), against [·, G, nc, D, N]
    h = x.new_zeros(Bs * H, D, A.shape[-1])  # the state carried between segments
    y = torch.empty_like(x)
    step = segment_steps(Bs * H, D, A.shape[-1])
    for s in range(0, n, step):
        seg = (t[:, :, s : s + step].flatten(0, 1) for t in (x, delta, Bm, Cm))
        y_s, h = _scan_segment(*seg, A, h)
        y[:, :, s : s + step] = y_s.unflatten(0, (Bs, H))
    return y


def _scan_segment(x, delta, Bm, Cm, A, h):
    """One segment ``[G, m, ·]`` (G = B·H sequences) from state ``h [G, D, N]``.

    The segment is cut into nc chunks of c steps. Level 1 runs the recurrence inside every
    chunk at once from a zero state, hˡ_i = Ā_i hˡ_{i−1} + B̄_i x_i (c steps, each one
    multiply-add over all chunks). Level 2 carries the state between chunks,
    h_{a+1} = P_c h_a + hˡ_c (nc steps), with P_i = Ā_1 ⋯ Ā_i inside the chunk. Then
    y_i = C_i (hˡ_i + P_i h_a). Returns y ``[G, m, D]`` and the state after the segment.
    """
    G, m, D = x.shape
    c = CHUNK
    nc = -(-m // c)
    pad = nc * c - m  # zero Δ on padded steps: Ā = 1, B̄ = 0, the state passes through
    # Step-major [c, G, nc, ·]: the slice for one step is contiguous.
    delta, x, Bm, Cm = (
        F.pad(t, (0, 0, 0, pad)).unflatten(1, (nc, c)).permute(2, 0, 1, 3).contiguous()
        for t in (delta, x, Bm, Cm)
    )
    if torch.is_grad_enabled() and any(t.requires_grad for t in (delta, x, Bm, Cm)):
        local, P, starts, h = _levels_autograd(delta, x, Bm, A, h)
    else:
        a_bar = (delta[..., None] * A).exp_()  # Ā (c, G, nc, D, N)
        local = (delta * x)[..., None] * Bm[..., None, :]  # B̄_i x_i, becomes hˡ_i in place
        for i in range(1, c):
            local[i].addcmul_(a_bar[i], local[i - 1])
        # P_i = ∏_{k≤i} Ā_k = exp(A Σ_{k≤i} Δ_k): the running sum is over [c, G, nc, D], N
        # times smaller than a cumulative product over the states (which torch does not
        # vectorise along a leading dim).
        P = (delta.cumsum(dim=0)[..., None] * A).exp_()
        starts = torch.empty_like(local[0])  # h_a, the state entering chunk a (G, nc, D, N)
        for a in range(nc):
            starts[:, a] = h
            h = P[-1, :, a] * h + local[-1, :, a]
    local.addcmul_(P, starts)  # hˡ_i + P_i h_a: the state after step i
    y = (local.view(-1, D, A.shape[-1]) @ Cm.view(-1, Cm.shape[-1], 1)).view(c, G, nc, D)
    return y.permute(1, 2, 0, 3).reshape(G, nc * c, D)[:, :m], h


def _levels_autograd(delta, x, Bm, A, h):
    """The two levels of :func:`_scan_segment` without writing in place, for training:
    autograd keeps every intermediate state, so each step makes a new tensor."""
    a_bar = (delta[..., None] * A).exp()
    u = (delta * x)[..., None] * Bm[..., None, :]
    states = [u[0]]
    for i in range(1, len(u)):
        states.append(a_bar[i] * states[-1] + u[i])
    local = torch.stack(states)
    P = (delta.cumsum(dim=0)[..., None] * A).exp()
    starts = []
    for a in range(local.shape[2]):
        starts.append(h)
        h = P[-1, :, a] * h + local[-1, :, a]
    return local.clone(), P, torch.stack(starts, dim=1), h


def hidden_attention(delta, Bm, Cm, A, *, per_channel: bool = False) -> torch.Tensor:
    """α_ij = C_i (∏_{k=j+1..i} Ā_k) B̄_j, ``[B, H, n, n]`` averaged over channels
    (``[B, H, D, n, n]`` with ``per_channel``).

    Column j is the system's response to an impulse at j: a state s_j that starts as B̄_j
    at step j and decays by Ā_k at every later step, read out by C_i. All n impulses run
    side by side: n steps on an ``[n, D, N]`` state, O(n²·d·N) work — display sizes only.
    """
    Bs, H, n, D = delta.shape
    dd, Bd, Cd = delta.double(), Bm.double(), Cm.double()
    A = A.double() if A.dim() == 2 else A.double()[:, None]  # per head: (H, 1, D, N)
    a_bar = torch.exp(dd[..., None] * A)  # Ā_i (B, H, n, D, N)
    s = torch.zeros(Bs, H, n, D, A.shape[-1], dtype=torch.float64)  # one state per impulse j
    alpha = torch.zeros(Bs, H, n, n, D, dtype=torch.float64)
    for i in range(n):  # only impulses j ≤ i have started
        s[:, :, :i] *= a_bar[:, :, i, None]
        s[:, :, i] = dd[:, :, i, :, None] * Bd[:, :, i, None, :]  # B̄_i enters at j = i
        alpha[:, :, i, : i + 1] = (s[:, :, : i + 1] * Cd[:, :, i, None, None, :]).sum(dim=-1)
    return alpha.permute(0, 1, 4, 2, 3) if per_channel else alpha.mean(dim=-1)


class Mamba(Variant):
    name = "mamba"
    grid_budget = {"d_state": 8}
    swappable = True
    title = "Mamba (selective SSM)"
    paper = "Gu & Dao 2023; hidden attention: Ali, Zimerman & Wolf 2024"
    time_complexity = "O(n·d·N)"
    memory_complexity = "O(n·d)"
    params = (Param("d_state", "state size N", 16, 1, 64),)
    map_exact = False
    map_implied = True
    map_normalized = False
    map_kind = "hidden"
    map_note = (
        "Hidden attention α_ij (Ali et al. 2024), mean over channels; not normalised. "
        "Unlike the paper, which computes Δ, B and C from the layer input: here B = "
        "k·W_B, C = q·W_C and Δ = softplus(v·W_Δ + b_Δ), so Δ reads the scanned input x = "
        "v itself, and there is no D·x skip term. In this lab W_B, W_C, W_Δ are seeded "
        "and untrained, b_Δ follows Mamba's Δ initialisation and A = −(1…N); in the "
        "grid's trained models all of them (A as log(−A)) are learned, one set per head, "
        "starting there."
        " Cells trained before that keep them seeded; their command says --frozen-variant."
    )
    causal_support = "always"
    approximates_full = False

    def learned(self, heads: int, d: int) -> dict[str, torch.Tensor]:
        # The paper learns Δ, B, C's projections, b_Δ and A: a trained grid model holds
        # them per head, starting at the seeded values (the untrained lab's, every head).
        return per_head(selection_weights(d, self.grid_hp(d)["d_state"], seed=0), heads)

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        if "W_B" in hp:  # a trained model's own (Variant.learned)
            W = {name: hp[name] for name in SELECTION}
        else:
            W = selection_weights(q.shape[-1], hp["d_state"], hp["seed"])
        x, delta, Bm, Cm, A = selective_parameters(q, k, v, W)
        out = selective_scan(x, delta, Bm, Cm, A)
        if not want_map:
            return Output(out)
        weights = hidden_attention(delta, Bm, Cm, A).to(q.dtype)
        return Output(
            out,
            weights,
            dense_pattern(q.shape[-2], True),
            notes=[Message("note.mamba_causal")],
        )

    def pretrained_budget(self, n):  # the state size of Mamba's own models
        return {"d_state": 16}

    def cache_bytes(self, n, d, heads, hp=None):
        """h: N numbers per channel, d channels per head"""
        return heads * d * self.resolve(hp)["d_state"] * FLOAT_BYTES

    def flops(self, n, d, hp):
        N = hp["d_state"]
        projections = 2.0 * n * d * (d + 2 * N)
        return projections + 12.0 * n * d * N

    def memory(self, n, d, hp):
        N = hp["d_state"]
        steps = min(n, segment_steps(1, d, N))
        # Ā/P and hˡ for one segment, its permuted inputs; Δ, B, C for the whole sequence.
        return (2.0 * steps * d * N + 4.0 * steps * d + 2.0 * n * d + 2 * n * N) * FLOAT_BYTES
