"""Is the attention faithful? Attention over inputs beside what changes the output.

For one output y and inputs x_1 … x_n (source words, memory facts, passages, tokens) with
attention a_j over them, three attributions say how much y depends on x_j:

- **Occlusion** (leave one out; Li et al. 2016, "representation erasure"):
  Δ_j = log p(y | x) − log p(y | x without x_j). How "without" is built is the
  caller's (a zero embedding, a masked memory slot, a passage dropped from the prompt).
- **Gradient × input** (Shrikumar et al. 2016; Ding et al. 2019 align words with it):
  g_j = Σ_d x_jd · ∂ log p(y) / ∂x_jd.
- **Integrated gradients** (Sundararajan et al. 2017) from the baseline x' = 0:
  IG_j = Σ_d (x_jd − x'_jd) · ∫₀¹ ∂f(x' + t(x − x')) / ∂x_jd dt, the integral by the
  trapezoid rule over ``steps`` intervals. Completeness: Σ_j IG_j = f(x) − f(x'), up to
  the rule's error, which :class:`Integrated` reports.

:func:`agreement` scores an attention row against an attribution: Spearman's rank
correlation (average ranks for ties; None when either side is constant) and top-1
agreement (the most-attended input is the most important one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import rankdata

IG_STEPS = 32


@dataclass(frozen=True)
class Agreement:
    spearman: float | None  # rank correlation of attention and attribution
    top1: bool  # argmax attention == argmax attribution

    def to_json(self) -> dict:
        rho = None if self.spearman is None else round(self.spearman, 4)
        return {"spearman": rho, "top1": self.top1}


def spearman(a, b) -> float | None:
    """Spearman's ρ: Pearson's r of the average ranks; None when a side is constant."""
    ra, rb = rankdata(np.asarray(a, np.float64)), rankdata(np.asarray(b, np.float64))
    if len(ra) != len(rb):
        raise ValueError(f"{len(ra)} attention weights for {len(rb)} attributions")
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    return None if den == 0 else float((ra * rb).sum() / den)


def agreement(attention, attribution) -> Agreement:
    """How far an attention row over n inputs agrees with an attribution over them."""
    a, s = np.asarray(attention, np.float64), np.asarray(attribution, np.float64)
    if a.shape != s.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"attention {a.shape} and attribution {s.shape}: one row each")
    return Agreement(spearman(a, s), int(a.argmax()) == int(s.argmax()))


def occlusion(score: Callable[[torch.Tensor], torch.Tensor], n: int) -> np.ndarray:
    """Δ_j = f(all inputs) − f(all but j), for j < n.

    ``score(keep)`` maps a boolean batch ``keep`` ``[B, n]`` (False: input removed) to the
    output's log-probability ``[B]``; it is called once, on the full input and the n
    inputs with one removed.
    """
    keep = torch.ones(n + 1, n, dtype=torch.bool)
    keep[torch.arange(1, n + 1), torch.arange(n)] = False  # row j + 1 drops input j
    with torch.no_grad():
        f = score(keep).double()
    return (f[0] - f[1:]).numpy()


def gradient_x_input(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> np.ndarray:
    """g_j = Σ_d x_jd ∂f/∂x_jd for inputs ``x`` ``[n, d]`` (or ``[B, n, d]`` when ``f``
    returns ``[B]``, each copy's output depending on its own copy only)."""
    x = x.detach().clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(f(x).sum(), x)
    return (grad * x).sum(-1).detach().double().numpy()


@dataclass(frozen=True)
class Integrated:
    attributions: np.ndarray  # IG_j, [..., n]
    delta: np.ndarray  # f(x) − f(x'), [...]
    steps: int

    @property
    def completeness_error(self) -> np.ndarray:
        """|Σ_j IG_j − (f(x) − f(x'))|: the trapezoid rule's error."""
        return np.abs(self.attributions.sum(-1) - self.delta)


def integrated_gradients(
    f: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    baseline: torch.Tensor | None = None,
    steps: int = IG_STEPS,
) -> Integrated:
    """IG_j along the straight path from ``baseline`` (zeros) to ``x`` ``[n, d]``.

    ``f`` maps a batch ``[B, n, d]`` to ``[B]``; the ``steps + 1`` points of the path go
    through it as one batch (a ``[B, n, d]`` input gives a batch of ``B·(steps + 1)``).
    """
    x = x.detach()
    x0 = torch.zeros_like(x) if baseline is None else baseline.detach()
    single = x.dim() == 2
    if single:
        x, x0 = x[None], x0[None]
    t = torch.linspace(0, 1, steps + 1, dtype=x.dtype)  # (S + 1,)
    path = x0[:, None] + t[None, :, None, None] * (x - x0)[:, None]  # (B, S + 1, n, d)
    path = path.reshape(-1, *x.shape[1:]).requires_grad_(True)
    out = f(path)  # (B·(S + 1),)
    (grad,) = torch.autograd.grad(out.sum(), path)
    grad = grad.reshape(x.shape[0], steps + 1, *x.shape[1:])
    w = torch.full((steps + 1,), 1.0 / steps, dtype=x.dtype)
    w[0] = w[-1] = 0.5 / steps  # the trapezoid rule
    mean_grad = torch.einsum("s,bsnd->bnd", w, grad)
    ig = ((x - x0) * mean_grad).sum(-1).detach().double().numpy()  # (B, n)
    ends = out.detach().double().reshape(x.shape[0], steps + 1)
    delta = (ends[:, -1] - ends[:, 0]).numpy()
    return Integrated(ig[0] if single else ig, delta[0] if single else delta, steps)


def summarise(rows: list[Agreement]) -> dict:
    """Mean ρ (over the rows where it is defined), top-1 agreement rate, and n."""
    rhos = [r.spearman for r in rows if r.spearman is not None]
    return {
        "spearman": round(float(np.mean(rhos)), 4) if rhos else None,
        "top1": round(float(np.mean([r.top1 for r in rows])), 4) if rows else None,
        "n": len(rows),
        "n_spearman": len(rhos),
    }
