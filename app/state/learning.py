"""Cached loaders for the Watch-attention-learn page: the induction toy's shipped timelines.

A timeline is read through the toy's card once per process and file version
(``state.timelines``, keyed on the files' size and time), so moving the step slider only
picks one step out of arrays already in memory and redraws.
"""

from __future__ import annotations

import numpy as np
from kit.i18n import t

from engine.analysis import induction as analysis
from engine.errors import InputError
from state import live, models, timelines

LAYERS = (2, 1)  # the model that forms an induction head, then the one-layer control
LIVE_SECONDS = live.SECONDS
LIVE_SLOTS = live.SLOTS  # live trainings at once on the whole server (each holds one core)
SEEDS = (0, 999)


def timeline(n_layers: int) -> dict:
    """The shipped timeline as per-step arrays (``engine.analysis.induction.arrays``), read
    through the toy's card like every family's (``state.timelines``: once per file
    version), plus its ``curves`` (best heads per step) and ``fall`` (the steepest fall of
    the loss). Raises the engine's InputError when the files are missing or unreadable."""
    name = analysis.checkpoint_name(n_layers)
    if name not in models.cards():
        raise InputError("induction.no_timeline", layers=n_layers)
    tl = analysis.arrays(timelines.of(models.card(name)))
    return {
        **tl,
        "curves": analysis.headline(tl),
        "fall": analysis.steepest_fall(tl["steps"], tl["loss"]),
    }


def toy_cards() -> list:
    """The shipped toys' cards, the two-layer model first (empty when none is shipped)."""
    names = [analysis.checkpoint_name(n) for n in LAYERS]
    return [models.card(n) for n in names if n in models.cards()]


def own_example() -> str:
    """A block of ids, then the block again: what an induction head continues."""
    return toy_cards()[0].examples[0].input


def continued(trace) -> tuple[str, int, int]:
    """The tokens the model predicts after each position, as typed (the symbols' names), a
    ✓ where that is the token that does come next; and, over the positions whose token
    occurred earlier (where an induction head can copy what followed it), how many it got
    right of how many."""
    tokens, nxt, named = trace.inputs["tokens"], trace.outputs["next"], trace.outputs["named"]
    shown, right, asked = [], 0, 0
    for i in range(len(tokens) - 1):
        hit = nxt[i] == tokens[i + 1]
        shown.append(f"{named[i]}✓" if hit else named[i])
        if i > 0 and tokens[i] in tokens[1:i]:
            asked, right = asked + 1, right + hit
    return " ".join(shown), right, asked


def symbol_ids(trace) -> str:
    """``a = 1 · b = 2 …``: the ids the typed symbols stand for ("" where ids were typed)."""
    return " · ".join(f"{s} = {i}" for i, s in enumerate(trace.outputs["symbols"], 1))


def at_step(tl: dict, step: int) -> int:
    """The index of ``step`` among the saved steps (the nearest one below, if not saved)."""
    steps = np.asarray(tl["steps"])
    return int(max(np.searchsorted(steps, step, side="right") - 1, 0))


def probe_block(tl: dict) -> str:
    """The probe's repeated block r, as token ids (the probe is [BOS, r, r, r, r])."""
    probe = tl["meta"]["probe"]
    return " ".join(str(tok) for tok in probe[1 : 1 + analysis.PROBE_BLOCK])


def series(found: dict[int, dict]) -> dict[str, dict[int, tuple]]:
    """``{measure: {n_layers: (steps, values)}}`` for the curves figure; K-composition
    only where there are two layers to compose."""
    out: dict[str, dict[int, tuple]] = {}
    for n_layers, tl in found.items():
        values = {"loss": tl["loss"], "icl": tl["icl"], **tl["curves"]}
        for measure in ("loss", "icl", "previous", "induction", "k_composition"):
            if measure in values:
                out.setdefault(measure, {})[n_layers] = (tl["steps"], values[measure])
    return out


def rows(found: dict[int, dict]) -> list[dict]:
    """The curves as a table, one row per model and saved step (the page's CSV/JSON)."""
    out = []
    for n_layers, tl in found.items():
        for i, step in enumerate(tl["steps"]):
            row = {"layers": n_layers, "step": int(step), "loss": float(tl["loss"][i])}
            row["icl"] = float(tl["icl"][i])
            row |= {k: float(v[i]) for k, v in tl["curves"].items()}
            out.append(row)
    return out


def new_film() -> live.Film:
    return live.Film("induction")


def so_far(film: live.Film) -> dict | None:
    """A live run's snapshots so far as per-step arrays (``analysis.arrays``), None before
    the first."""
    tl = film.so_far()
    return None if tl is None else analysis.arrays(tl)


def toy_card(n_layers: int):
    """The ``n_layers`` toy's card (its ``train_now`` is the page's live run)."""
    return models.card(analysis.checkpoint_name(n_layers))


def train_live(layers: int, seed: int, film: live.Film, watch) -> dict | None:
    """Train a fresh toy live through its card (:func:`live.train_card`) while ``watch()``
    draws ``film``; its timeline as per-step arrays (``analysis.arrays``)."""
    label = t("learning.live_label", layers=layers, seed=seed)
    unit = t("learning.live_progress")
    tl = live.train_card(toy_card(layers), seed, label, unit, film, watch=watch)
    return None if tl is None else analysis.arrays(tl)


def as_timeline(tl: dict) -> dict:
    """A live run's timeline in the shape :func:`timeline` gives a shipped one."""
    curves = analysis.headline(tl)
    change = analysis.phase_change(tl["steps"], tl["loss"], curves["induction"])
    meta = {**tl["meta"], "phase_change": change}
    return {
        **tl,
        "meta": meta,
        "curves": curves,
        "fall": analysis.steepest_fall(tl["steps"], tl["loss"]),
    }
