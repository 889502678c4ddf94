"""The en→fr grammar's words in all-MiniLM-L6-v2's space, for the Alignment page's
replacements by meaning (``engine.data.coverage``).

The vectors come from the MiniLM embedder the caller passes (``retrieval.embedder()``; the
app passes its one MiniLM) and are kept on
disk like a retrieval store (``retrieval.build_store``: safetensors keyed by a hash of the
model and the words), so only the first process on a machine embeds the ≈ 1,600 words
(≈ 2.5 s of one core); later ones read them back.
"""

from __future__ import annotations

from engine.analysis import retrieval
from engine.data import coverage


def meanings(encoder: retrieval.Embedder) -> coverage.Meanings:
    """The meaning search over the grammar's words, in ``encoder``'s space."""
    words = coverage.meaning_words()
    passages = [retrieval.Passage(f"word-{w}", w, "grammar") for w in words]
    return coverage.meanings(encoder, retrieval.build_store(passages, encoder).vectors)
