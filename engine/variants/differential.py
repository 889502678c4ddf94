"""Differential attention (Ye et al. 2024, "Differential Transformer", arXiv 2410.05258).

Each head splits its queries and keys into two halves of d/2 and subtracts one softmax map
from the other, so attention that both maps put on irrelevant context (the "noise")
cancels:

    DiffAttn(X) = (softmax(Q₁K₁ᵀ/√(d/2)) − λ · softmax(Q₂K₂ᵀ/√(d/2))) V       (eq. 1)
    λ = exp(λ_q1·λ_k1) − exp(λ_q2·λ_k2) + λ_init,  λ_init = 0.8 − 0.6·exp(−0.3·(l − 1))

with λ_q1, λ_k1, λ_q2, λ_k2 ∈ R^{d/2} learned per layer (seeded from N(0, 0.1²), the
paper's initialisation, in the lab; learned from there inside the grid's trained models)
and l the layer's depth (1-based; 1 in every layer of the grid's models). V keeps all d channels.
The paper then normalises each head's output (RMSNorm per head, "headwise norm") and
multiplies by (1 − λ_init); that step is per token and nonlinear, outside the map, and is applied
only with ``head_norm = on`` (the map then no longer gives the output by itself).

The map is exact and *signed*: rows sum to 1 − λ and entries go negative. Both softmaxes
come with it in ``extra["softmax1"]``, ``extra["softmax2"]``, and λ in ``extra["lambda"]``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from engine import kernels
from engine.errors import InputError
from engine.masks import causal_mask
from engine.messages import Message
from engine.variants.base import FLOAT_BYTES, Output, Param, Variant, dense_pattern, generator

LAMBDA_STD = 0.1  # the paper's initialisation of the λ vectors
NORM_EPS = 1e-5


def lambda_init(layer: int) -> float:
    """λ_init = 0.8 − 0.6·exp(−0.3·(l − 1)) for the l-th layer (l ≥ 1)."""
    return 0.8 - 0.6 * math.exp(-0.3 * (layer - 1))


LAMBDAS = ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2")  # what a trained model learns


def lambda_vectors(half: int, seed: int) -> dict[str, torch.Tensor]:
    """λ_q1, λ_k1, λ_q2, λ_k2 ``[d/2]`` (float64), seeded from N(0, 0.1²)."""
    g = generator(seed)
    return {
        name: torch.randn(half, generator=g, dtype=torch.float64) * LAMBDA_STD for name in LAMBDAS
    }


def lambda_value(half: int, layer: int, seed: int, vectors: dict | None = None):
    """λ = exp(λ_q1·λ_k1) − exp(λ_q2·λ_k2) + λ_init: a float from seeded vectors of size
    d/2, or a 0-dim tensor (with its gradient) from a trained model's ``vectors``."""
    found = vectors or lambda_vectors(half, seed)
    lq1, lk1, lq2, lk2 = (found[name] for name in LAMBDAS)
    lam = torch.exp(lq1 @ lk1) - torch.exp(lq2 @ lk2) + lambda_init(layer)
    return lam if vectors else float(lam)


def two_softmaxes(q, k, *, causal: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(Q₁K₁ᵀ/√(d/2)) and softmax(Q₂K₂ᵀ/√(d/2)), ``[B, H, N, N]`` each."""
    half = q.shape[-1] // 2
    n = q.shape[-2]
    maps = []
    for part in (slice(0, half), slice(half, 2 * half)):
        s = (q[..., part] @ k[..., part].transpose(-2, -1)) / math.sqrt(half)
        if causal:
            s = s.masked_fill(~causal_mask(n, n, device=q.device), float("-inf"))
        maps.append(torch.softmax(s, dim=-1))
    return maps[0], maps[1]


def fused_difference(q, k, v, lam: float, *, causal: bool) -> torch.Tensor:
    """softmax₁ V − λ softmax₂ V as two fused attentions. The fused CPU kernel wants one
    head size for q, k and v, so each half is zero-padded to d (the scores are unchanged)
    and the scale is the halves' 1/√(d/2)."""
    d = q.shape[-1]
    half, scale = d // 2, 1 / math.sqrt(d // 2)
    outs = []
    for part, pad in ((slice(0, half), (0, half)), (slice(half, d), (half, 0))):
        qp, kp = F.pad(q[..., part], pad), F.pad(k[..., part], pad)
        outs.append(kernels.attention(qp, kp, v, causal=causal, scale=scale)[0])
    return outs[0] - lam * outs[1]


def head_norm(out: torch.Tensor, lam_init: float) -> torch.Tensor:
    """The paper's headwise normalisation (§2.2): each head's output per token divided by
    its RMS over the head's channels, x / √(mean x² + ε), not mean-centred, times
    (1 − λ_init); the official code's ``RMSNorm(2·head_dim, eps=1e-5)``, whose learned
    gain starts at 1 (untrained here, so 1)."""
    return F.rms_norm(out, out.shape[-1:], eps=NORM_EPS) * (1 - lam_init)


class Differential(Variant):
    name = "differential"
    title = "Differential attention"
    needs_training = "llm_variant.why_differential"
    paper = "Ye et al. 2024, Differential Transformer"
    time_complexity = "O(n²·d)"
    memory_complexity = "O(n·d)"
    params = (
        Param("layer", "layer depth l", 1, 1, 64, help="sets λ_init = 0.8 − 0.6·exp(−0.3(l − 1))"),
        Param(
            "head_norm",
            "headwise norm × (1 − λ_init)",
            "off",
            choices=("off", "on"),
            help="the paper's per-head normalisation after the map",
        ),
    )
    # The paper normalises every head (§2.2): the grid's trained models do too.
    grid_budget = {"head_norm": "on"}
    map_normalized = False
    map_signed = True
    approximates_full = False  # a different attention (a difference of two), not a stand-in
    map_note = (
        "Signed exact map softmax₁ − λ·softmax₂: rows sum to 1 − λ and entries can be "
        "negative. Here λ comes from seeded vectors (the paper's N(0, 0.1²) "
        "initialisation); in the grid's trained models the four λ vectors are learned and "
        "each head's output is normalised (RMSNorm × (1 − λ_init)), as in the paper, but "
        "every layer takes λ_init of depth 1."
        " Cells trained before that keep them seeded; their command says --frozen-variant."
    )

    def learned(self, heads: int, d: int) -> dict[str, torch.Tensor]:
        # The paper learns the four λ vectors per layer: a trained grid model holds them,
        # starting at the lab's seeded draw (its N(0, 0.1²) initialisation).
        return {name: t.float() for name, t in lambda_vectors(d // 2, seed=0).items()}

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        d = q.shape[-1]
        if d % 2:
            raise InputError("variant.even_head", title=self.title, d=d)
        learned = {name: hp[name] for name in LAMBDAS} if "lambda_q1" in hp else None
        lam = lambda_value(d // 2, hp["layer"], hp["seed"], learned)
        if learned:
            lam = lam.to(q.dtype)
        if want_map:
            a1, a2 = two_softmaxes(q, k, causal=causal)
            w = a1 - lam * a2
            out = w @ v
        else:  # two fused attentions, as the paper's FlashDiffAttn: no n × n block held
            out = fused_difference(q, k, v, lam, causal=causal)
        shown = float(torch.as_tensor(lam).detach())
        init = f"{lambda_init(hp['layer']):.3f}"
        notes = [Message("note.differential_lambda", value=f"{shown:.3f}", init=init)]
        if hp["head_norm"] == "on":
            out = head_norm(out, lambda_init(hp["layer"]))
            notes.append(Message("note.differential_normalised"))
        if not want_map:
            return Output(out, notes=notes)
        lam_t = torch.as_tensor(lam, dtype=q.dtype)[None]
        extra = {"softmax1": a1, "softmax2": a2, "lambda": lam_t}
        return Output(out, w, dense_pattern(q.shape[-2], causal), notes=notes, extra=extra)

    def flops(self, n, d, hp):
        # Two QKᵀ of d/2 each (= one of d), two softmaxes, the difference, then W V.
        return 2.0 * n * n * d + 10.0 * n * n + 2.0 * n * n + 2.0 * n * n * d

    def memory(self, n, d, hp):
        # Without the map: the padded halves of q and k, two fused outputs, their difference.
        return 7.0 * n * d * FLOAT_BYTES
