"""The process's one MiniLM as a sentence embedder, for Retrieval and Alignment.

The model is the one the app's model cache holds for the MiniLM card (the Transformer page
reads its attention), wrapped: a server process keeps a single copy of it, and the engine
keeps none (``engine.analysis.retrieval.embedder`` takes the model it is given).
"""

from __future__ import annotations

import streamlit as st
from kit.i18n import Lazy

from engine.analysis import retrieval as rag
from engine.models import registry
from state import models

CARD = registry.MINILM  # the packaged all-MiniLM-L6-v2


@st.cache_resource(max_entries=1, show_spinner=Lazy("retrieval.spinner_embedder"))
def embedder() -> rag.Embedder:
    return rag.embedder(models.loaded(CARD))
