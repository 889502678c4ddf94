"""What the induction toy measures at each saved step, and where its phase change is.

Olsson et al. 2022 ("In-context learning and induction heads", arXiv 2209.11895) watch
four things move together during training of small attention-only models:

- the loss, with a bump: a plateau, then a sudden fall;
- the in-context-learning score: loss at a late token minus loss at an early token
  (their 500th vs 50th; here the last positions vs the first ones of a short sequence);
  it turns negative when the model starts to use its context;
- the previous-token score of layer-0 heads and the induction score of layer-1 heads,
  with TransformerLens's ``head_detector`` definitions (:mod:`engine.analysis.heads`),
  measured on a fixed probe [BOS, r, r, r, r] of repeated random tokens;
- the K-composition between a layer-1 head h1 and a layer-0 head h0 (Elhage et al. 2021,
  "A Mathematical Framework for Transformer Circuits"):

      K(h1, h0) = ‖W_QK^{h1} W_OV^{h0}‖_F / (‖W_QK^{h1}‖_F ‖W_OV^{h0}‖_F)

  large when what h0 writes is what h1's keys read (the previous token, for an
  induction head).

The phase change is the window of saved steps in which the best layer-1 induction score
crosses 0.5 (:func:`phase_change`), and the loss drop across it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from engine import checkpoints, timeline
from engine.analysis import heads
from engine.errors import InputError
from engine.models.induction import BOS, AttentionOnlyTransformer, checkpoint_name
from engine.timeline import Timeline
from engine.trace import AttentionMap, Trace

THRESHOLD = 0.5  # the induction score the phase change is said to cross
PROBE_BLOCK = 10  # |r| in the probe [BOS, r, r, r, r]
PROBE_REPEATS = 4
EARLY = slice(0, 4)  # loss positions before any token can repeat (blocks are ≥ 5 long)
LATE = slice(-8, None)  # the last positions, well into the repeats
# Beside the checkpoints the model registry serves, in a folder of their own: the toy is
# studied through its timeline, not run on a user's text.
TIMELINE_DIR = checkpoints.CHECKPOINT_DIR / "induction"


def probe_tokens(vocab_size: int, seed: int = 0) -> list[int]:
    """The fixed probe [BOS, r × 4], |r| = 10 distinct content tokens.

    Four copies rather than the detector's two: a query in the first copy has no earlier
    match, so its attention can never land on the induction pattern and caps the score at
    the share of rows that have one (1/2 with two copies, 3/4 here)."""
    return heads.repeated_random_tokens(
        vocab_size, PROBE_BLOCK, repeats=PROBE_REPEATS, seed=seed, bos_id=BOS, exclude=[BOS]
    )


def composition_score(M: torch.Tensor, W_OV: torch.Tensor) -> torch.Tensor:
    """‖M W_OV‖_F / (‖M‖_F ‖W_OV‖_F) over the last two axes (broadcasting the rest).

    1 when the product keeps all of both norms (W_OV's image lies where M reads);
    near 1/√d for random matrices in d dimensions."""
    num = torch.linalg.matrix_norm(M @ W_OV)
    return num / (torch.linalg.matrix_norm(M) * torch.linalg.matrix_norm(W_OV))


@torch.no_grad()
def k_composition(model: AttentionOnlyTransformer) -> np.ndarray:
    """``[H1, H0]``: K(h1, h0) between every layer-1 head and every layer-0 head."""
    assert len(model.layers) >= 2, "K-composition needs two layers"
    W_QK = model.layers[1].W_QK()[:, None]  # (H1, 1, d, d)
    W_OV = model.layers[0].W_OV()[None, :]  # (1, H0, d, d)
    return composition_score(W_QK, W_OV).numpy().astype(np.float32)


@torch.no_grad()
def position_losses(model: AttentionOnlyTransformer, tokens: torch.Tensor) -> torch.Tensor:
    """``[T − 1]``: the next-token loss at each position, averaged over the batch."""
    logits, _ = model(tokens[:, :-1])
    per = F.cross_entropy(logits.transpose(1, 2), tokens[:, 1:], reduction="none")
    return per.mean(dim=0)


def in_context_score(losses: torch.Tensor) -> float:
    """Loss at the late positions minus loss at the early ones (negative: context helps)."""
    return float(losses[LATE].mean() - losses[EARLY].mean())


@torch.no_grad()
def snapshot(
    model: AttentionOnlyTransformer, probe: list[int], held_out: torch.Tensor
) -> tuple[dict[str, float], list[Trace]]:
    """Every measure of one saved step, as the common timeline records it: metrics ``loss``,
    ``icl``, each head's ``previous.L{l}.H{h}`` and ``induction.L{l}.H{h}`` and, with two
    layers, ``k_composition.H{h1}.H{h0}``; and the probe's Trace (its ``self`` map
    ``[L, H, T, T]``). :func:`arrays` turns a timeline of these back into per-step arrays."""
    was_training = model.training
    model.eval()
    losses = position_losses(model, held_out)
    _, A = model(torch.tensor([probe]))
    maps = A[0].numpy().astype(np.float32)
    scores = heads.head_scores(maps, probe)
    metrics = {"loss": float(losses.mean()), "icl": in_context_score(losses)}
    for kind in ("previous", "induction"):
        metrics |= {_head(kind, li, h): float(v) for (li, h), v in np.ndenumerate(scores[kind])}
    if len(model.layers) >= 2:
        kc = k_composition(model)
        metrics |= {f"k_composition.H{a}.H{b}": float(v) for (a, b), v in np.ndenumerate(kc)}
    model.train(was_training)
    labels = [str(tok) for tok in probe]
    amap = AttentionMap(
        maps, labels, labels, "self", layer_labels=[f"L{i}" for i in range(len(maps))]
    )
    trace = Trace(
        model="induction", task="induction", inputs={"tokens": list(probe)}, maps={"self": amap}
    )
    return metrics, [trace]


def _head(kind: str, layer: int, head: int) -> str:
    return f"{kind}.L{layer}.H{head}"


def arrays(tl: Timeline) -> dict:
    """A timeline of :func:`snapshot` records as per-step arrays: ``steps`` ``[S]``,
    ``loss``, ``icl`` ``[S]``, ``maps`` ``[S, L, H, T, T]``, ``previous`` and ``induction``
    ``[S, L, H]``, ``k_composition`` ``[S, H, H]`` (two layers), and ``meta`` (with
    ``steps`` the steps trained: a stopped run's last snapshot is where it stopped)."""
    maps = np.stack([row[0].maps["self"].weights for row in tl.probes])
    L, H = maps.shape[1:3]
    m = tl.metrics

    def per_head(kind: str, rows: int, cols: int, name) -> np.ndarray:
        grid = [[m[name(kind, r, c)] for c in range(cols)] for r in range(rows)]
        return np.asarray(grid, dtype=np.float32).transpose(2, 0, 1)

    out = {
        "steps": np.asarray(tl.steps, dtype=np.int64),
        "loss": np.asarray(m["loss"], dtype=np.float64),
        "icl": np.asarray(m["icl"], dtype=np.float64),
        "maps": maps,
        "previous": per_head("previous", L, H, _head),
        "induction": per_head("induction", L, H, _head),
    }
    if L >= 2:
        out["k_composition"] = per_head("k_composition", H, H, lambda k, a, b: f"{k}.H{a}.H{b}")
    return {**out, "meta": {**tl.meta, "steps": int(tl.steps[-1])}}


def headline(timeline: dict) -> dict[str, np.ndarray]:
    """Per saved step: the best previous-token head of layer 0, the best induction head of
    the last layer, and the largest K-composition (the curves a chart draws)."""
    out = {
        "previous": np.asarray(timeline["previous"])[:, 0].max(axis=-1),
        "induction": np.asarray(timeline["induction"])[:, -1].max(axis=-1),
    }
    if "k_composition" in timeline:
        out["k_composition"] = np.asarray(timeline["k_composition"]).max(axis=(-2, -1))
    return out


def phase_change(steps, loss, induction, threshold: float = THRESHOLD) -> dict | None:
    """The window of saved steps in which the induction score first crosses ``threshold``
    for good, widened to the saved steps either side of the crossing's neighbours so that
    the fall of the loss around it is inside: ``{"start", "end", "loss_drop", "before",
    "after"}`` (step numbers, loss[start] − loss[end], induction score at start and end),
    or None when the score never crosses (the one-layer control)."""
    steps, loss, ind = (np.asarray(a, dtype=np.float64) for a in (steps, loss, induction))
    above = ind >= threshold
    if not above[-1]:
        return None
    # The last step below the threshold: from there on the score stays above it.
    below = np.flatnonzero(~above)
    if len(below) == 0:
        return None  # above from the start: no change was seen
    i = int(below[-1])
    start, end = max(i - 1, 0), min(i + 2, len(steps) - 1)
    return {
        "start": int(steps[start]),
        "end": int(steps[end]),
        "loss_drop": float(loss[start] - loss[end]),
        "before": float(ind[start]),
        "after": float(ind[end]),
    }


def timeline_name(n_layers: int) -> str:
    return checkpoint_name(n_layers) + timeline.SUFFIX


def load_timeline(n_layers: int, directory: Path | None = None) -> dict:
    """The shipped timeline of the ``n_layers``-layer toy as :func:`arrays` (maps as
    float32), plus ``meta`` (config, probe, phase change, command).

    A missing file or one that does not hold a consistent timeline (truncated, a step
    axis of different lengths, steps not increasing, another model's) is an
    :class:`InputError` that says how to rebuild it."""
    d = Path(directory) if directory is not None else TIMELINE_DIR
    name = checkpoint_name(n_layers)
    if not timeline.exists(name, d):
        raise InputError("induction.no_timeline", layers=n_layers)
    try:
        out = arrays(timeline.load(name, d))
        if out["maps"].shape[1] != n_layers or out["meta"]["config"]["n_layers"] != n_layers:
            raise ValueError(f"not a {n_layers}-layer timeline")
    except (InputError, ValueError, KeyError, TypeError, IndexError) as exc:
        reason = str(exc)[:120]
        raise InputError("induction.bad_timeline", layers=n_layers, reason=reason) from None
    return out


def steepest_fall(steps, loss) -> dict:
    """The interval between two saved steps in which the loss falls the most:
    ``{"start", "end", "drop", "share"}``, share = that drop / the whole fall of the run.
    A smooth fall on a log axis spreads over many intervals (share ≈ 1 / intervals); a
    phase change puts much of it in one."""
    steps, loss = np.asarray(steps), np.asarray(loss, dtype=np.float64)
    drops = loss[:-1] - loss[1:]
    i = int(np.argmax(drops))
    total = float(loss[0] - loss.min())
    return {
        "start": int(steps[i]),
        "end": int(steps[i + 1]),
        "drop": float(drops[i]),
        "share": float(drops[i] / total) if total > 0 else 0.0,
    }
