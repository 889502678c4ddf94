"""Predict, then reveal: the class guesses where the attention goes before it is shown.

The guess is a row (a target word, or a hop of a memory network) and a column (the
source word or story sentence the class expects it to read). The reveal compares it
with the model's strongest weight in that row: same cell or not, how many words or
sentences away, the guess's rank in the row and the weight the model put on it.

``predict`` draws the guess and returns True once revealed (the caller then draws the
map); ``page_toggle`` is the one call a page adds for a sidebar switch doing the same.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import streamlit as st

from kit.errors import halt
from kit.i18n import t

TIE = 1e-6  # weights this close are the same cell twice (two identical keys, e.g. no positions)


@dataclass(frozen=True)
class Verdict:
    guess: int
    argmax: int
    distance: int  # |guess − argmax| in words (or sentences)
    rank: int  # 1 = the model's strongest cell in the row
    weight: float  # the model's weight on the guessed cell
    top: float  # the model's weight on its argmax

    @property
    def same(self) -> bool:
        """The guessed cell holds the row's largest weight (a tie with the argmax counts)."""
        return self.rank == 1


def verdict(row, guess: int) -> Verdict:
    """How far ``guess`` is from the strongest entry of one attention row."""
    row = np.asarray(row, dtype=float)
    best = int(np.argmax(row))
    return Verdict(
        guess=guess,
        argmax=best,
        distance=abs(guess - best),
        rank=1 + int(np.sum(row > row[guess] + TIE)),
        weight=float(row[guess]),
        top=float(row[best]),
    )


def state_key(area: str, *parts) -> str:
    """A key that changes with the input, so a new sentence or story starts a new guess."""
    return f"reveal-{area}-" + hashlib.sha1(repr(parts).encode()).hexdigest()[:12]


def _label(labels, i: int) -> str:
    return f"{labels[i]} ({i + 1})"


def predict(
    key: str, weights, rows, columns, *, row: str | int | None = None, unit: str = "word"
) -> bool:
    """Guess widgets and a Reveal button over ``weights`` [rows, columns]; True once revealed.

    ``row`` fixes the row asked about (a target word, or a row index); otherwise the class
    picks it. Until the reveal nothing of ``weights`` is shown.
    """
    weights = np.asarray(weights)
    rows, columns = list(rows), list(columns)
    fixed = rows.index(row) if isinstance(row, str) and row in rows else None
    if isinstance(row, int) and 0 <= row < len(rows):
        fixed = row
    with st.container(border=True):
        st.markdown(f"**{t('reveal.heading')}**")
        if isinstance(row, str) and fixed is None:  # a warning: presenting hides captions
            st.warning(t("reveal.row_missing", word=row))
        if fixed is None:
            fixed = st.pills(
                t("reveal.pick_row"),
                range(len(rows)),
                format_func=lambda i: _label(rows, i),
                default=0,
                key=f"{key}-row",
            )
            fixed = 0 if fixed is None else fixed
        st.markdown(t(f"reveal.ask_{unit}", row=rows[fixed]))
        guess = st.pills(
            t(f"reveal.pick_{unit}"),
            range(len(columns)),
            format_func=lambda j: _label(columns, j),
            key=f"{key}-guess-{fixed}",
        )
        if not st.session_state.get(f"{key}-revealed", False):
            st.button(
                t("reveal.button"),
                type="primary",
                key=f"{key}-reveal",
                on_click=_set,
                args=(f"{key}-revealed", True),
            )
            st.caption(t("reveal.hidden"))
            return False
        _show(
            verdict(weights[fixed], guess) if guess is not None else None,
            weights[fixed],
            rows[fixed],
            columns,
            unit,
        )
        st.button(
            t("reveal.again"), key=f"{key}-again", on_click=_set, args=(f"{key}-revealed", False)
        )
    return True


def _set(key: str, value: bool) -> None:
    st.session_state[key] = value


def _show(v: Verdict | None, row, row_label: str, columns, unit: str) -> None:
    best = int(np.argmax(row))
    answer = t(
        f"reveal.answer_{unit}", row=row_label, column=_label(columns, best), weight=row[best]
    )
    if v is None:
        st.info(answer + " " + t("reveal.no_guess"))
    elif v.same and v.guess != v.argmax:
        st.success(t("reveal.tied", answer=answer, guess=_label(columns, v.guess), weight=v.weight))
    elif v.same:
        st.success(t("reveal.right", answer=answer))
    else:
        st.warning(
            t(
                f"reveal.off_{unit}",
                answer=answer,
                guess=_label(columns, v.guess),
                distance=v.distance,
                rank=v.rank,
                n=len(columns),
                weight=v.weight,
            )
        )


def _matrix(amap, layer: int, head: int):
    """Rows and columns to guess over: hops × sentences for a memory, else queries × keys."""
    w = amap.weights
    if w.shape[2] == 1 and w.shape[0] > 1:  # a memory network: one query, one row per hop
        return w[:, 0, 0, :], list(amap.layer_labels), list(amap.key_labels), "sentence"
    return w[layer, head], list(amap.query_labels), list(amap.key_labels), "word"


def page_toggle(area: str, amap, *, when: bool = True) -> None:
    """The sidebar switch "Predict, then reveal" (also ``?predict=1``) for a page's map.

    While it is on and the answer is hidden, the guess takes the place of everything
    below the call (the page stops there); after the reveal the page draws as usual.
    """
    on = st.sidebar.checkbox(  # a checkbox: the pages' own toggles stay the only toggles
        t("reveal.toggle"),
        value=st.query_params.get("predict") == "1",
        key=f"reveal-on-{area}",
        help=t("reveal.toggle_help"),
    )
    if not on or not when or amap is None:
        return
    layer = head = 0
    n_layers, n_heads = amap.weights.shape[:2]
    if amap.weights.shape[2] > 1 and n_layers * n_heads > 1:
        c1, c2 = st.columns(2)
        layer = c1.selectbox(
            t("reveal.layer"),
            range(n_layers),
            index=n_layers - 1,
            format_func=lambda i: amap.layer_labels[i],
            key=f"{area}-rl",
        )
        head = c2.selectbox(
            t("reveal.head"),
            range(n_heads),
            format_func=lambda i: amap.head_labels[i],
            key=f"{area}-rh",
        )
    weights, rows, columns, unit = _matrix(amap, layer, head)
    key = state_key(area, rows, columns, layer, head)
    if not predict(key, weights, rows, columns, unit=unit):
        halt()
