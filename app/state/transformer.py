"""Cached loaders for the Transformer page: models once per process, traces per input.

Models are shared by every session, which is safe because attention comes back from
``forward`` (no hooks, no state written on the module) and the models are in eval mode.
"""

from __future__ import annotations

import numpy as np
import streamlit as st


@st.cache_resource(show_spinner="Loading our Transformer…")
def translator(name: str):
    from engine.models import transformer

    return transformer.load(name)


def pretrained(path: str, name: str):
    """The allowlist is checked on every call, so a cached model obeys a changed list too."""
    from engine.models.pretrained import check_model_dir

    return _load_pretrained(str(check_model_dir(path)), name)


@st.cache_resource(show_spinner="Loading the pretrained model (local files only)…")
def _load_pretrained(path: str, name: str):
    from engine.models import pretrained

    return pretrained.load(path, name)


@st.cache_data(max_entries=32, show_spinner="Running the Transformer…")
def own_trace(name: str, text: str):
    from engine.models import transformer

    return transformer.trace(translator(name), text)


@st.cache_data(max_entries=32, show_spinner="Running the pretrained model…")
def pretrained_trace(path: str, name: str, text: str, new_tokens: int):
    from engine.models import pretrained as hf

    return hf.trace(pretrained(path, name), text, max_new_tokens=new_tokens)


@st.cache_resource
def umap_warm_up() -> None:
    """Start numba's compilation in the background the first time the page opens."""
    from engine.projection import warm_up_in_background

    warm_up_in_background()


@st.cache_data(max_entries=64, show_spinner="Projecting queries and keys with UMAP…")
def joint_embedding(q: np.ndarray, k: np.ndarray, mask: np.ndarray | None, seed: int):
    from engine.models.attentionviz import joint_embedding as embed

    return embed(q, k, mask=mask, seed=seed)


@st.cache_data(max_entries=16, show_spinner="Building the bertviz view…")
def bertviz_html(view: str, maps: dict, layer: int) -> str:
    """``maps`` holds bertviz keyword arguments (numpy weights and token lists)."""
    import views.bertviz_view as bv

    if view == "head":
        return bv.head_view_html(**maps, layer=layer)
    return bv.model_view_html(**maps)


def model_choices() -> tuple[list[str], dict]:
    """Our shipped checkpoints, and the pretrained models the operator allowed."""
    from engine import checkpoints
    from engine.models.pretrained import list_models

    ours = checkpoints.available("transformer-")
    return ours, {name: str(path) for name, path in list_models().items()}


DATE_EXAMPLES = [
    "3 May 1979",
    "Monday, 14 July 2025",
    "the 1st of March, 1999",
    "12/08/67",
    "le 5 avril 2031",
]


@st.cache_data(show_spinner=False)
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
