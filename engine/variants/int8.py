"""INT8 attention: SageAttention-style per-block Q/K quantisation vs naive per-tensor INT8.

Naive: one scale per tensor, δ = max|X| / 127, X̂ = round(X / δ).
One outlier channel in K (common: K carries a bias shared by all tokens) inflates δ and
wipes out the resolution of every other value.

SageAttention (Zhang et al. 2025, ICLR):
1. Smooth K: K' = K − mean_j K_j. softmax(q Kᵀ) is unchanged, because q·mean(K) adds
   the same constant to every score of a row; the shared bias (the outlier) is gone.
2. Quantise Q and K' per block of b tokens: δ_Q per query block, δ_K per key block.
3. S = (Q̂ K̂ᵀ) ⊙ δ_Q δ_Kᵀ, softmax in fp32, P V in fp32 here (SageAttention uses fp16
   for P V on the GPU; on this CPU fp32 keeps that step out of the comparison).

INT8 × INT8 products are summed exactly in float32 as long as 127² · d < 2²⁴, i.e.
d ≤ 1040, which is how the integer matmul is emulated on CPU.

As a variant (``Int8``) it is still a full n × n attention: time O(n²·d) with 8-bit
Q Kᵀ, memory O(n²). The map is exact: the softmax of the dequantised scores.
"""

from __future__ import annotations

import math

import torch

from engine import kernels
from engine.errors import InputError
from engine.masks import causal_mask, masked_softmax
from engine.variants import inputs
from engine.variants.base import FLOAT_BYTES, Output, Param, Variant, dense_pattern

QMAX = 127
MAX_HEAD_DIM = (2**24) // (QMAX * QMAX)
BLOCK = Param("block", "quantisation block (tokens)", 64, 1, 1024)


def quantize(x: torch.Tensor, block: int | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric INT8 of ``x [B, H, n, D]``: per block of ``block`` tokens (None: per tensor).

    Returns integer-valued ``x̂`` (int8 range, held in x's dtype) and the scale δ
    broadcastable to x, with x ≈ x̂ · δ.
    """
    if block is None:
        delta = (x.abs().amax().clamp(min=1e-12) / QMAX).reshape(1, 1, 1, 1)
        return torch.round(x / delta).clamp(-QMAX, QMAX), delta
    B, H, n, D = x.shape
    nb = math.ceil(n / block)
    padded = torch.nn.functional.pad(x, (0, 0, 0, nb * block - n)).view(B, H, nb, block, D)
    delta = padded.abs().amax(dim=(-2, -1), keepdim=True).clamp(min=1e-12) / QMAX
    delta = delta.expand(B, H, nb, block, 1).reshape(B, H, nb * block, 1)[:, :, :n]
    return torch.round(x / delta).clamp(-QMAX, QMAX), delta


def int8_scores(q, k, *, scheme: str, block: int = 64) -> torch.Tensor:
    """Dequantised scores ``[B, H, n, n]`` = (Q̂ K̂ᵀ) δ_Q δ_Kᵀ / √d for ``sage`` or ``naive``."""
    d, block = q.shape[-1], BLOCK.check(block)  # also for callers outside the registry
    if d > MAX_HEAD_DIM:
        raise InputError("int8.head_dim", limit=MAX_HEAD_DIM, d=d)
    if scheme == "sage":
        k = k - k.mean(dim=-2, keepdim=True)  # smoothing: softmax-invariant
        qh, dq = quantize(q, block)
        kh, dk = quantize(k, block)
    elif scheme == "naive":
        qh, dq = quantize(q, None)
        kh, dk = quantize(k, None)
    else:
        raise InputError("int8.scheme", scheme=scheme)
    integer = qh @ kh.transpose(-2, -1)  # exact INT32 sums, held in float32
    return integer * dq * dk.transpose(-2, -1) / math.sqrt(d)


def int8_attention(q, k, v, *, scheme: str, block: int = 64, causal: bool = False):
    """``(out, weights)`` of softmax over INT8 scores."""
    s = int8_scores(q, k, scheme=scheme, block=block)
    n = q.shape[-2]
    p = masked_softmax(s, causal_mask(n, n, device=s.device) if causal else None)
    return p @ v, p


def output_agreement(out: torch.Tensor, ref: torch.Tensor) -> dict[str, float]:
    """Cosine similarity and relative L1 of an output against the fp32 reference."""
    a, b = out.flatten().double(), ref.flatten().double()
    cos = float((a @ b) / (a.norm() * b.norm()).clamp(min=1e-30))
    rel_l1 = float((a - b).abs().sum() / b.abs().sum().clamp(min=1e-30))
    return {"cosine": cos, "rel_l1": rel_l1}


# The Variants lab's INT8 section: random tokens whose keys share a per-channel bias that
# rises linearly to ``bias`` across the d channels (the outlier SageAttention smooths away),
# each scheme's output against fp32. The limits its controls state.
LENGTH = Param("n", "Sequence length n", 256, 16, 1024)
HEAD_SIZE = Param("d", "Head size d", 64, 32, 128)
HEAD_SIZES = (32, 64, 128)  # offered
BIAS = Param("bias", "Key channel bias", 20.0, 0.0, 50.0)
BIASES = (0.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0)  # the sweep's biases
SCHEMES = ("sage", "naive")


def compare(n: int, d: int, bias: float, block: int = 64, seed: int = 0) -> list[dict]:
    """Cosine and relative L1 of each scheme's output against fp32 attention (one row per
    scheme), on ``n`` random tokens of head size ``d`` whose keys carry the bias."""
    n, d, bias, block = LENGTH.check(n), HEAD_SIZE.check(d), BIAS.check(bias), BLOCK.check(block)
    q, k, v, _ = inputs.synthetic(n, d, 2, structure="random", seed=seed)
    k = k + torch.linspace(0, bias, d)  # shared by every token
    ref, _ = kernels.attention(q, k, v)
    rows = []
    for scheme in SCHEMES:
        out, _ = int8_attention(q, k, v, scheme=scheme, block=block)
        rows.append({"scheme": scheme, **output_agreement(out, ref)})
    return rows


def sweep(n: int, d: int, block: int = 64, seed: int = 0) -> list[dict]:
    """:func:`compare` at each of BIASES: how each scheme's error grows with the bias."""
    return [{"bias": b, **row} for b in BIASES for row in compare(n, d, b, block, seed)]


class Int8(Variant):
    name = "int8"
    not_in_grid = "round() quantises Q and K: no gradient reaches them; an inference format"
    title = "INT8 (SageAttention)"
    paper = "Zhang et al. 2025, SageAttention: Accurate 8-bit Attention"
    time_complexity = "O(n²·d)"
    memory_complexity = "O(n²)"
    params = (
        Param(
            "scheme",
            "quantisation",
            "sage",
            choices=("sage", "naive"),
            help="sage: smoothed K, per-block scales; naive: one scale per tensor",
        ),
        BLOCK,
    )
    map_note = "Softmax of the dequantised INT8 scores."

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        out, p = int8_attention(q, k, v, scheme=hp["scheme"], block=hp["block"], causal=causal)
        if not want_map:
            return Output(out)
        return Output(out, p, dense_pattern(q.shape[-2], causal))

    def flops(self, n, d, hp):
        return 4.0 * n * n * d + 8.0 * n * n + 6.0 * n * d

    def memory(self, n, d, hp):
        return 3.0 * n * n * FLOAT_BYTES  # integer scores, dequantised scores, weights
