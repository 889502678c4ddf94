"""Sparse attention patterns: one meaning of each parameter, for kernels and variants.

- ``window`` w: token i sees key j when |i − j| ≤ w (w keys on each side, 2w + 1 in all).
- ``globals`` g: tokens 0 … g−1 are global: they see every key and every query sees them.
- ``block`` b: a pattern cut into blocks of b tokens; block I holds tokens I·b … I·b + b − 1
  and nb = ceil(n / b). A kept block (I, J) lets every query of I see every key of J.
- ``causal``: j ≤ i, from :func:`engine.masks.causal_mask`, the one place it is
  built.

Token patterns are bool ``[n, n]`` (display size), True where the query may see the key;
block masks are bool ``[H or 1, nb, nb]`` for ``engine.kernels.block_sparse_attention``.
The block mask of a token pattern keeps exactly the blocks that hold an allowed pair.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

from engine.masks import causal_mask


def num_blocks(n: int, block_size: int) -> int:
    return -(-n // block_size)


def in_window(i: torch.Tensor, j: torch.Tensor, window: int) -> torch.Tensor:
    """|i − j| ≤ window, broadcast over query positions i and key positions j."""
    return (i - j).abs() <= window


def longformer_allowed(i, j, *, window: int, n_global: int) -> torch.Tensor:
    """Longformer (Beltagy et al. 2020): the window, plus global rows and columns."""
    return in_window(i, j, window) | (i < n_global) | (j < n_global)


def window_pattern(n: int, window: int) -> torch.Tensor:
    i = torch.arange(n)
    return in_window(i[:, None], i[None, :], window)


def longformer_pattern(n: int, *, window: int, n_global: int) -> torch.Tensor:
    i = torch.arange(n)
    return longformer_allowed(i[:, None], i[None, :], window=window, n_global=n_global)


def block_mask_of(pattern: torch.Tensor, block_size: int) -> torch.Tensor:
    """``[..., n, n]`` token pattern → ``[..., nb, nb]``: the blocks holding an allowed pair."""
    n = pattern.shape[-1]
    nb = num_blocks(n, block_size)
    pad = nb * block_size - n
    p = torch.nn.functional.pad(pattern, (0, pad, 0, pad))
    p = p.unflatten(-1, (nb, block_size)).unflatten(-3, (nb, block_size))  # (..., I, b, J, b)
    return p.any(dim=-1).any(dim=-2)


def sliding_window_block_mask(n: int, *, window: int, block_size: int = 64) -> torch.Tensor:
    """The blocks of :func:`window_pattern`, ``[1, nb, nb]``, without the n × n pattern.

    Blocks I ≠ J hold a pair with |i − j| ≤ window iff (|I − J| − 1) · block_size + 1 ≤
    window, i.e. |I − J| ≤ ceil(window / block_size).
    """
    nb = num_blocks(n, block_size)
    width = (window + block_size - 1) // block_size
    blocks = torch.arange(nb)
    return in_window(blocks[:, None], blocks[None, :], width)[None]


def longformer_block_mask(
    n: int, *, window: int, global_tokens: Iterable[int], block_size: int = 64
) -> torch.Tensor:
    """The window's blocks plus each global token's block row (it sees all) and column."""
    mask = sliding_window_block_mask(n, window=window, block_size=block_size)[0]
    for t in global_tokens:
        if not 0 <= t < n:
            raise ValueError(f"global token {t} is outside 0..{n - 1}")
        mask[t // block_size, :] = True
        mask[:, t // block_size] = True
    return mask[None]


def bigbird_key_blocks(
    nb: int,
    *,
    heads: int = 1,
    window_blocks: int = 1,
    global_blocks: int = 1,
    random_blocks: int = 3,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """BigBird (Zaheer et al. 2020) key blocks of each query block, ``[heads, nb, kb]``:
    the window I − w … I + w, the first ``global_blocks``, and ``random_blocks`` random
    blocks per (head, query block). Entries < 0 or ≥ nb lie outside; repeats count once.
    """
    a = torch.arange(nb)[:, None]
    window = a + torch.arange(-window_blocks, window_blocks + 1)  # (nb, 2w + 1)
    glob = torch.arange(global_blocks).expand(nb, -1)
    rand = torch.randint(0, max(nb, 1), (heads, nb, random_blocks), generator=generator)
    fixed = torch.cat([window, glob], dim=1).expand(heads, nb, -1)
    return torch.cat([fixed, rand], dim=2)


def bigbird_block_mask(
    n: int,
    *,
    block_size: int = 64,
    window_blocks: int = 1,
    global_blocks: int = 1,
    random_blocks: int = 3,
    heads: int = 1,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """BigBird's ``[heads, nb, nb]`` block mask: :func:`bigbird_key_blocks` as rows, and
    the global blocks' rows too (a global query sees every key)."""
    nb = num_blocks(n, block_size)
    kb = bigbird_key_blocks(
        nb,
        heads=heads,
        window_blocks=window_blocks,
        global_blocks=global_blocks,
        random_blocks=random_blocks,
        generator=generator,
    )
    return key_blocks_to_mask(kb, nb, global_blocks)


def key_blocks_to_mask(kb: torch.Tensor, nb: int, global_blocks: int) -> torch.Tensor:
    """Key-block lists ``[H, nb, kb]`` → block mask ``[H, nb, nb]`` (outside entries dropped)."""
    inside = (kb >= 0) & (kb < nb)
    mask = torch.zeros(*kb.shape[:2], nb + 1, dtype=torch.bool)
    mask.scatter_(-1, torch.where(inside, kb, nb), True)  # column nb collects the outside
    mask = mask[..., :nb]
    mask[:, : min(global_blocks, nb)] = True
    return mask


def kept_fraction(block_mask: torch.Tensor, *, causal: bool = False) -> float:
    """Fraction of the (causal) blocks that a block mask keeps: the work ratio vs dense."""
    bm = block_mask.to(torch.bool)
    if causal:
        tri = causal_mask(bm.shape[-2], bm.shape[-1], device=bm.device)
        return float((bm & tri).sum() / (tri.sum() * bm.shape[0]))
    return float(bm.float().mean())
