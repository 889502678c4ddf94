"""An alignment read against the grammar's gold links: what the Alignment and Compare
pages both show (AER with and without the possible links, and the anticipation links).

The only app module that imports the alignment metrics, so a rename of that module is
one line here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from kit.i18n import t

from engine.data import enfr
from engine.translation_quality import aer, argmax_links, link_kinds

EOS = "</s>"


@dataclass(frozen=True)
class VersusGold:
    """α [T, S] read on the gold sentence pair, and how it scores against the gold links."""

    alpha: np.ndarray  # rows: pair.tgt words, columns: pair.src words
    pair: enfr.Pair
    forced: bool  # True: α read with the gold translation fed in
    aer: float  # argmax links vs sure + possible
    aer_sure: float  # argmax links vs sure only
    ahead: list[tuple[str, str]]  # (target word, source word) argmax links that are possible only

    @property
    def how(self) -> str:
        return t("state.how_forced" if self.forced else "state.how_own")


def gold_pair(src: Sequence[str], drawn: Iterable[enfr.Pair] = ()) -> enfr.Pair | None:
    """The grammar's pair for these source tokens (an example or a drawn sentence), or None."""
    return enfr.gold(src, drawn)


def versus_gold(alpha: np.ndarray, pair: enfr.Pair, *, forced: bool) -> VersusGold:
    """Score α (rows: target words of ``pair``, maybe followed by </s>) on the gold links."""
    alpha = np.asarray(alpha)[: len(pair.tgt), : len(pair.src)]
    predicted = argmax_links(alpha)
    kinds = link_kinds(alpha, pair.sure, pair.possible)
    by_row = sorted(predicted, key=lambda link: link[1])
    ahead = [
        (pair.tgt[i], pair.src[j])
        for (j, i), k in zip(by_row, kinds, strict=True)
        if k == "possible"
    ]
    return VersusGold(
        alpha=alpha,
        pair=pair,
        forced=forced,
        aer=aer([(predicted, pair.sure, pair.possible)]),
        aer_sure=aer([(predicted, pair.sure, pair.sure)]),
        ahead=ahead,
    )
