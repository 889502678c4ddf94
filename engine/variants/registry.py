"""The registry: every variant the app and the profiler know, in display order.

Adding a variant = one file with a Variant subclass + one line here.
"""

from __future__ import annotations

from engine.errors import InputError
from engine.variants.base import Variant
from engine.variants.based import Based
from engine.variants.bigbird import BigBird
from engine.variants.chunked import Chunked
from engine.variants.deltanet import DeltaNet, GatedDeltaNet
from engine.variants.differential import Differential
from engine.variants.flash import Flash
from engine.variants.full import Full
from engine.variants.gla import GLA
from engine.variants.gqa import GQA
from engine.variants.int8 import Int8
from engine.variants.kv_cache import KVCache
from engine.variants.linear import Linear
from engine.variants.linformer import Linformer
from engine.variants.longformer import Longformer
from engine.variants.mamba import Mamba
from engine.variants.mla import MLA
from engine.variants.moba import MoBA
from engine.variants.nsa import NSA
from engine.variants.performer import Performer
from engine.variants.reformer import Reformer
from engine.variants.retnet import RetNet
from engine.variants.sigmoid import Sigmoid
from engine.variants.sinks import Sinks
from engine.variants.sparse import Sparse

REGISTRY: dict[str, Variant] = {
    v.name: v
    for v in (
        Full(),
        Flash(),
        Linformer(),
        Performer(),
        Linear(),
        Longformer(),
        Reformer(),
        BigBird(),
        Chunked(),
        Sparse(),
        Mamba(),
        KVCache(),
        Int8(),
        # 2023–2026: what today's models ship (issue 20)
        GQA(),
        MLA(),
        Sinks(),
        Differential(),
        MoBA(),
        NSA(),
        RetNet(),
        GLA(),
        DeltaNet(),
        GatedDeltaNet(),
        Based(),
        Sigmoid(),
    )
}


def names() -> list[str]:
    return list(REGISTRY)


def get(name: str) -> Variant:
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):  # TypeError: a list or a dict is no name
        raise InputError("variant.unknown", name=name, known=", ".join(REGISTRY)) from None


def attend_fn(name: str, hp: dict | None = None):
    """The attention function of variant ``name`` with parameters ``hp``.

    ``model.greedy(src, max_new, attend_fn("linformer", {"k": 8}))`` runs a trained
    Transformer with Linformer in every encoder layer.
    """
    return get(name).attend(hp)
