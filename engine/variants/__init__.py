"""Efficient attention variants behind one interface (base.Variant) and one registry."""

from engine.variants.base import Output, Param, Variant
from engine.variants.registry import REGISTRY, attend_fn, get, names

__all__ = ["REGISTRY", "Output", "Param", "Variant", "attend_fn", "get", "names"]
