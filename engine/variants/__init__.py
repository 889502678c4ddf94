"""Efficient attention variants behind one interface (base.Variant) and one registry."""

from engine.variants.base import Output, Param, Variant
from engine.variants.registry import REGISTRY, get, names

__all__ = ["REGISTRY", "Output", "Param", "Variant", "get", "names"]
