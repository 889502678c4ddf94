"""Native Sparse Attention (Yuan et al. 2025, arXiv 2502.11089): three branches, gated.

For each query t (causal), three attentions over three sets of keys, mixed by gates:

    o_t = g_cmp · Attn(q_t, K̃_cmp, Ṽ_cmp) + g_slc · Attn(q_t, K_slc, V_slc)
          + g_win · Attn(q_t, K_win, V_win),           g = sigmoid(q_t W_g + b_g) ∈ (0, 1)³

(the paper's gate is an MLP of the layer input; here a linear map of q_t, seeded with
b_g = 0 in the lab and learned per head inside the grid's trained models)

* compressed: each block of l tokens becomes one key and one value (the paper's learned
  MLP φ with an intra-block position encoding; here its simplest instance, the mean),
  and t sees the blocks that end at or before t;
* selected: the compressed branch's probabilities score the blocks (with the paper's
  l = l' = stride they are the block scores p_slc directly); t attends to every token of
  the top-n blocks, plus the initial block and its own block, which are always kept;
* sliding window: the w most recent tokens.

Blocks here do not overlap (stride = l) and scores are per head (the paper shares them
across a GQA group). Time O(n·(n/l + (k + 2)·l + w)·d) for k = top-n; the n/l compressed
keys are the quadratic part, l times smaller than full attention.

The map is exact and linear in V: the compressed branch's weight on a block is spread
evenly over its l tokens (its value is their mean), so out = map · V; rows sum to
g_cmp + g_slc + g_win (not normalised; g_cmp is missing before the first block ends).
``extra["gates"] [B, H, N, 3]`` (cmp, slc, win) and ``extra["selected"] [B, H, N, n/l]``.
"""

from __future__ import annotations

import math

import torch

from engine.errors import InputError
from engine.variants.base import (
    FLOAT_BYTES,
    Output,
    Param,
    Variant,
    default_scale,
    generator,
    per_head,
)
from engine.variants.moba import (
    NEG_INF,
    ROWS,
    block_keys,
    block_means,
    gather_rows,
    masked_softmax,
    n_blocks,
    scatter_pattern,
)


def gate_weights(d: int, seed: int, dtype) -> torch.Tensor:
    """W_g ``[d, 3]``: the (untrained) gate projection, seeded."""
    return (torch.randn(d, 3, generator=generator(seed)) / math.sqrt(d)).to(dtype)


def branch_gates(q: torch.Tensor, seed: int, learned: dict | None = None) -> torch.Tensor:
    """g = sigmoid(q W_g + b_g) ``[B, H, N, 3]``: seeded W_g and b_g = 0, or a trained
    model's, one per head (``gate_W [H, d, 3]``, ``gate_b [H, 3]``)."""
    if learned is None:
        return torch.sigmoid(q @ gate_weights(q.shape[-1], seed, q.dtype))
    W, b = learned["gate_W"].to(q.dtype), learned["gate_b"].to(q.dtype)
    return torch.sigmoid(q @ W + b[:, None, :])


def compressed_branch(q, k, v, l: int, start: int = 0, means=None):
    """``(out, p_cmp [B, H, R, nb], visible [R, nb])`` for the R queries from ``start``:
    attention over block means, the blocks that end at or before the query. Rows with no
    finished block: out 0, p 0. ``means`` = (K̃, Ṽ) when already computed."""
    R, D = q.shape[-2], q.shape[-1]
    kc, vc = means if means is not None else (block_means(k, l), block_means(v, l))
    ends = (torch.arange(kc.shape[-2]) + 1) * l - 1
    visible = ends <= start + torch.arange(R)[:, None]  # (R, nb)
    s = (q @ kc.transpose(-2, -1)) * default_scale(D)
    s = s.masked_fill(~visible, NEG_INF)
    p, _ = masked_softmax(s)
    return p @ vc, p, visible


def select_blocks(p_cmp, l: int, top_n: int, start: int = 0) -> torch.Tensor:
    """Block ids ``[B, H, R, top_n + 2]`` for the R queries from ``start``: the initial
    block, the own block, then the top-n other finished blocks by p_cmp; −1 where there is
    none (or it repeats)."""
    R, nb = p_cmp.shape[-2], p_cmp.shape[-1]
    own = (start + torch.arange(R)) // l
    initial = torch.where(own > 0, 0, -1)  # in block 0 the own block is the initial one
    forced = torch.stack([initial, own], dim=-1).expand(*p_cmp.shape[:-1], 2)
    if top_n == 0:
        return forced
    c = torch.arange(nb)
    others = (c > 0) & (c < own[:, None])  # finished, not the initial block
    score = p_cmp.detach().masked_fill(~others, NEG_INF)
    top = torch.topk(score, min(top_n, nb), dim=-1)
    chosen = torch.where(torch.isfinite(top.values), top.indices, -1)
    return torch.cat([forced, chosen], dim=-1)


def window_blocks(n: int, w: int, l: int) -> int:
    """How many blocks of l a window of w keys can touch: it is gathered as whole blocks
    (b·d contiguous numbers per index, the fast gather) and masked to its w keys."""
    return math.ceil((w - 1) / l) + 1


def window_keys(n: int, w: int, l: int, batch: int, heads: int):
    """Block ids ``[B, H, N, m]`` covering each query's causal window of w keys (−1 before
    the sequence), with key positions and allowed ``[B, H, N, m·l]`` (exactly the w keys)."""
    t = torch.arange(n)[:, None]
    ids = t // l - torch.arange(window_blocks(n, w, l))
    ids = torch.where(ids * l + l - 1 > t - w, ids, -1).clamp(min=-1)  # blocks the window reaches
    blocks = ids.expand(batch, heads, *ids.shape)
    pos, ok = block_keys(blocks, l, n)
    return blocks, pos, ok & (pos > t - w)


def spread_blocks(p_cmp: torch.Tensor, l: int, n: int) -> torch.Tensor:
    """Block weights ``[B, H, N, nb]`` → token weights ``[B, H, N, n]``: p/|block| on each."""
    sizes = torch.full((p_cmp.shape[-1],), float(l), dtype=p_cmp.dtype)
    sizes[-1] = n - (p_cmp.shape[-1] - 1) * l
    return (p_cmp / sizes).repeat_interleave(l, dim=-1)[..., :n]


def compressed_and_selected(q, k, v, l: int, top_n: int, keep_p: bool):
    """The compressed branch and the selection, ``ROWS`` queries at a time: their
    (rows × n/l) scores stay in cache. Over all n at once those scores, masked and
    exponentiated, were several n²/l-sized arrays (2 GB at n = 32k) whose fresh pages
    made the time grow as n^2.35. Returns ``o_cmp``, ``p_cmp`` (None unless ``keep_p``)
    and the selected block ids ``[B, H, N, top_n + 2]``."""
    means = block_means(k, l), block_means(v, l)
    outs, ps, blocks = [], [], []
    for r0 in range(0, q.shape[-2], ROWS):
        o, p, _ = compressed_branch(q[:, :, r0 : r0 + ROWS], k, v, l, r0, means)
        outs.append(o)
        blocks.append(select_blocks(p, l, top_n, r0))
        ps.append(p if keep_p else None)
    p_cmp = torch.cat(ps, dim=2) if keep_p else None
    return torch.cat(outs, dim=2), p_cmp, torch.cat(blocks, dim=2)


class NSA(Variant):
    name = "nsa"
    grid_budget = {"block": 16, "top_n": 2, "window": 16}
    title = "Native Sparse Attention (compressed + selected + window)"
    paper = "Yuan et al. 2025, Native Sparse Attention"
    time_complexity = "O(n·(n/l + (k + 2)·l + w)·d)"
    memory_complexity = "O(n·(k + 2 + w) + R·n/l), R = 256 rows at a time"
    params = (
        Param("block", "block size l", 8, 1, 4096, help="compression and selection block"),
        Param(
            "top_n",
            "selected blocks n",
            2,
            0,
            512,
            help="chosen by the compressed scores, beside the initial and own blocks",
        ),
        Param("window", "window w (recent keys)", 8, 1, 4096, help="keys t − w < j ≤ t"),
    )
    map_normalized = False
    map_note = (
        "Exact map of the three gated branches (compressed blocks spread over their "
        "tokens); rows sum to the gates' total, not 1. Unlike the paper: blocks are "
        "compressed by their mean, not a learned MLP, and the gates are a linear map of "
        "q, not an MLP of the layer input; seeded here, learned per head (with a bias) in "
        "the grid's trained models."
        " Cells trained before that keep them seeded; their command says --frozen-variant."
    )
    causal_support = "always"
    # The gates (untrained) scale the three branches: rows sum to their total, not 1.
    approximates_full = False

    def learned(self, heads: int, d: int) -> dict[str, torch.Tensor]:
        # The paper learns its gates: a trained grid model holds W_g and b_g per head,
        # starting at the lab's seeded W_g (every head) and b_g = 0.
        return per_head(
            {"gate_W": gate_weights(d, 0, torch.float32), "gate_b": torch.zeros(3)}, heads
        )

    def check_length(self, n, hp):
        for i, name in ((0, "block"), (2, "window")):
            if hp[name] > n:
                raise InputError("variant.over_n", label=self.params[i].label, n=n, value=hp[name])
        nb = n_blocks(n, hp["block"])
        if hp["top_n"] > nb:
            raise InputError(
                "variant.over_blocks", label=self.params[1].label, blocks=nb, value=hp["top_n"]
            )

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        B, H, N, D = q.shape
        l, w = hp["block"], hp["window"]
        scale = default_scale(D)
        learned = {"gate_W": hp["gate_W"], "gate_b": hp["gate_b"]} if "gate_W" in hp else None
        gates = branch_gates(q, hp["seed"], learned)  # (B, H, N, 3)
        o_cmp, p_cmp, blocks = compressed_and_selected(q, k, v, l, hp["top_n"], want_map)
        pos_s, ok_s = block_keys(blocks, l, N)
        kw = dict(scale=scale, want_map=want_map)
        o_slc, _, w_slc = gather_rows(q, k, v, pos_s, ok_s, blocks=blocks, b=l, **kw)
        blocks_w, pos_w, ok_w = window_keys(N, w, l, B, H)
        o_win, _, w_win = gather_rows(q, k, v, pos_w, ok_w, blocks=blocks_w, b=l, **kw)
        g_cmp, g_slc, g_win = gates.unbind(-1)
        out = g_cmp[..., None] * o_cmp + g_slc[..., None] * o_slc + g_win[..., None] * o_win
        if not want_map:
            return Output(out)
        weights = (
            g_cmp[..., None] * spread_blocks(p_cmp, l, N)
            + g_slc[..., None] * w_slc
            + g_win[..., None] * w_win
        )
        pattern = scatter_pattern(pos_s, ok_s, N) | scatter_pattern(pos_w, ok_w, N)
        pattern |= spread_blocks(p_cmp, l, N) > 0
        selected = torch.zeros(B, H, N, n_blocks(N, l), dtype=q.dtype)
        selected.scatter_add_(-1, blocks.clamp(min=0), (blocks >= 0).to(q.dtype))
        extra = {"gates": gates.detach(), "selected": (selected > 0).to(q.dtype)}
        return Output(out, weights, pattern, extra=extra)

    def flops(self, n, d, hp):
        l, w = hp["block"], window_blocks(n, hp["window"], hp["block"]) * hp["block"]
        sel = (hp["top_n"] + 2) * l
        nb = n_blocks(n, l)
        # Block means; compressed, selected and window attentions; the top-n over the
        # compressed scores and its mask (≈ 2 operations per block: quadratic, like the
        # compressed scores themselves); gates and the mix.
        attend = 4.0 * n * (nb + sel + w) * d + 5.0 * n * (nb + sel + w)
        return 2.0 * n * d + attend + 2.0 * n * nb + 12.0 * n * d

    def memory(self, n, d, hp):
        l, w = hp["block"], window_blocks(n, hp["window"], hp["block"]) * hp["block"]
        sel = (hp["top_n"] + 2) * l
        rows = min(n, ROWS)
        # Compressed scores; key positions and masks; one row group's gathered k, v.
        # One row group's compressed scores, masked, p and the selection's copy; every
        # query's selected blocks, key positions and masks; one row group's gathered k, v.
        scores = 4.0 * rows * n_blocks(n, l)
        return (scores + 3.0 * n * (sel + w) + 2.0 * rows * max(sel, w) * d) * FLOAT_BYTES

    def cache_bytes_per_token(self, d: int, heads: int, hp: dict | None = None) -> int:
        """Every token's key and value, and one compressed pair per block of l tokens.

        Nothing is evicted: selection may return to any block."""
        hp = self.resolve(hp)
        return int(2 * heads * d * FLOAT_BYTES * (1 + 1 / hp["block"]))
