"""Moved to :mod:`engine.models.variant_lm`: a trained cell is a model, and a model sits
above the variants it plugs in. Kept only while app/state/variants.py imports it from
here; the import contract in pyproject.toml names this one exception."""

from engine.models.variant_lm import RESULT, SHOW_N, results, token_label, trained_trace

__all__ = ["RESULT", "SHOW_N", "results", "token_label", "trained_trace"]
