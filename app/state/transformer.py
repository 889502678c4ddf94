"""The Transformer page's calls into the model registry, and its readings of a map.

Loading and tracing go through :mod:`state.models` (one cache for the models, one for the
traces); this module only picks cards and reads maps. Models are shared by every session,
which is safe because attention comes back from ``forward`` (no hooks, no state written
on the module) and the models are in eval mode.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st
from kit import queue
from kit.i18n import t

from engine.analysis import ablation, ablation_encoder, ablation_transformer, causal
from engine.analysis import faithfulness_tokens as faithfulness
from engine.errors import InputError
from engine.models import registry
from engine.models.attentionviz import joint_embedding as embed
from engine.models.attentionviz import neuron_view
from engine.projection import warm_up_in_background
from engine.timeline import Timeline
from state import models, timelines

READINGS = ("heads", "mean", "rollout")  # each head, the mean over heads, rollout
# The timeline's curves, one panel each: the metrics ``engine.train transformer`` records.
PANELS = {
    "loss": ("train_loss", "loss"),
    "accuracy": ("token_accuracy", "exact_match", "bleu"),
    "aer": ("aer.L0", "aer.L1", "aer.L2", "aer.L3"),
}
SCALES = {"bleu": 0.01}  # BLEU (0–100) drawn beside the accuracies, on their 0–1 scale
MODES = ablation.MODES
FAITHFUL_LIMIT = causal.MAX_TOKENS  # the meter reruns the encoder once per input token


def ours() -> list:
    """Our trained Transformer cards, as the registry orders them."""
    return models.by_family("transformer")


def pretrained_cards() -> list:
    """MiniLM (first) and every model directory the operator allowed, as cards."""
    return models.by_family("pretrained")


def typed_directory(path: str) -> str:
    """The card name of a model directory the user typed; the allowlist and the directory
    are checked when the card is used, with an InputError that says what is wrong."""

    return registry.directory(path)


def measured(task: str) -> dict | None:
    """The task's evaluation as its evaluated checkpoint's card reports it (every PE as an
    ablation row), or None when ``evaluate transformer --save`` was not run."""
    for card in ours():
        result = models.results(card.name) if card.task == task else None
        if result and result.get("checkpoint") == card.name:
            return result
    return None


def learned_pe() -> tuple[str, np.ndarray] | None:
    """(checkpoint, its trained PE table [n_positions, d_model]) of the Transformer trained
    with learned positions, or None when none is shipped."""
    found = [c.name for c in ours() if c.variant == "learned"]
    return (found[0], _learned_table(found[0])) if found else None


@st.cache_data(max_entries=2, show_spinner=False)
def _learned_table(name: str) -> np.ndarray:
    return models.loaded(name).positional_table()


@st.cache_resource(max_entries=1)
def umap_warm_up() -> None:
    """Start numba's compilation in the background the first time the page opens."""

    warm_up_in_background()


def joint_embedding(q: np.ndarray, k: np.ndarray, mask: np.ndarray | None, seed: int):
    """UMAP of queries and keys together, through the heavy-work queue."""

    return queue.run(t("state.queue_umap"), embed, q, k, mask=mask, seed=seed)


def read_heads(amap, reading: str, merge: bool, hide: bool, sinks):
    """The map as the page's toggles ask: word pieces merged, heads read one way, sinks hidden."""

    if merge:
        amap = amap.merge_word_pieces(keep=sinks)
    if reading == "mean":
        amap = amap.head_average()
    elif reading == "rollout":
        amap = amap.rollout()
    if reading in ("mean", "rollout"):  # the one "head" is named in the reader's language
        amap = replace(amap, head_labels=(t(f"transformer.head_{reading}"),))
    return amap.hide_sinks(sinks) if hide else amap


def neuron(q: np.ndarray, k: np.ndarray, mask_row: np.ndarray | None):
    """The neuron view of one query (q_i∘k_j, scores and α from the engine)."""

    return neuron_view(q, k, mask_row)


def timeline(name: str) -> Timeline:
    """The checkpoint's training timeline (read once, ``state.timelines``); raises the
    engine's InputError when it is missing or damaged — also when a saved step lacks a
    probe or one of the three maps the page draws."""
    card = models.card(name)
    tl = timelines.of(card)
    n = len(tl.probes[0]) if tl.probes else 0
    maps = {"encoder_self", "decoder_self", "cross"}
    if not n or any(len(row) != n or any(maps - set(p.maps) for p in row) for row in tl.probes):
        reason = "a saved step lacks a probe sentence or one of its maps"
        raise InputError("timeline.bad", name=name, reason=reason, command=card.train_command)
    return tl


def metric_label(metric: str) -> str:
    """A recorded metric's name on screen: ``aer.L1`` is layer 1's head-averaged AER."""
    if metric.startswith("aer.L"):
        return t("transformer.metric_aer", layer=int(metric.removeprefix("aer.L")))
    return t(f"transformer.metric_{metric}")


def curve_panels(tl: Timeline) -> list[tuple[str, dict]]:
    """``[(panel title, {line label: (steps, values)})]`` for ``views.timeline``."""
    panels = []
    for panel, metrics in PANELS.items():
        lines = {}
        for metric in (m for m in metrics if m in tl.metrics):
            steps, values = tl.curve(metric)
            scale = SCALES.get(metric, 1.0)
            lines[metric_label(metric)] = (steps, [v * scale for v in values])
        if lines:
            panels.append((t(f"transformer.panel_{panel}"), lines))
    return panels


def marks(name: str, tl: Timeline) -> list[tuple[str, int]]:
    """Named steps on the curves: where the learning-rate warm-up ends (its peak), if the
    run got that far."""
    warmup = models.card(name).meta.get("warmup")
    if not warmup or warmup > tl.steps[-1]:
        return []
    return [(t("transformer.mark_warmup"), int(warmup))]


def metrics_at(tl: Timeline, i: int) -> str:
    """The metrics measured at saved step ``i``, as one line for a caption."""
    shown = []
    for metrics in PANELS.values():
        for metric in metrics:
            value = tl.metrics.get(metric, [None] * (i + 1))[i]
            if value is not None:
                shown.append(f"{metric_label(metric)} {value * SCALES.get(metric, 1.0):.3g}")
    return " · ".join(shown)


# -- Does it matter? (issue 33) --------------------------------------------------------------
def ablatable(name: str) -> bool:
    """Our Transformer, or a BERT-like encoder such as MiniLM: the models whose heads'
    output projections W_O the ablation hooks reach (a decoder is the Chat page's)."""
    if models.card(name).family == "transformer":
        return True
    m = models.loaded(name)
    layers = getattr(getattr(getattr(m, "model", None), "encoder", None), "layer", None)
    return getattr(m, "arch", "") == "encoder" and layers is not None


def ablate(name: str, text: str, mode: str) -> dict:
    """Every head removed alone on ``text``, through the queue (cached by its inputs)."""
    return queue.run(
        t("transformer.queue_ablate"),
        _ablate,
        models.loaded(name),
        models.card(name).family,
        text,
        mode,
        t("transformer.progress_batches"),
        key=repr((name, text, mode)),
        cancel_label=t("causal.stop"),
    )


def _ablate(m, family: str, text: str, mode: str, unit, cancel, progress) -> dict:
    hooks = dict(mode=mode, should_stop=cancel.is_set, progress=lambda d, n: progress(d, n, unit))
    if family == "transformer":
        found = ablation_transformer.ablate(m, text, **hooks)
        return {
            "mode": found.mode,
            "translation": found.translation,
            "log_prob": found.log_prob,
            "delta_log_prob": {k: v.numpy() for k, v in found.delta_log_prob.items()},
            "delta_loss": {k: v.numpy() for k, v in found.delta_loss.items()},
            "changed": {k: v.numpy() for k, v in found.changed.items()},
            "ablated": found.ablated_translations,
            "stopped": found.stopped,
        }
    found = ablation_encoder.ablate(m, text, **hooks)
    return {
        "mode": found.mode,
        "tokens": found.tokens,
        "shift": found.shift.numpy(),
        "token_shift": found.token_shift.numpy(),
        "stopped": found.stopped,
    }


def faithful(name: str, text: str, token: int) -> faithfulness.TokenFaithfulness:
    """MiniLM's faithfulness meter for token ``token`` of ``text``, through the queue."""
    return queue.run(
        t("transformer.queue_faithful"),
        _faithful,
        models.loaded(name),
        text,
        token,
        t("transformer.progress_batches"),
        key=repr((name, text, token)),
        cancel_label=t("causal.stop"),
    )


def _faithful(m, text: str, token: int, unit, cancel, progress):
    return faithfulness.for_encoder(
        m, text, token, should_stop=cancel.is_set, progress=lambda d, n: progress(d, n, unit)
    )
