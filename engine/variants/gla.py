"""Gated linear attention (Yang et al. 2023, arXiv 2312.06635): linear attention whose
state forgets, channel by channel, at a rate the input chooses.

    S_t = diag(α_t) S_{t−1} + k_tᵀ v_t,    o_t = q_t S_t / √d,
    α_t = sigmoid(k_t W_α1 W_α2)^{1/τ}   (low rank 16, τ = 16, as in the paper)

(in this Q/K/V frame the gate reads k_t, where the paper reads the layer input x_t;
W_α1, W_α2 and the bias b_α are seeded, b_α = 0, in the lab, and learned per head inside
the grid's trained models, as the paper learns them). Unrolled,
with Λ_t = Σ_{m≤t} log α_m per key channel,

    o_t = Σ_{j≤t} A_tj v_j,    A_tj = Σ_c q_tc k_jc exp(Λ_tc − Λ_jc) / √d       (j ≤ t)

a causal, signed, unnormalised attention matrix that the model never forms.

The output is computed chunkwise (the paper's §3): inside a chunk of ``CHUNK`` steps the
pairs are formed directly with exp(Λ_t − Λ_j) ≤ 1 (the stable form of its secondary
chunking); between chunks the d×d state carries the rest. Time O(n·(C·d + d²)), state
d² numbers per head, whatever n. ``recurrent`` (step by step) and ``implicit_map``
(the matrix above) are the two independent forms the tests compare it with.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from engine.variants.base import FLOAT_BYTES, Output, Variant, dense_pattern, generator, per_head

CHUNK = 16  # steps per chunk: pairs inside, the state between
GROUP_BYTES = 2 * 2**20  # pair decays formed at once: a group of chunks that stays in cache
GATE_RANK = 16
MAP_ROWS = 32  # rows of the implicit map formed at once
TAU = 16.0  # the paper's temperature: α = sigmoid(·)^{1/τ} stays near 1 (slow forgetting)


GATE = ("gate_W1", "gate_W2", "gate_b")  # what a trained model learns


def gate_weights(d: int, seed: int) -> dict[str, torch.Tensor]:
    """Seeded W_α1 ``[D, 16]``, W_α2 ``[16, D]`` and b_α = 0 ``[D]``."""
    g = generator(seed)
    return {
        "gate_W1": torch.randn(d, GATE_RANK, generator=g) / math.sqrt(d),
        "gate_W2": torch.randn(GATE_RANK, d, generator=g) / math.sqrt(GATE_RANK),
        "gate_b": torch.zeros(d),
    }


def gate_log_alpha(k: torch.Tensor, seed: int, W: dict | None = None) -> torch.Tensor:
    """log α_t ``[B, H, N, D]`` = logsigmoid(k_t W_α1 W_α2 + b_α) / τ: seeded weights, or a
    trained model's ``W`` (one gate per head: ``[H, D, 16]``, ``[H, 16, D]``, ``[H, D]``)."""
    W = W if W is not None else gate_weights(k.shape[-1], seed)
    W1, W2, b = (W[name].to(k.dtype) for name in GATE)
    b = b if b.dim() == 1 else b[:, None, :]  # per head: [H, 1, D]
    return F.logsigmoid(k @ W1 @ W2 + b) / TAU


def recurrent(q, k, v, log_alpha, scale: float) -> torch.Tensor:
    """The recurrence, one step at a time: S_t = diag(α_t) S_{t−1} + k_tᵀ v_t."""
    B, H, N, D = q.shape
    S = q.new_zeros(B, H, D, v.shape[-1])
    outs = []
    for t in range(N):
        S = log_alpha[:, :, t, :, None].exp() * S + k[:, :, t, :, None] * v[:, :, t, None, :]
        outs.append((q[:, :, t, None, :] @ S).squeeze(-2) * scale)
    return torch.stack(outs, dim=2)


def implicit_map(q, k, log_alpha, scale: float) -> torch.Tensor:
    """A_tj = Σ_c q_tc k_jc exp(Λ_tc − Λ_jc)·scale for j ≤ t, 0 above: ``[B, H, N, N]``."""
    N = q.shape[-2]
    lam = log_alpha.cumsum(dim=-2)
    causal = torch.ones(N, N, dtype=torch.bool).tril()
    rows = []
    for r0 in range(0, N, MAP_ROWS):  # (rows × N × d) decays at a time, not (N × N × d)
        r = slice(r0, r0 + MAP_ROWS)
        diff = lam[:, :, r, None, :] - lam[:, :, None, :, :]  # (B, H, rows, N, D)
        decay = diff.masked_fill(~causal[r, :, None], float("-inf")).exp()
        rows.append(torch.einsum("bhtc,bhjc,bhtjc->bhtj", q[:, :, r], k, decay))
    return torch.cat(rows, dim=2) * scale


def chunkwise(q, k, v, log_alpha, scale: float, chunk: int = CHUNK) -> torch.Tensor:
    """The chunkwise-parallel form: pairs inside each chunk, the state across chunks.

    Chunks are taken ``GROUP_BYTES`` of pair decays at a time: the (C × C × d) decays of
    every chunk at once would be 3·n·C·d numbers (1.5 GB at n = 16k, 4 heads), whose
    fresh pages and cache misses made the time grow as n^1.3 in a linear algorithm.
    """
    B, H, N, D = q.shape
    nc = -(-N // chunk)
    pad = nc * chunk - N  # padded steps: α = 1 and k = v = 0, so the state passes through
    q, k, v, log_alpha = (
        F.pad(t, (0, 0, 0, pad)).view(B, H, nc, chunk, t.shape[-1]) for t in (q, k, v, log_alpha)
    )
    causal = torch.ones(chunk, chunk, dtype=torch.bool).tril()
    group = max(1, GROUP_BYTES // (3 * B * H * chunk * chunk * D * q.element_size()))
    S = q.new_zeros(B, H, D, v.shape[-1])
    outs = []
    for g0 in range(0, nc, group):
        qg, kg, vg = (t[:, :, g0 : g0 + group] for t in (q, k, v))
        lam = log_alpha[:, :, g0 : g0 + group].cumsum(dim=-2)  # Λ from each chunk's start
        diff = lam[..., :, None, :] - lam[..., None, :, :]  # (B, H, g, t, j, D), ≤ 0 for j ≤ t
        decay = diff.masked_fill(~causal[..., None], float("-inf")).exp()
        a = torch.einsum("bhntc,bhnjc,bhntjc->bhntj", qg, kg, decay)
        intra = a @ vg  # (B, H, g, C, Dv)
        q_in = qg * lam.exp()  # q_t ⊙ exp(Λ_t): the decay from the chunk's start to t
        k_out = kg * (lam[..., -1:, :] - lam).exp()  # k_j ⊙ exp(Λ_C − Λ_j): to the chunk end
        last = lam[..., -1, :].exp()  # (B, H, g, D): the whole chunk's decay
        inter = []
        for c in range(qg.shape[2]):
            inter.append(q_in[:, :, c] @ S)
            S = last[:, :, c, :, None] * S + k_out[:, :, c].transpose(-2, -1) @ vg[:, :, c]
        outs.append(intra + torch.stack(inter, dim=2))
    out = torch.cat(outs, dim=2) * scale
    return out.reshape(B, H, nc * chunk, -1)[:, :, :N]


def chunk_flops(n: int, d: int, chunk: int = CHUNK) -> float:
    """Per (batch, head): pairs and decays inside chunks, then q S and the state update."""
    return n * (5.0 * chunk * d + 2.0 * chunk * d + 4.0 * d * d + 4.0 * d)


def chunk_memory(n: int, d: int, chunk: int = CHUNK) -> float:
    """One group's differences, masked, and decays of the pairs (``GROUP_BYTES`` at most,
    less when n is short), the padded inputs, the outputs, the state."""
    group = min(float(GROUP_BYTES), 3.0 * -(-n // chunk) * chunk * chunk * d * FLOAT_BYTES)
    return group + (n * chunk + 8.0 * n * d + d * d) * FLOAT_BYTES


class GLA(Variant):
    name = "gla"
    title = "Gated linear attention (GLA)"
    needs_training = "llm_variant.why_recurrent"
    paper = "Yang et al. 2023, Gated Linear Attention Transformers"
    time_complexity = "O(n·(C·d + d²))"
    memory_complexity = "O(n·C·d)"
    map_exact = False
    map_implied = True
    map_normalized = False
    map_signed = True
    map_note = (
        "Implicit map A_tj = Σ_c q_tc k_jc ∏ α (the matrix the recurrence applies); "
        "signed, not normalised. Unlike the paper, whose gate reads the layer input x_t: "
        "here it reads k_t. In this lab the gate's low-rank W_α1 W_α2 are seeded and "
        "untrained and its bias b_α is 0; in the grid's trained models W_α1, W_α2 and b_α "
        "are learned, one set per head, starting there."
        " Cells trained before that keep them seeded; their command says --frozen-variant."
    )
    causal_support = "always"
    approximates_full = False

    def learned(self, heads: int, d: int) -> dict[str, torch.Tensor]:
        # The paper learns the gate's W_α1, W_α2 and b_α: a trained grid model holds them
        # per head, starting at the seeded values (the untrained lab's, every head).
        return per_head(gate_weights(d, 0), heads)

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        scale = 1.0 / math.sqrt(q.shape[-1])
        learned = {name: hp[name] for name in GATE} if "gate_W1" in hp else None
        log_alpha = gate_log_alpha(k, hp["seed"], learned)
        out = chunkwise(q, k, v, log_alpha, scale)
        if not want_map:
            return Output(out)
        a = implicit_map(q, k, log_alpha, scale)
        return Output(out, a, dense_pattern(q.shape[-2], True), extra={"log_alpha": log_alpha})

    def flops(self, n, d, hp):
        return chunk_flops(n, d) + 4.0 * n * d * GATE_RANK

    def memory(self, n, d, hp):
        return chunk_memory(n, d)

    def cache_bytes(self, n: int, d: int, heads: int, hp: dict | None = None) -> int:
        """the d×d recurrent state per head, whatever the length"""
        return heads * d * d * FLOAT_BYTES
