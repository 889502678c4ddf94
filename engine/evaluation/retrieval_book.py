"""``python -m engine.evaluate retrieval_book``: MiniLM retrieval over the whole book.

The Retrieval page's text store is every passage of *Pride and Prejudice*
(:func:`engine.analysis.retrieval.text_passages`). The questions in
``assets/text/pride-and-prejudice-questions.json`` were written for it, each with the
verbatim phrases of the passages that state its answer. A question is retrieved at k
when one of the top k passages (cosine with the question, as the page ranks them)
contains one of its evidence phrases, case-insensitive.

Reports ``recall_at_k`` (k = 1, 3, 5, 10), the mean reciprocal rank of the first
evidence passage, the store's size and how long embedding it took (or that it was read
from the cache), and every question's rank, so a reader can see which ones fail. The
last stdout line is the JSON, also written to ``assets/checkpoints/retrieval-eval-book.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

from engine import checkpoints
from engine._cli import recorded_command
from engine.analysis import retrieval

QUESTIONS = retrieval.TEXT.with_name("pride-and-prejudice-questions.json")
RECALL_AT = (1, 3, 5, 10)
RESULT = checkpoints.result_name("retrieval", "book")


def questions(path: Path = QUESTIONS) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["questions"]


def evidence_rank(order: np.ndarray, passages, evidence: list[str]) -> int | None:
    """1-based rank of the first passage holding an evidence phrase, None if none does."""
    phrases = [e.lower() for e in evidence]
    for rank, i in enumerate(order, start=1):
        text = passages[int(i)].text.lower()
        if any(p in text for p in phrases):
            return rank
    return None


def score(store: retrieval.Store, embedder: retrieval.Embedder, qs: list[dict]) -> dict:
    q = embedder.embed([x["q"] for x in qs])  # (Q, 384) unit rows
    order = np.argsort(-(q @ store.vectors.T), axis=1, kind="stable")  # (Q, N) best first
    rows = []
    for x, o in zip(qs, order, strict=True):
        rank = evidence_rank(o, store.passages, x["evidence"])
        rows.append(
            {"q": x["q"], "answer": x["answer"], "rank": rank, "top": store.passages[int(o[0])].id}
        )
    ranks = [r["rank"] for r in rows]
    return {
        "recall_at_k": {
            str(k): float(np.mean([r is not None and r <= k for r in ranks])) for k in RECALL_AT
        },
        "mrr": float(np.mean([1.0 / r if r else 0.0 for r in ranks])),
        "questions": rows,
    }


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="python -m engine.evaluate retrieval_book", description=__doc__
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="directory for the JSON (default: assets/checkpoints)",
    )
    p.add_argument("--no-save", action="store_true")
    args = p.parse_args(argv)
    import torch  # heavy: only when evaluating

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    emb = retrieval.embedder()
    t1 = time.perf_counter()
    store = retrieval.text_store(emb)
    t2 = time.perf_counter()
    qs = questions()
    result = {
        "command": recorded_command("engine.evaluate retrieval_book", argv, "--out"),
        "model": emb.name,
        "store_passages": len(store.passages),
        "book_passages": len(retrieval.book_windows()),
        "n_questions": len(qs),
        "load_seconds": round(t1 - t0, 2),
        "store_seconds": round(t2 - t1, 2),  # embedding the book, or reading the cache
        **score(store, emb, qs),
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {torch.get_num_threads()} torch thread",
    }
    if not args.no_save:
        checkpoints.save_result(RESULT, result, args.out)
    print(json.dumps(result, ensure_ascii=False))
    return 0
