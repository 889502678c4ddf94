"""Cached loaders for the Transformer page: models once per process, traces per input.

Models are shared by every session, which is safe because attention comes back from
``forward`` (no hooks, no state written on the module) and the models are in eval mode.
"""

from __future__ import annotations

import numpy as np
import streamlit as st
from kit import queue
from kit.i18n import Lazy, t

from state import models


def translator(name: str):
    """Our trained Transformer, loaded once through the model registry."""
    return models.loaded(name)


def pretrained(path: str, name: str):
    """The allowlist is checked on every call, so a cached model obeys a changed list too."""
    from engine.models.pretrained import check_model_dir

    return _load_pretrained(str(check_model_dir(path)), name)


@st.cache_resource(max_entries=4, show_spinner=Lazy("state.spinner_pretrained"))
def _load_pretrained(path: str, name: str):
    from engine.models import pretrained

    return pretrained.load(path, name)


@st.cache_data(max_entries=32, show_spinner=Lazy("state.spinner_transformer"))
def own_trace(name: str, text: str):
    """Its Trace for ``text`` through the model card (with its warning when far from data)."""
    return models.trace(name, text)


@st.cache_data(max_entries=32, show_spinner=Lazy("state.spinner_running_pretrained"))
def pretrained_trace(path: str, name: str, text: str, new_tokens: int):
    from engine.models import pretrained as hf

    return hf.trace(pretrained(path, name), text, max_new_tokens=new_tokens)


@st.cache_resource(max_entries=1)
def umap_warm_up() -> None:
    """Start numba's compilation in the background the first time the page opens."""
    from engine.projection import warm_up_in_background

    warm_up_in_background()


def joint_embedding(q: np.ndarray, k: np.ndarray, mask: np.ndarray | None, seed: int):
    """UMAP of queries and keys together, through the heavy-work queue."""
    from engine.models.attentionviz import joint_embedding as embed

    return queue.run(t("state.queue_umap"), embed, q, k, mask=mask, seed=seed)


READINGS = ("each head", "mean over heads", "rollout (Abnar & Zuidema 2020)")


def read_heads(amap, reading: str, merge: bool, hide: bool, sinks):
    """The map as the page's toggles ask: word pieces merged, heads read one way, sinks hidden."""
    from engine.rollout import head_average, hide_sinks, merge_word_pieces, rollout

    if merge:
        amap = merge_word_pieces(amap, keep=sinks)
    if reading == READINGS[1]:
        amap = head_average(amap)
    elif reading == READINGS[2]:
        amap = rollout(amap)
    return hide_sinks(amap, sinks) if hide else amap


def allowed_keys(kind: str, n_q: int, n_k: int) -> np.ndarray | None:
    """[Q, K] True where a query may attend: causal for the decoder, everything otherwise."""
    if kind != "decoder_self":
        return None
    from engine.attention.masks import causal_mask

    return causal_mask(n_q, n_k).numpy()


def neuron(q: np.ndarray, k: np.ndarray, mask_row: np.ndarray | None):
    """The neuron view of one query (q_i∘k_j, scores and α from the engine)."""
    from engine.models.attentionviz import neuron_view

    return neuron_view(q, k, mask_row)


def model_choices() -> tuple[list[str], dict]:
    """Our shipped checkpoints, and the pretrained models the operator allowed."""
    from engine.models.pretrained import list_models

    ours = sorted(c.name for c in models.cards().values() if c.family == "transformer")
    return ours, {name: str(path) for name, path in list_models().items()}


DATE_EXAMPLES = [
    "3 May 1979",
    "Monday, 14 July 2025",
    "the 1st of March, 1999",
    "12/08/67",
    "le 5 avril 2031",
]


@st.cache_data(max_entries=8, show_spinner=False)
def examples(task: str) -> list[str]:
    """The grammar's teaching sentences (never in training), or a few typed dates."""
    if task == "dates":
        return DATE_EXAMPLES
    from engine.data.enfr import EXAMPLES

    return [" ".join(p.src) for p in EXAMPLES.values()]


def measured(task: str) -> dict | None:
    """What ``python -m engine.evaluate transformer --task … --save`` measured, if it was run."""
    from engine.checkpoints import load_result
    from engine.evaluation.transformer import eval_name

    return load_result(eval_name(task))
