"""Moved to :mod:`engine.masks` (below both kernels and attention, so neither imports the
other for a mask). Kept only while app/state/transformer.py imports it from here."""

from engine.masks import causal_mask

__all__ = ["causal_mask"]
