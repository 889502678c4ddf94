"""Cached calls of the Lessons page that no other page makes: measured memory at one length,
and a model's results for a deck's numbers."""

from __future__ import annotations

import streamlit as st

from engine import profile
from state import chat as chat_state
from state import models

HEADS_IN_A_LAYER = 12  # a BERT-base layer: what one head's cost becomes in a real model


@st.cache_data(max_entries=4, show_spinner="Measuring peak memory…")
def memory_at(names: tuple[str, ...], n: int, d: int = 64) -> list[dict]:
    """Measured peak bytes of one head of each variant at length ``n`` (one timed run)."""

    profile.warm_tracker()
    rows = []
    for name in names:
        p = profile.measure(name, n, d=d, repeats=1)
        rows.append(
            dict(
                variant=name,
                measured_mib=p.peak_bytes / 2**20,
                predicted_mib=p.predicted_bytes / 2**20,
                seconds=p.median_s,
                layer_gib=profile.predict_bytes(name, n, d, HEADS_IN_A_LAYER) / 2**30,
            )
        )
    return rows


def results(name: str) -> dict | None:
    """What a model's card measured (a deck's ``{result:…}`` reads it); None for a model
    that is not shipped here or has no shipped evaluation."""
    return models.results(name) if name in models.cards() else None


def ioi(text: str, heads: tuple[tuple[int, int], ...]) -> dict | None:
    """The lesson's IOI view: each head's attention from the prompt's last token (raw text,
    no chat template, as the IOI evaluation reads it; the first token, the sink, hidden
    and each row renormalised), and the head's measured patching effect; None without the
    shipped evaluation."""
    saved = chat_state.evaluation("causal")
    if saved is None or "ioi" not in saved:
        return None
    trace = chat_state.generate(chat_state.Request(prompt=text, template=False, max_new_tokens=1))
    # Step 0 of the generation: the prompt's last token as the query, over the whole prompt.
    full = trace.maps["generation"]
    amap = chat_state.without_first(full)
    n = trace.outputs["n_prompt"] - (len(full.key_labels) - len(amap.key_labels))
    pooled = saved["ioi"]["heads_pooled"]
    return {
        "rows": [amap.weights[layer, head, 0, :n] for layer, head in heads],
        "tokens": list(amap.key_labels[:n]),
        "effects": [pooled[layer][head] for layer, head in heads],
        "n_pairs": saved["ioi"]["n_pairs"],
        "written": trace.outputs["generated"],
    }
