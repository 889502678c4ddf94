"""The Transformer page's calls into the model registry, and its readings of a map.

Loading and tracing go through :mod:`state.models` (one cache for the models, one for the
traces); this module only picks cards and reads maps. Models are shared by every session,
which is safe because attention comes back from ``forward`` (no hooks, no state written
on the module) and the models are in eval mode.
"""

from __future__ import annotations

import numpy as np
import streamlit as st
from kit import queue
from kit.i18n import t

from engine.masks import causal_mask
from engine.models.attentionviz import joint_embedding as embed
from engine.models.attentionviz import neuron_view
from engine.models.cards.pretrained import DIRECTORY
from engine.models.transformer import learned_positional_encoding
from engine.projection import warm_up_in_background
from engine.rollout import head_average, hide_sinks, merge_word_pieces, rollout
from state import models

READINGS = ("heads", "mean", "rollout")  # each head, the mean over heads, rollout


def ours() -> list:
    """Our trained Transformer cards, as the registry orders them."""
    return models.by_family("transformer")


def pretrained_cards() -> list:
    """MiniLM (first) and every model directory the operator allowed, as cards."""
    return models.by_family("pretrained")


def typed_directory(path: str) -> str:
    """The card name of a model directory the user typed; the allowlist and the directory
    are checked when the card is used, with an InputError that says what is wrong."""

    return DIRECTORY + path


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

    return learned_positional_encoding(name)


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
        amap = merge_word_pieces(amap, keep=sinks)
    if reading == "mean":
        amap = head_average(amap)
    elif reading == "rollout":
        amap = rollout(amap)
    return hide_sinks(amap, sinks) if hide else amap


def allowed_keys(kind: str, n_q: int, n_k: int) -> np.ndarray | None:
    """[Q, K] True where a query may attend: causal for the decoder, everything otherwise."""
    if kind != "decoder_self":
        return None

    return causal_mask(n_q, n_k).numpy()


def neuron(q: np.ndarray, k: np.ndarray, mask_row: np.ndarray | None):
    """The neuron view of one query (q_i∘k_j, scores and α from the engine)."""

    return neuron_view(q, k, mask_row)
