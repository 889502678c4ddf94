"""An alignment read against the grammar's gold links: what the Alignment and Compare
pages both show (AER with and without the possible links, and the anticipation links).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from kit.i18n import t

from engine.data import enfr

EOS = "</s>"


@dataclass(frozen=True)
class VersusGold(enfr.OnGold):
    """α read on the gold sentence pair (:meth:`engine.data.enfr.Pair.score`), and how."""

    pair: enfr.Pair
    forced: bool  # True: α read with the gold translation fed in

    @property
    def how(self) -> str:
        return t("state.how_forced" if self.forced else "state.how_own")


def gold_pair(src: Sequence[str], drawn: Iterable[enfr.Pair] = ()) -> enfr.Pair | None:
    """The grammar's pair for these source tokens (an example or a drawn sentence), or None."""
    return enfr.gold(src, drawn)


def versus_gold(alpha: np.ndarray, pair: enfr.Pair, *, forced: bool) -> VersusGold:
    """Score α (rows: target words of ``pair``, maybe followed by </s>) on the gold links."""
    return VersusGold(**vars(pair.score(alpha)), pair=pair, forced=forced)
