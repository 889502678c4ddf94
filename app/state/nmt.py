"""Cached loaders for the Alignment page: checkpoints once per process, traces per input.

Models are shared by every session; that is safe because α comes back from the
decoding call (nothing is stored on the module) and the models are in eval mode.
"""

from __future__ import annotations

import streamlit as st


@st.cache_resource(show_spinner="Loading the translation model…")
def translator(name: str):
    from engine.models.bahdanau import Translator

    return Translator.load(name)


@st.cache_data(ttl=60, show_spinner=False)
def available() -> list[str]:
    from engine.checkpoints import available as listed

    return [n for n in listed("nmt-") if not n.startswith("nmt-eval")]


@st.cache_data(max_entries=64, show_spinner="Translating…")
def translate(name: str, text: str, beam: int):
    return translator(name).translate(text, beam=beam)


@st.cache_data(max_entries=64, show_spinner=False)
def forced_alignment(name: str, src: tuple[str, ...], tgt: tuple[str, ...]):
    return translator(name).align(list(src), list(tgt))


@st.cache_data(ttl=60, show_spinner=False)
def evaluation(task: str) -> dict | None:
    """The last `python -m engine.evaluate nmt --task … --save` result, if one is shipped."""
    from engine.checkpoints import load_result

    return load_result(f"nmt-eval-{task}")
