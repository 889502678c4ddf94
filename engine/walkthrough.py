"""Step by step through softmax(Q Kᵀ / √d_k) V for one head of a multi-head layer.

The projections are *seeded random*, not trained: the point is the arithmetic, and
the page says so. Steps: embeddings X → Q, K, V → scores Q Kᵀ → scaling by 1/√d_k →
softmax → weighted values. Beside them, what goes wrong without the scaling
(saturated rows, low entropy) and what a causal mask changes.
"""

from __future__ import annotations

import math
import time
import zlib
from dataclasses import dataclass

import numpy as np
import torch

from engine import gate
from engine.attention import MultiHeadAttention, scaled_dot_product_attention
from engine.errors import InputError
from engine.messages import Message
from engine.params import Param
from engine.positional import sinusoidal
from engine.text import tokens_within
from engine.trace import AttentionMap, Trace

MAX_TOKENS = 256
D_MODEL_CHOICES = (16, 32, 64, 128, 256, 512)
MAX_HEADS = 16
SEED_MAX = 2**32 - 1  # numpy's and torch's seeds both take it
SEED = Param("seed", "Seed", 0, 0, SEED_MAX)


@dataclass(frozen=True)
class WalkthroughConfig:
    d_model: int = 64
    n_heads: int = 4
    head: int = 0
    seed: int = 0

    def check(self) -> None:
        """Every field a whole number in its range (2.5 heads, "x" or NaN refused here, not
        deep in numpy or torch)."""
        if (
            not gate.is_whole(self.d_model, 0, max(D_MODEL_CHOICES))
            or self.d_model not in D_MODEL_CHOICES
        ):
            raise InputError("walkthrough.d_model", choices=D_MODEL_CHOICES, d_model=self.d_model)
        if not gate.is_whole(self.n_heads, 1, MAX_HEADS) or self.d_model % self.n_heads:
            raise InputError(
                "walkthrough.heads", d_model=self.d_model, limit=MAX_HEADS, heads=self.n_heads
            )
        if not gate.is_whole(self.head, 0, self.n_heads - 1):
            raise InputError("walkthrough.head", last=self.n_heads - 1, head=self.head)
        if not gate.is_whole(self.seed, 0, SEED_MAX):  # used as it is: no conversion
            raise InputError(
                "param.out_of_range", label=SEED.label, limits=SEED.limits, value=self.seed
            )


def token_embedding(token: str, d_model: int, seed: int) -> np.ndarray:
    """A fixed random vector per word (same word, same vector), scaled like √d_model·N(0, 1/d)."""
    rng = np.random.default_rng([seed, zlib.crc32(token.lower().encode())])
    return rng.standard_normal(d_model)


def seeded_layer(cfg: WalkthroughConfig) -> MultiHeadAttention:
    gen = torch.Generator().manual_seed(cfg.seed)
    layer = MultiHeadAttention(cfg.d_model, cfg.n_heads, bias=False)
    with torch.no_grad():
        for lin in (layer.W_Q, layer.W_K, layer.W_V, layer.W_O):
            # Xavier-uniform, as a freshly initialised Transformer would have.
            bound = math.sqrt(6.0 / (2 * cfg.d_model))
            lin.weight.copy_((torch.rand(lin.weight.shape, generator=gen) * 2 - 1) * bound)
    return layer.eval()


def row_entropy(weights: np.ndarray) -> np.ndarray:
    """Entropy (nats) of each row; log(K) is uniform, 0 is one-hot (saturated)."""
    p = np.clip(weights, 1e-12, 1.0)
    return -(weights * np.log(p)).sum(axis=-1)


def walkthrough(text: str, cfg: WalkthroughConfig = WalkthroughConfig()) -> Trace:
    cfg.check()
    t0 = time.perf_counter()
    tokens = tokens_within(text, MAX_TOKENS)
    n = len(tokens)
    X = np.stack([token_embedding(t, cfg.d_model, cfg.seed) for t in tokens])
    X = X + sinusoidal(n, cfg.d_model)  # embeddings + positions, as in the paper
    layer = seeded_layer(cfg)
    with torch.no_grad():
        x = torch.as_tensor(X, dtype=torch.float32)[None]  # (1, n, d_model)
        q, k, v = layer.project(x, x, x)  # (1, h, n, d_k)
        q, k, v = q[0, cfg.head], k[0, cfg.head], v[0, cfg.head]  # (n, d_k)
        d_k = q.shape[-1]
        scores = q @ k.T  # Q Kᵀ
        scaled = scores / math.sqrt(d_k)
        out, alpha = scaled_dot_product_attention(q, k, v)
        _, alpha_unscaled = scaled_dot_product_attention(q, k, v, scale=1.0)
        out_causal, alpha_causal = scaled_dot_product_attention(q, k, v, causal=True)
        _, all_heads = layer(x)  # (1, h, n, n)
    a, au, ac = (t.numpy().astype(np.float32) for t in (alpha, alpha_unscaled, alpha_causal))

    def amap(w, note):
        return AttentionMap(w[None, None], tokens, tokens, "self", note=Message(note))

    ent, ent_u = row_entropy(a), row_entropy(au)
    return Trace(
        model="walkthrough",
        task="basics",
        inputs={
            "text": text,
            "tokens": tokens,
            "d_model": cfg.d_model,
            "n_heads": cfg.n_heads,
            "head": cfg.head,
            "seed": cfg.seed,
            "d_k": d_k,
        },
        outputs={"note": "seeded random projections, not a trained model"},
        maps={
            "softmax": amap(a, "note.scaled"),
            "unscaled": amap(au, "note.unscaled"),
            "causal": amap(ac, "note.causal"),
            "all_heads": AttentionMap(
                all_heads.numpy(), tokens, tokens, "self", note=Message("note.every_head")
            ),
        },
        vectors={
            "X": X.astype(np.float32),
            "Q": q.numpy(),
            "K": k.numpy(),
            "V": v.numpy(),
            "scores": scores.numpy(),
            "scaled": scaled.numpy(),
            "output": out.numpy(),
            "output_causal": out_causal.numpy(),
            "entropy": ent.astype(np.float32),
            "entropy_unscaled": ent_u.astype(np.float32),
        },
        metrics={
            "mean_entropy": float(ent.mean()),
            "mean_entropy_unscaled": float(ent_u.mean()),
            "uniform_entropy": float(math.log(n)),
            "mean_max_weight": float(a.max(-1).mean()),
            "mean_max_weight_unscaled": float(au.max(-1).mean()),
            "score_std": float(scores.std()) if n > 1 else 0.0,
            "scaled_std": float(scaled.std()) if n > 1 else 0.0,
        },
        timings={"total_s": time.perf_counter() - t0},
    )
