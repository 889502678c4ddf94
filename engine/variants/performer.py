"""Performer (Choromanski et al. 2021): FAVOR+ positive orthogonal random features.

softmax kernel exp(qᵀk) = E_ω[φ(q)ᵀφ(k)] with φ(x) = exp(ωᵀx − ‖x‖²/2)/√m, ω ~ N(0, I_d)
drawn in orthogonal blocks (FAVOR+). With x = q/d^{1/4} and k/d^{1/4} the scaled
softmax of attention is approximated without the n × n matrix:

    out = D⁻¹ (φ(Q) (φ(K)ᵀ V)),   D = diag(φ(Q) (φ(K)ᵀ 1_n))

Time O(n·m·d): linear in n (not O(n log n) as some tables say). Without the map the
features are made ``rows_per_step`` rows at a time — keys first, summed into φ(K)ᵀ[V 1]
under a running max that rescales the sum when it grows, then queries — so the n × m
feature maps are never held: memory O(m·d) beyond the inputs and output, and the time
stays linear where whole n × m maps would leave the caches.
Implied map: the rows of φ(Q)φ(K)ᵀ normalised by D. Bidirectional here (the causal form
needs prefix sums).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from engine.variants.base import FLOAT_BYTES, Output, Param, Variant, generator

STEP_BYTES = 2**19  # features made per step and head: (rows × m) floats that stay in L2


def rows_per_step(n: int, m: int) -> int:
    return min(n, max(64, STEP_BYTES // (m * FLOAT_BYTES)))


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


def feature_logits(x: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """ωᵀx − ‖x‖²/2 ``[B, H, n, m]``."""
    return (x @ W.T).sub_((x * x).sum(dim=-1, keepdim=True) / 2)


def positive_features(x: torch.Tensor, W: torch.Tensor, *, per_row: bool) -> torch.Tensor:
    """φ(x) = exp(ωᵀx − ‖x‖²/2 − c)/√m; c (a row max or one global max) cancels in D⁻¹."""
    logits = feature_logits(x, W)  # (B, H, n, m)
    c = logits.amax(dim=-1, keepdim=True) if per_row else logits.amax(dim=(-2, -1), keepdim=True)
    if torch.is_grad_enabled() and logits.requires_grad:  # autograd keeps exp's output
        return (logits - c).exp() * W.shape[0] ** -0.5
    # In place: at long n the (n × m) feature maps are what the time is spent moving.
    return logits.sub_(c).exp_().mul_(W.shape[0] ** -0.5)


def implied_map_log(qs: torch.Tensor, ks: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """D⁻¹ φ(Q)φ(K)ᵀ ``[B, H, n, n]`` from log φ: log A_ij = logsumexp_r(a_ir + b_jr), a and
    b the feature logits, then a softmax over j; finite whatever the size of the logits.
    Holds ``rows × n × m`` sums at a time (display-size n only)."""
    a, b = feature_logits(qs, W), feature_logits(ks, W)  # (B, H, n, m)
    n, m = b.shape[-2], b.shape[-1]
    rows = max(1, STEP_BYTES * 8 // (n * m * FLOAT_BYTES * a.shape[0] * a.shape[1]))
    log_a = torch.cat(
        [
            torch.logsumexp(a[..., i : i + rows, None, :] + b[..., None, :, :], dim=-1)
            for i in range(0, a.shape[-2], rows)
        ],
        dim=-2,
    )
    return torch.softmax(log_a, dim=-1)


class Performer(Variant):
    name = "performer"
    lra_average = 51.41
    grid_budget = {"features": 64}
    swappable = True
    title = "Performer (FAVOR+)"
    paper = "Choromanski et al. 2021, Rethinking Attention with Performers"
    time_complexity = "O(n·m·d)"
    memory_complexity = "O(m·d)"
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
        training = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))
        if not want_map and not training:  # the streamed path works in place: no autograd
            return Output(self._stream(q, k, v, W, scale))
        phi_q = positive_features(q * scale, W, per_row=True)  # (B, H, n, m)
        phi_k = positive_features(k * scale, W, per_row=False)
        kv = phi_k.transpose(-2, -1) @ v  # (B, H, m, D)
        z = phi_q @ phi_k.sum(dim=-2, keepdim=True).transpose(-2, -1)  # (B, H, n, 1) = D
        out = (phi_q @ kv) / z
        if not want_map:
            return Output(out)
        if not bool((z > 0).all()):
            # Every feature product of a row underflowed (logits of ~1e3 and more): the
            # same estimate, with the same ω, taken in log space instead.
            a = implied_map_log(q * scale, k * scale, W)
            return Output(a @ v, a)
        a = phi_q @ phi_k.transpose(-2, -1)
        return Output(out, a / a.sum(dim=-1, keepdim=True))

    @staticmethod
    def _stream(q, k, v, W, scale: float) -> torch.Tensor:
        """The output alone, ``rows_per_step`` rows of features at a time.

        Constant factors of φ cancel in D⁻¹, so 1/√m is left out, and φ(K) carries the
        running max c of the key logits seen so far: when c grows, the sums so far are
        multiplied by exp(c_old − c_new), which gives the one global max of the map path.
        """
        n, m = q.shape[-2], W.shape[0]
        step = rows_per_step(n, m)
        kv1 = q.new_zeros(*q.shape[:-2], m, v.shape[-1] + 1)  # φ(K)ᵀ [V 1]: sums and D
        c = q.new_full((*q.shape[:-2], 1, 1), float("-inf"))
        for s in range(0, n, step):
            logits = feature_logits(k[..., s : s + step, :] * scale, W)
            c_new = torch.maximum(c, logits.amax(dim=(-2, -1), keepdim=True))
            kv1.mul_(torch.exp(c - c_new))  # 0 · 0 on the first step
            phi = logits.sub_(c_new).exp_()
            kv1.add_(phi.transpose(-2, -1) @ F.pad(v[..., s : s + step, :], (0, 1), value=1.0))
            c = c_new
        out = torch.empty_like(v)
        for s in range(0, n, step):
            logits = feature_logits(q[..., s : s + step, :] * scale, W)
            phi = logits.sub_(logits.amax(dim=-1, keepdim=True)).exp_()
            num = phi @ kv1  # (B, H, rows, D + 1): φ(Q)φ(K)ᵀV and D
            torch.div(num[..., :-1], num[..., -1:], out=out[..., s : s + step, :])
        return out

    def pretrained_budget(self, n):  # enough features for a low-variance estimate
        return {"features": 256}

    def cache_bytes(self, n, d, heads, hp=None):
        """φ(K)ᵀ[V 1]: m × (d + 1) per head (the causal form's state)"""
        return heads * self.resolve(hp)["features"] * (d + 1) * FLOAT_BYTES

    def flops(self, n, d, hp):
        m = hp["features"]
        return 2.0 * 2 * n * m * d + 2.0 * n * m * d * 2 + 4.0 * n * m

    def memory(self, n, d, hp):
        m = hp["features"]
        # One step's logits/features and φ(Q)·[kv D], and φ(K)ᵀ[V 1].
        return (rows_per_step(n, m) * (m + d + 1) + m * (d + 1)) * FLOAT_BYTES
