"""Retrieval page costs: the shipped text's store, one retrieval, one traced answer.

``python bench/retrieval.py [--repeats 50] [--no-answer]``; the last stdout line is one
JSON object. Retrieval is timed once the store's embeddings exist (the issue's budget:
≤ 50 ms), as the page runs it: embed the question with MiniLM, cosine against every
passage, top k. The traced answer (30 new tokens, every step's attention kept, the
passage mass summed) is the chat-model budget (≤ 2 s on one thread). CPU time is given
beside wall time: on a shared machine wall time also counts the waits for a core.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from _save import save

QUESTIONS = (
    "Who is Mr. Darcy's aunt?",
    "What did Mrs. Bennet hope for her daughters?",
    "Where does Mr. Bingley take a house?",
    "Why does Elizabeth refuse Mr. Collins?",
    "What happened at Pemberley?",
)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--no-answer", action="store_true", help="skip the traced answer")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(1)
    from engine.analysis import retrieval
    from engine.models import chat as chat_model
    from engine.models import registry

    t0 = time.perf_counter()
    emb = retrieval.embedder()
    t1 = time.perf_counter()
    store = retrieval.build_store(retrieval.text_passages(), emb)  # from disk when cached
    t2 = time.perf_counter()
    for q in QUESTIONS:  # warm-up: first calls allocate
        retrieval.retrieve(store, q, args.k, embedder=emb)
    wall, cpu, search = [], [], []
    for i in range(args.repeats):
        t, c = time.perf_counter(), time.thread_time()
        r = retrieval.retrieve(store, QUESTIONS[i % len(QUESTIONS)], args.k, embedder=emb)
        wall.append((time.perf_counter() - t) * 1e3)
        cpu.append((time.thread_time() - c) * 1e3)
        search.append(r.timings["search_ms"])
    wall.sort()
    out = {
        "store_passages": len(store.passages),
        "embedder_load_s": round(t1 - t0, 2),
        "store_build_or_read_s": round(t2 - t1, 2),
        "retrieve_ms_median": round(statistics.median(wall), 2),
        "retrieve_ms_p95": round(wall[int(0.95 * (len(wall) - 1))], 2),
        "retrieve_cpu_ms_median": round(statistics.median(cpu), 2),
        "search_ms_median": round(statistics.median(search), 3),
        "budget_ms": 50,
        "repeats": args.repeats,
        "k": args.k,
        "threads": torch.get_num_threads(),
    }
    if not args.no_answer and chat_model.available():
        chat = registry.chat().load()
        r = retrieval.retrieve(store, QUESTIONS[0], args.k, embedder=emb)
        passages = [store.passages[i] for i in r.top]
        retrieval.answer(chat, QUESTIONS[0], passages, max_new_tokens=2)  # warm-up
        w, c = time.perf_counter(), time.process_time()
        trace = retrieval.answer(chat, QUESTIONS[0], passages, max_new_tokens=30)
        out["answer_s"] = round(time.perf_counter() - w, 2)
        out["answer_cpu_s"] = round(time.process_time() - c, 2)
        out["answer_max_new_tokens"] = 30
        out["answer_tokens"] = len(trace.outputs["kept"])  # fewer when the turn ends first
        out["answer_prompt_tokens"] = trace.outputs["n_prompt"]
    print(json.dumps(save(out)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
