"""Multi-head latent attention (DeepSeek-AI 2024, DeepSeek-V2 §2.1).

Each token is cached as one latent c_KV (d_c numbers, shared by all heads) plus one
decoupled RoPE key k^R (d_R numbers, shared by all heads), instead of H keys and H values:

    c_t = W_DKV h_t,   k^C_{t,i} = W_UK,i c_t,   v^C_{t,i} = W_UV,i c_t,   k^R_t = RoPE(W_KR h_t)
    q_{t,i} = [q^C_{t,i}; RoPE(W_QR q^C_{t,i})],   k_{t,i} = [k^C_{t,i}; k^R_t]
    o_{t,i} = Σ_j softmax_j(q_{t,i}·k_{j,i} / √(d + d_R)) v^C_{j,i}

*Naive*: up-project every cached c_j to k^C and v^C, then attend. *Absorbed* (§2.1.2,
what inference runs): W_UK,i is folded into the query, q̃ = W_UK,iᵀ q^C, so scores are
q̃·c_j + q^R·k^R_j against the latent itself, and W_UV,i is applied once to the
attention-weighted latent (in a model it folds further into W_O). Same numbers, no
per-head keys or values ever formed. The RoPE part is decoupled because a rotation
between q^C and k^C would sit between W_UK and c and stop the absorption.

In this lab's Q/K/V frame the token's hidden state is h_t = [k_t; v_t] over all heads
(2·H·d numbers), compressed by W_DKV; the queries are the given q (the paper's query
compression saves activations in training, not cache, and is left out). In the lab the
weights are seeded and untrained, scaled to keep activations O(1). Inside a trained grid
model (engine.models.variant_lm) they are learned, as in the paper: each block holds
W_DKV, W_KR, W_UK, W_UV and W_QR as parameters, at DeepSeek-V2's sizes d_c = 4·d_h and
d_R = d_h / 2 (§2.1.4), and they start as multi-head attention's own keys and values
(see :func:`mha_start`). The map is exact: the softmax weights of the computation; they
multiply the up-projected values, which ``Output.extra["values"]`` holds.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from engine import kernels
from engine.masks import causal_mask
from engine.variants.base import FLOAT_BYTES, Output, Param, Variant, dense_pattern, generator

ROPE_BASE = 10000.0


def rope(x: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding (Su et al. 2021) on the last dim (even), positions 0…N−1."""
    n, d = x.shape[-2], x.shape[-1]
    inv = ROPE_BASE ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = torch.arange(n, dtype=torch.float64)[:, None] * inv  # (N, d/2)
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
    return out.flatten(-2)


def weights(heads: int, d: int, d_c: int, d_r: int, seed: int, dtype) -> dict:
    """Seeded W_DKV ``[2Hd, d_c]``, W_KR ``[2Hd, d_R]``, W_UK and W_UV ``[H, d_c, d]``,
    W_QR ``[H, d, d_R]``."""
    g = generator(seed)

    def w(*shape, fan_in):
        return (torch.randn(*shape, generator=g) / math.sqrt(fan_in)).to(dtype)

    return {
        "W_DKV": w(2 * heads * d, d_c, fan_in=2 * heads * d),
        "W_KR": w(2 * heads * d, d_r, fan_in=2 * heads * d),
        "W_UK": w(heads, d_c, d, fan_in=d_c),
        "W_UV": w(heads, d_c, d, fan_in=d_c),
        "W_QR": w(heads, d, d_r, fan_in=d),
    }


WEIGHT_NAMES = ("W_DKV", "W_KR", "W_UK", "W_UV", "W_QR")


def mha_start(heads: int, d: int, d_c: int, d_r: int, seed: int) -> dict:
    """Trainable weights that start as multi-head attention: with d_c ≥ 2·H·d, W_DKV copies
    every head's key and value into the latent, W_UK,i and W_UV,i read head i's back, and
    W_QR = 0 (the RoPE scores start at 0), so the scores and outputs are MHA's until
    training moves them.

    Why: MLA with d_c ≥ 2·H·d contains MHA (Meng et al. 2025, TransMLA, §3), and the grid
    model's recall initialisation points head 0's q·k at the previous token; seeded
    random projections would scramble that start and compare the recall of a scrambled
    start, not of MLA (a narrower latent keeps the seeded weights, to be learned as is).
    """
    W = weights(heads, d, d_c, d_r, seed, torch.float32)
    if d_c < 2 * heads * d:
        return W
    eye = torch.eye(d_c)
    W["W_DKV"] = torch.eye(2 * heads * d, d_c)  # h = [k_1 … k_H, v_1 … v_H] into c
    W["W_UK"] = torch.stack([eye[:, i * d : (i + 1) * d] for i in range(heads)])
    W["W_UV"] = torch.stack([eye[:, (heads + i) * d : (heads + i + 1) * d] for i in range(heads)])
    W["W_QR"] = torch.zeros(heads, d, d_r)
    return W


def latent_cache(k, v, W) -> tuple[torch.Tensor, torch.Tensor]:
    """What MLA caches per token: c_KV ``[B, 1, N, d_c]`` and k^R ``[B, 1, N, d_R]``."""
    B, H, N, D = k.shape
    h = torch.cat([k, v], dim=1).permute(0, 2, 1, 3).reshape(B, 1, N, 2 * H * D)
    return h @ W["W_DKV"], rope(h @ W["W_KR"])


def _scores_softmax(s: torch.Tensor, causal: bool) -> torch.Tensor:
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(~causal_mask(n, n, device=s.device), float("-inf"))
    return torch.softmax(s, dim=-1)


def naive(q, c, k_r, W, *, causal: bool):
    """Up-project keys and values per head, then attend: ``(out, p, v^C)``."""
    d, d_r = q.shape[-1], k_r.shape[-1]
    k_c = c @ W["W_UK"]  # (B, H, N, d)
    v_c = c @ W["W_UV"]
    q_r = rope(q @ W["W_QR"])  # (B, H, N, d_R)
    qf = torch.cat([q, q_r], dim=-1)
    kf = torch.cat([k_c, k_r.expand(-1, q.shape[1], -1, -1)], dim=-1)
    p = _scores_softmax((qf @ kf.transpose(-2, -1)) / math.sqrt(d + d_r), causal)
    return p @ v_c, p, v_c


def absorbed(q, c, k_r, W, *, causal: bool, want_map: bool = True):
    """Attend against the latent: W_UK in the query, W_UV after the sum: ``(out, p)``.

    Scores are [q̃; q^R]·[c_j; k^R_j]: one attention whose keys are the cached latent and
    RoPE key and whose values are the latent itself. Without the map it runs as such
    through the fused kernel (no n × n block held); with it, densely (p is None without).
    """
    B, H, N, d = q.shape
    d_r = k_r.shape[-1]
    q_abs = q @ W["W_UK"].transpose(-2, -1)  # q̃ = W_UKᵀ q^C, (B, H, N, d_c)
    q_r = rope(q @ W["W_QR"])
    if not want_map:
        qa = torch.cat([q_abs, q_r], dim=-1)
        ka = torch.cat([c, k_r], dim=-1).expand(B, H, N, -1)  # shared by the heads
        # The fused CPU kernel wants one head size: the values [c; 0] give Σ p c in front.
        va = F.pad(c, (0, d_r)).expand(B, H, N, -1)
        o, _ = kernels.attention(qa, ka, va, causal=causal, scale=1 / math.sqrt(d + d_r))
        return o[..., : c.shape[-1]] @ W["W_UV"], None
    s = q_abs @ c.transpose(-2, -1) + q_r @ k_r.transpose(-2, -1)  # c, k^R shared by heads
    p = _scores_softmax(s / math.sqrt(d + d_r), causal)
    return (p @ c) @ W["W_UV"], p  # (Σ_j p_j c_j) W_UV


def cache_bytes_per_token(d_c: int, d_r: int, bytes_per: int = FLOAT_BYTES) -> int:
    """Per layer and token: the latent and the shared RoPE key, whatever the heads."""
    return (d_c + d_r) * bytes_per


def cache_table(d: int, heads: int, groups: int, d_c: int, d_r: int) -> dict[str, int]:
    """Cache bytes per token and layer (float32) of MHA, GQA with G groups, MQA and MLA."""
    return {
        "mha": 2 * heads * d * FLOAT_BYTES,
        "gqa": 2 * groups * d * FLOAT_BYTES,
        "mqa": 2 * d * FLOAT_BYTES,
        "mla": cache_bytes_per_token(d_c, d_r),
    }


class MLA(Variant):
    name = "mla"
    grid_budget = {"latent": 128, "rope_pairs": 8}  # grid_hp at the grid's head size, 32
    title = "Multi-head latent attention (DeepSeek-V2)"
    needs_training = "llm_variant.why_mla"
    paper = "DeepSeek-AI 2024, DeepSeek-V2 (multi-head latent attention)"
    time_complexity = "O(n²·(d_c + d_R))"
    memory_complexity = "O(n·(d_c + d_R))"
    params = (
        Param("latent", "latent size d_c", 32, 2, 512, help="numbers cached per token (shared)"),
        Param(
            "rope_pairs",
            "RoPE key pairs d_R / 2",
            4,
            1,
            64,
            help="the decoupled RoPE key shared by all heads has 2 × this many numbers",
        ),
        Param(
            "form",
            "computation",
            "absorbed",
            choices=("absorbed", "naive"),
            help="absorbed: W_UK in the query, W_UV after the sum; naive: up-project K, V",
        ),
    )
    map_note = (
        "Exact softmax weights; they multiply the values up-projected from the latent. Here"
        " the projections are seeded and untrained; in the grid's trained models they are"
        " learned at DeepSeek-V2's sizes, d_c = 4·d_h and d_R = d_h / 2, starting as"
        " multi-head attention's keys and values (TransMLA's construction). Unlike the"
        " paper: no query compression (it saves training activations, not cache)."
        " Cells trained before that keep them seeded; their command says --frozen-variant."
    )
    # Keys and values come through seeded, untrained projections: a different model.
    approximates_full = False

    def grid_hp(self, d: int) -> dict:
        # DeepSeek-V2 §2.1.4: d_c = 4·d_h, d_h^R = d_h / 2. A fixed latent of 32 left the
        # grid's MLA at chance at every width (issue 31): its state did not grow with d.
        return {"latent": 4 * d, "rope_pairs": max(1, d // 4)}

    def learned(self, heads: int, d: int) -> dict[str, torch.Tensor]:
        hp = self.grid_hp(d)
        return mha_start(heads, d, hp["latent"], 2 * hp["rope_pairs"], seed=0)

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        B, H, N, D = q.shape
        if "W_DKV" in hp:  # a trained model's own projections (Variant.learned)
            W = {name: hp[name].to(q.dtype) for name in WEIGHT_NAMES}
            d_c, d_r = W["W_DKV"].shape[-1], W["W_KR"].shape[-1]
        else:
            d_c, d_r = hp["latent"], 2 * hp["rope_pairs"]
            W = weights(H, D, d_c, d_r, hp["seed"], q.dtype)
        c, k_r = latent_cache(k, v, W)
        notes = [f"Cache per token: {d_c} + {d_r} numbers (MHA: {2 * H * D})."]
        if hp["form"] == "naive":
            out, p, v_c = naive(q, c, k_r, W, causal=causal)
        else:
            out, p = absorbed(q, c, k_r, W, causal=causal, want_map=want_map)
            v_c = c @ W["W_UV"] if want_map else None  # formed for the drawing only
        if not want_map:
            return Output(out, notes=notes)
        return Output(
            out, p, dense_pattern(N, causal), notes=notes, extra={"values": v_c, "latent": c}
        )

    def flops(self, n, d, hp):
        d_c, d_r = hp["latent"], 2 * hp["rope_pairs"]
        # Absorbed, per (batch, head): q̃ = W_UKᵀq and q^R; scores against [c; k^R]; Σ p c;
        # W_UV. The latent and k^R (one per token, shared) are counted per head as 1/H ≈ 0.
        projections = 2.0 * n * d * (d_c + d_r) + 2.0 * n * d_c * d
        return projections + 2.0 * n * n * (d_c + d_r) + 2.0 * n * n * d_c + 5.0 * n * n

    def memory(self, n, d, hp):
        d_c, d_r = hp["latent"], 2 * hp["rope_pairs"]
        # The fused kernel holds no n × n block: [q̃; q^R], [c; k^R] and [c; 0] per head,
        # its output, Σ p c W_UV; the latent and k^R.
        return (4.0 * n * (d_c + d_r) + 2.0 * n * d_c + n * d) * FLOAT_BYTES

    def cache_bytes_per_token(self, d: int, heads: int, hp: dict | None = None) -> int:
        """the latent and the shared RoPE key of every token read, whatever the heads"""
        hp = self.resolve(hp)
        return cache_bytes_per_token(hp["latent"], 2 * hp["rope_pairs"])
