"""Transformer studio costs: MiniLM trace at 128 tokens, per-head UMAP (warm), bertviz bytes.

Run: ``python bench/transformer.py`` (``BENCH_THREADS=1`` for one torch thread). Last
stdout line: one JSON object. The issue's targets are printed beside each number; the
ratio to HuggingFace's bare forward pass is measured in the same run, so it holds on a
loaded machine too.
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import sys
import time
from pathlib import Path

from _save import save

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "app"))  # views.bertviz_view, as the app sees it

WORDS = "the cat sat on a mat and looked at me".split()  # each one WordPiece token
N_TOKENS = 128
REPEATS = 15


def median_ms(fn, repeats: int = REPEATS) -> float:
    fn()  # warm: first call allocates
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main() -> dict:
    import torch

    # BENCH_THREADS=1 is the fair setting on a CPU shared with other jobs.
    threads = int(os.environ.get("BENCH_THREADS", torch.get_num_threads()))
    torch.set_num_threads(threads)

    from engine.models import registry
    from engine.models.attentionviz import joint_embedding
    from engine.projection import warm_up

    card = registry.get("minilm")
    m = card.load()
    text = " ".join(itertools.islice(itertools.cycle(WORDS), N_TOKENS - 2))  # + [CLS], [SEP]
    trace = card.trace(text, model=m)
    amap = trace.maps["encoder_self"]
    assert amap.shape[2] == N_TOKENS, amap.shape

    enc = m.tokenizer(text, return_tensors="pt")

    def bare():
        with torch.no_grad():
            m.model(**enc, output_attentions=True)

    trace_ms = median_ms(lambda: card.trace(text, model=m))
    bare_ms = median_ms(bare)

    warm_s = warm_up()
    q, k = trace.vectors["queries.encoder_self"], trace.vectors["keys.encoder_self"]
    umap_ms = median_ms(lambda: joint_embedding(q[2, 3], k[2, 3], seed=0), repeats=3)

    import views.bertviz_view as bv

    head_html = bv.head_view_html(attention=amap.weights, tokens=list(amap.query_labels))
    model_html = bv.model_view_html(attention=amap.weights, tokens=list(amap.query_labels))
    return {
        "minilm_trace_128_median_ms": round(trace_ms, 1),
        "minilm_bare_forward_128_median_ms": round(bare_ms, 1),
        "trace_over_bare_ratio": round(trace_ms / bare_ms, 2),
        "target_trace_ms": 60,
        "umap_first_warm_up_s": round(warm_s, 2),
        "umap_per_head_warm_median_s": round(umap_ms / 1e3, 3),
        "umap_points": int(q.shape[2] + k.shape[2]),
        "target_umap_s": 2.0,
        "bertviz_head_view_bytes": len(head_html.encode()),
        "bertviz_model_view_bytes": len(model_html.encode()),
        "bertviz_shape": list(amap.shape),
        "target_bertviz_bytes": 3_000_000,
        "threads": threads,
    }


if __name__ == "__main__":
    result = main()
    for key, value in result.items():
        print(f"{key:36s} {value}")
    print(json.dumps(save(result)))
