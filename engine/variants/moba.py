"""MoBA, mixture of block attention (Lu et al. 2025, arXiv 2502.13189).

Keys are cut into blocks of b tokens. Each query scores every block by its affinity with
the block's mean key and attends only to the k best blocks, causally:

    gate_i(c) = q_i · mean_{j ∈ block c} K_j,        blocks c after the query's own: −∞
    out_i = softmax over the keys j ≤ i of the selected blocks

The query's own block is always selected (its gate is set to +∞ before the top-k, as
in the paper's code), so k counts it: k blocks in all, k − 1 chosen by the gate. With k
the number of blocks every past block is selected and MoBA is causal full attention.

Each query gathers its k·b keys (rows of ``ROWS`` queries at a time): O(n·k·b·d) time
for the attention and O(n·(n/b)·d) for the gates. The map is exact (the softmax over the
selected keys). ``extra["gates"] [B, H, N, n/b]`` holds each gate (0 for future blocks,
which are never selected) and ``extra["selected"]`` the chosen blocks as 0/1.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from engine.errors import InputError
from engine.variants.base import FLOAT_BYTES, Output, Param, Variant, default_scale

ROWS = 256  # query rows gathered at once: their (rows × k·b × d) keys stay a few MiB
# Gathering a query's kk keys costs several times what scoring one key does (index_select,
# and in training its backward's index_add). Measured here (B·H = 16, d = 32, one thread),
# gather → dense ms: NSA n = 256 with gradients 135 → 51, MoBA 34 → 21; at n = 512 and
# beyond the dense scores cost more. So dense when n ≤ ratio · kk.
DENSE_RATIO = {"grad": 8, "no_grad": 4}
DENSE_CELLS = 2**24  # n × n scores of every (batch, head) under 64 MiB in float32
NEG_INF = float("-inf")


def n_blocks(n: int, b: int) -> int:
    return math.ceil(n / b)


def block_means(x: torch.Tensor, b: int) -> torch.Tensor:
    """``[B, H, N, D]`` → ``[B, H, ⌈N/b⌉, D]``: the mean over each block's tokens (the last
    block may be short: it is averaged over the tokens it has)."""
    B, H, N, D = x.shape
    nb = n_blocks(N, b)
    sums = F.pad(x, (0, 0, 0, nb * b - N)).view(B, H, nb, b, D).sum(dim=3)
    sizes = torch.full((nb,), float(b), dtype=x.dtype)
    sizes[-1] = N - (nb - 1) * b
    return sums / sizes[:, None]


def masked_softmax(s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(p, lse)`` of scores ``s`` masked with −inf: a row with no key left has p = 0 and
    lse = −inf (its output is 0), where softmax would give NaN."""
    lse = torch.logsumexp(s, dim=-1)
    safe = torch.where(torch.isfinite(lse), lse, torch.zeros_like(lse))
    return torch.exp(s - safe[..., None]), lse


def gather_rows(q, k, v, key_pos, allowed, *, scale: float, want_map: bool, blocks=None, b=1):
    """Each query against its own keys: ``key_pos, allowed [B, H, N, kk]``.

    With ``blocks [B, H, N, kk / b]`` (the block ids ``key_pos`` was made of, by
    ``block_keys``) the keys are gathered a block at a time, b·d contiguous numbers per
    index, ≈ 5× faster than one gather per number; the result is the same. Where every
    key scored and masked costs less (:func:`dense_pays`: short sequences) it is one masked
    softmax instead (:func:`dense_rows`), the same numbers summed in another order.

    Returns ``out [B, H, N, D]``, ``lse [B, H, N]`` (−inf where no key is allowed: that
    row's output is 0) and, with ``want_map``, the dense ``[B, H, N, N]`` weights.
    """
    B, H, N, D = q.shape
    kk = key_pos.shape[-1]
    grad = torch.is_grad_enabled() and any(x.requires_grad for x in (q, k, v))
    if dense_pays(B * H, N, kk, grad):
        dense = dense_rows(q, k, v, key_pos, allowed, scale=scale, want_map=want_map)
        if dense is not None:
            return dense
    outs, lses = [], []
    weights = q.new_zeros(B, H, N, N) if want_map else None
    if blocks is not None:  # every (batch, head)'s blocks in one table, rows of b·d
        nb = n_blocks(N, b)
        k_blk, v_blk = (F.pad(x, (0, 0, 0, nb * b - N)).reshape(-1, b * D) for x in (k, v))
        first = (torch.arange(B * H) * nb).view(B, H, 1, 1)  # row of each slice's block 0
    for r0 in range(0, N, ROWS):
        pos = key_pos[:, :, r0 : r0 + ROWS].clamp(0, N - 1)
        R = pos.shape[2]
        if blocks is None:
            idx = pos.reshape(B, H, R * kk, 1).expand(-1, -1, -1, D)
            ks = torch.gather(k, 2, idx).view(B, H, R, kk, D)
            vs = torch.gather(v, 2, idx).view(B, H, R, kk, D)
        else:
            ids = (blocks[:, :, r0 : r0 + R].clamp(min=0) + first).flatten()
            ks, vs = (x.index_select(0, ids).view(B, H, R, kk, D) for x in (k_blk, v_blk))
        # einsum, not R·kk tiny batched matmuls: 6× faster on a CPU for these shapes.
        s = torch.einsum("bhrkd,bhrd->bhrk", ks, q[:, :, r0 : r0 + R]) * scale
        s = s.masked_fill(~allowed[:, :, r0 : r0 + R], NEG_INF)
        p, lse = masked_softmax(s)
        outs.append((p[..., None, :] @ vs).squeeze(-2))
        lses.append(lse)
        if want_map:
            weights[:, :, r0 : r0 + R].scatter_add_(-1, pos, p)
    return torch.cat(outs, dim=2), torch.cat(lses, dim=2), weights


def dense_pays(slices: int, n: int, kk: int, grad: bool) -> bool:
    """True when scoring all n keys and masking is cheaper than gathering each query's kk
    (``DENSE_RATIO``), and the n × n scores of every slice stay small."""
    ratio = DENSE_RATIO["grad" if grad else "no_grad"]
    return n <= ratio * kk and slices * n * n <= DENSE_CELLS


def dense_rows(q, k, v, key_pos, allowed, *, scale: float, want_map: bool):
    """:func:`gather_rows` by one masked softmax over all n keys (the same sums in another
    order); None when a key is gathered twice for one query, which the gather path counts
    twice and a mask cannot."""
    N = q.shape[-2]
    hits = q.new_zeros(*q.shape[:-1], N, dtype=torch.int32)
    hits.scatter_add_(-1, key_pos.clamp(0, N - 1), allowed.to(torch.int32))
    if hits.numel() and int(hits.max()) > 1:
        return None
    p, lse = masked_softmax(((q @ k.transpose(-2, -1)) * scale).masked_fill(hits == 0, NEG_INF))
    return p @ v, lse, (p if want_map else None)


def block_keys(blocks: torch.Tensor, b: int, n: int, causal: bool = True):
    """Selected block ids ``[B, H, N, k]`` → key positions and allowed ``[B, H, N, k·b]``
    (inside the sequence, not in the future, and a block id ≥ 0)."""
    B, H, N, kk = blocks.shape
    pos = (blocks[..., None] * b + torch.arange(b)).view(B, H, N, kk * b)
    ok = (blocks >= 0)[..., None].expand(B, H, N, kk, b).reshape(B, H, N, kk * b)
    ok = ok & (pos < n)
    if causal:
        ok = ok & (pos <= torch.arange(N)[:, None])
    return pos, ok


def scatter_pattern(pos, ok, n: int) -> torch.Tensor:
    """``[B, H, N, N]`` bool: the keys each query's gathered positions allow."""
    hits = torch.zeros(*pos.shape[:-1], n)
    return hits.scatter_add_(-1, pos.clamp(0, n - 1), ok.to(hits.dtype)) > 0


def moba_gates(q, k, b: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``gates [B, H, N, nb]`` = q_i · mean K of block c, and which blocks are past or own."""
    N = q.shape[-2]
    gates = q @ block_means(k, b).transpose(-2, -1)
    own = torch.arange(N)[:, None] // b
    c = torch.arange(gates.shape[-1])
    return gates, c <= own  # (N, nb): causal blocks


def moba_select(gates, causal_blocks, b: int, top_k: int) -> torch.Tensor:
    """Block ids ``[B, H, N, k]`` (−1 where fewer than k blocks exist yet)."""
    N, nb = causal_blocks.shape
    own = torch.arange(N) // b
    g = gates.detach().masked_fill(~causal_blocks, NEG_INF)
    own_col = own[:, None].expand(*g.shape[:-1], 1)
    g.scatter_(-1, own_col, float("inf"))  # own block always (g is masked_fill's copy)
    top = torch.topk(g, min(top_k, nb), dim=-1)
    return torch.where(torch.isfinite(top.values) | (top.values > 0), top.indices, -1)


class MoBA(Variant):
    name = "moba"
    grid_budget = {"block": 16, "top_k": 2}
    title = "MoBA (mixture of block attention)"
    paper = "Lu et al. 2025, MoBA: Mixture of Block Attention for Long-Context LLMs"
    time_complexity = "O(n·(k·b + n/b)·d)"
    memory_complexity = "O(n·k·b)"
    params = (
        Param("block", "block size b", 8, 1, 4096, help="keys are scored and picked in blocks"),
        Param(
            "top_k",
            "blocks per query k",
            2,
            1,
            512,
            help="the query's own block is always one of the k",
        ),
    )
    map_note = "Exact weights over the keys of the k blocks each query selected (causal)."
    causal_support = "always"
    approximates_full = True

    def check_length(self, n, hp):
        if hp["block"] > n:
            raise InputError("variant.over_n", label=self.params[0].label, n=n, value=hp["block"])
        nb = n_blocks(n, hp["block"])
        if hp["top_k"] > nb:
            raise InputError(
                "variant.over_blocks", label=self.params[1].label, blocks=nb, value=hp["top_k"]
            )

    def compute(self, q, k, v, *, causal, want_map, hp) -> Output:
        B, H, N, D = q.shape
        b = hp["block"]
        gates, causal_blocks = moba_gates(q, k, b)
        blocks = moba_select(gates, causal_blocks, b, hp["top_k"])
        pos, ok = block_keys(blocks, b, N)
        kw = dict(scale=default_scale(D), want_map=want_map, blocks=blocks, b=b)
        out, _, w = gather_rows(q, k, v, pos, ok, **kw)
        if not want_map:
            return Output(out)
        selected = torch.zeros_like(gates).scatter_(-1, blocks.clamp(min=0), 1.0)
        selected = selected * (blocks >= 0).any(-1, keepdim=True)  # every row has its own
        pattern = scatter_pattern(pos, ok, N)
        extra = {"gates": gates.masked_fill(~causal_blocks, 0.0).detach(), "selected": selected}
        return Output(out, w, pattern, extra=extra)

    def flops(self, n, d, hp):
        b, kb = hp["block"], hp["top_k"] * hp["block"]
        nb = n_blocks(n, b)
        # Attention over the k·b gathered keys; the gates (n × n/b dot products: the
        # quadratic term); their causal mask and top-k (≈ 2 operations per gate); the means.
        return 4.0 * n * kb * d + 5.0 * n * kb + 2.0 * n * nb * d + 2.0 * n * nb + n * d

    def memory(self, n, d, hp):
        b, kb = hp["block"], hp["top_k"] * hp["block"]
        rows = min(n, ROWS)
        # The gates and their two masked copies and top-k (4 × n·n/b, measured); key
        # positions and mask for every query; one row group's gathered k, v.
        return (4.0 * n * n_blocks(n, b) + 3.0 * n * kb + 2.0 * rows * kb * d) * FLOAT_BYTES

    def cache_bytes_per_token(self, d: int, heads: int, hp: dict | None = None) -> int:
        """Keys and values of every token stay cached (any block may be picked later)."""
        return 2 * heads * d * FLOAT_BYTES
