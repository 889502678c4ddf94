"""Cached calls for the Alignment page: checkpoints once per process, traces per input.

Models are shared by every session; that is safe because α comes back from the
decoding call (nothing is stored on the module) and the models are in eval mode.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st


# -- interim stand-in for engine.models.registry (replaced when the registry lands) --------
@dataclass(frozen=True)
class _Limits:
    text: str

    def describe(self) -> str:
        return self.text


@dataclass(frozen=True)
class _Example:
    label: str
    input: str


@dataclass(frozen=True)
class _Card:
    name: str
    task: str
    variant: str

    @property
    def family(self) -> str:
        return "nmt"

    @property
    def title(self) -> str:
        return f"Bahdanau RNNsearch · {self.variant} scoring" + (
            " (dates)" if self.task == "dates" else ""
        )

    @property
    def limits(self):
        from engine.data import enfr

        if self.task == "dates":
            return _Limits("at most 40 characters")
        return _Limits(f"at most {enfr.MAX_LEN} words and punctuation marks")

    @property
    def examples(self):
        from engine.data import enfr

        if self.task == "en-fr":
            return tuple(_Example(k, enfr.detokenize_en(p.src)) for k, p in enfr.EXAMPLES.items())
        dates = ("Tuesday, 3 May 1979", "03/05/79", "May 3rd 1979", "3 mai 1979")
        return tuple(_Example(d, d) for d in (*dates, "the 21st of December, 2012"))

    @property
    def evaluate_command(self) -> str:
        return f"python -m engine.evaluate nmt --task {self.task} --save"

    def results(self) -> dict | None:
        whole = evaluation(self.task)
        if whole is None:
            return None
        if whole["model"] == self.name:
            return whole
        return whole.get("models", {}).get(self.name)


@st.cache_data(ttl=60, show_spinner=False)
def cards(task: str) -> list:
    """Every shipped RNNsearch checkpoint for ``task``, the additive (paper's) one first."""
    from engine.checkpoints import available, load_result

    names = [n for n in available("nmt-") if not n.startswith("nmt-eval")]
    out = []
    for n in names:
        meta = load_result(n)
        if meta["task"] == task:
            out.append(_Card(n, task, meta["config"]["scoring"]))
    order = ("additive", "dot", "general", "concat", "none")
    return sorted(out, key=lambda c: order.index(c.variant) if c.variant in order else 99)


# -- end of the stand-in --------------------------------------------------------------------


@st.cache_resource(show_spinner="Loading the translation model…")
def loaded(name: str):
    from engine.models.bahdanau import Translator

    return Translator.load(name)


@st.cache_data(max_entries=64, show_spinner="Translating…")
def translate(name: str, text: str, beam: int):
    return loaded(name).translate(text, beam=beam)


@st.cache_data(max_entries=64, show_spinner=False)
def forced_alignment(name: str, src: tuple[str, ...], tgt: tuple[str, ...]):
    """α [T, S] with ``tgt`` fed to the decoder: how the model aligns a given translation."""
    return loaded(name).align(list(src), list(tgt))


@st.cache_data(ttl=60, show_spinner=False)
def evaluation(task: str) -> dict | None:
    """The last `python -m engine.evaluate nmt --task … --save` result, if one is shipped."""
    from engine.checkpoints import load_result

    return load_result(f"nmt-eval-{task}")
