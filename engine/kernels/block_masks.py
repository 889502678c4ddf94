"""Block masks for the sparse attention patterns, ``bool [H or 1, nb, nb]`` (True = compute).

Sparsity here is block-granular, as in BigBird (Zaheer et al. 2020): a kept block
(I, J) lets every query of block I see every key of block J (causality aside), so a
pattern given in tokens keeps each block that holds at least one allowed pair.
``nb = ceil(n / block_size)``.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch


def num_blocks(n: int, block_size: int) -> int:
    return -(-n // block_size)


def _band(nb: int, width: int) -> torch.Tensor:
    """``[nb, nb]`` True where |I − J| ≤ width."""
    i = torch.arange(nb)
    return (i[:, None] - i[None, :]).abs() <= width


def sliding_window_block_mask(n: int, *, window: int, block_size: int = 64) -> torch.Tensor:
    """Local attention (Beltagy et al. 2020): token i sees tokens j with |i − j| ≤ window.

    Blocks I ≠ J hold such a pair iff (|I − J| − 1) · block_size + 1 ≤ window,
    i.e. |I − J| ≤ ceil(window / block_size).
    """
    nb = num_blocks(n, block_size)
    width = (window + block_size - 1) // block_size
    return _band(nb, width)[None]


def longformer_block_mask(
    n: int, *, window: int, global_tokens: Iterable[int], block_size: int = 64
) -> torch.Tensor:
    """Longformer: the sliding window plus global tokens that see and are seen by all."""
    mask = sliding_window_block_mask(n, window=window, block_size=block_size)[0]
    for t in global_tokens:
        if not 0 <= t < n:
            raise ValueError(f"global token {t} is outside 0..{n - 1}")
        mask[t // block_size, :] = True  # the global token's row: it attends everywhere
        mask[:, t // block_size] = True  # its column: every query attends to it
    return mask[None]


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
    """BigBird (Zaheer et al. 2020): window ±``window_blocks``, the first ``global_blocks``
    blocks global (row and column), and ``random_blocks`` random key blocks per query
    block, drawn independently for each head → ``[heads, nb, nb]``.
    """
    nb = num_blocks(n, block_size)
    mask = _band(nb, window_blocks)[None].repeat(heads, 1, 1)  # (heads, nb, nb)
    g = min(global_blocks, nb)
    mask[:, :g, :] = True
    mask[:, :, :g] = True
    r = min(random_blocks, nb)
    if r:
        # r distinct random key blocks per (head, query block): top-r of uniform noise.
        noise = torch.rand(heads, nb, nb, generator=generator)
        picks = noise.topk(r, dim=-1).indices
        mask.scatter_(-1, picks, True)
    return mask


def kept_fraction(block_mask: torch.Tensor, *, causal: bool = False) -> float:
    """Fraction of the (causal) blocks that a block mask keeps: the work ratio vs dense."""
    bm = block_mask.to(torch.bool)
    if causal:
        tri = torch.ones(bm.shape[-2:], dtype=torch.bool, device=bm.device).tril()
        return float((bm & tri).sum() / (tri.sum() * bm.shape[0]))
    return float(bm.float().mean())
