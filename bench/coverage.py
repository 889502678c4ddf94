"""How many everyday classroom sentences the en→fr model translates without a warning, as
typed and after the Alignment page's one click, with replacements by spelling (the page
before MiniLM) and by meaning (MiniLM, today's page), in one run.

    python bench/coverage.py [--model NAME] [--beam 5] [--sentences PATH] [--verbose]

"Without a warning" is what the page shows: no unknown word (the page lists any) and no
warning from the model's card (too many unknown words, or confidence below the model's
measured floor). "Covered" is ``engine.data.coverage``: the grammar generates the sentence.
"One click" applies every unknown word's first suggestion (and the grammar's punctuation),
as the page's one-click button does; "one_click_covered" is the share of sentences that
click makes fully covered (a sentence of the grammar, every word known).

Timings: MiniLM's load; the grammar's words embedded (the first process on a machine) and
read back from the cache directory (every later one); the CPU time of ``coverage`` per
sentence and on a text of 100 unknown words (the text gate's limit). The last stdout line
is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

import torch
from _save import save

from engine.analysis import grammar_meanings, retrieval
from engine.data import coverage as cv
from engine.models import registry

ROOT = Path(__file__).resolve().parents[1]
SENTENCES = ROOT / "assets" / "text" / "everyday-sentences.en.txt"
EXAMPLES = ("tea", "morning", "dinner", "fish", "sea", "police", "?")


def read_sentences(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [s.strip() for s in lines if s.strip() and not s.startswith("#")]


def judge(card, model, text: str, beam: int, cov: cv.Coverage) -> dict:
    """The page's verdict on one sentence: coverage before translating, warnings after."""
    trace = card.trace(text, model=model, beam=beam)
    unknown = trace.outputs["unknown"]
    warned = bool(unknown) or bool(trace.outputs.get("warning"))
    return {
        "text": text,
        "translation": trace.outputs["translation"],
        "unknown": len(unknown),
        "card_warning": bool(trace.outputs.get("warning")),
        "no_warning": not warned,
        "covered": cov.covered and not cov.unknown,
    }


def shares(rows: list[dict]) -> dict:
    n = len(rows)
    return {
        "no_warning": round(sum(r["no_warning"] for r in rows) / n, 3),
        "all_words_known": round(sum(r["unknown"] == 0 for r in rows) / n, 3),
        "no_card_warning": round(sum(not r["card_warning"] for r in rows) / n, 3),
        "covered": round(sum(r["covered"] for r in rows) / n, 3),
        "covered_and_no_warning": round(sum(r["covered"] and r["no_warning"] for r in rows) / n, 3),
    }


def one_click(card, model, texts, beam: int, meanings) -> tuple[list[dict], list, float]:
    """Each sentence after the one click: (verdicts, the typed sentences' coverage, the CPU
    seconds of ``coverage`` on the typed sentences)."""
    start = time.process_time()
    typed = [cv.coverage(t, meanings=meanings) for t in texts]
    cpu = time.process_time() - start
    rows = []
    for cov in typed:
        text = cv.detokenize(cov.replaced())
        rows.append(judge(card, model, text, beam, cv.coverage(text)))
    return rows, typed, cpu


def examples(typed: list, words=EXAMPLES) -> dict:
    """Each example word's first three suggestions, where the sentences have it."""
    out = {}
    for cov in typed:
        for w in cov.words:
            if w.text in words and w.text not in out:
                out[w.text] = [s.text for s in w.suggestions]
    return out


def methods(typed: list) -> dict:
    return dict(Counter(w.suggestions[0].how for c in typed for w in c.words if w.suggestions))


def gate_cost(meanings) -> float:
    """CPU seconds of ``coverage`` on 100 distinct unknown words (the most the gate lets
    through): only the first SUGGESTED words get replacements, so the cost is bounded."""
    text = " ".join(f"zq{chr(97 + i // 26)}{chr(97 + i % 26)}ly" for i in range(cv.MAX_TOKENS))
    start = time.process_time()
    cv.coverage(text, meanings=meanings)
    return time.process_time() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", default=None, help="a checkpoint name; default: the en-fr default")
    p.add_argument("--beam", type=int, default=5)
    p.add_argument("--sentences", type=Path, default=SENTENCES)
    p.add_argument("--verbose", action="store_true", help="print every sentence's verdicts")
    a = p.parse_args()
    torch.set_num_threads(1)
    card = registry.get(a.model) if a.model else registry.default("en-fr", "nmt")
    model = card.load()
    texts = read_sentences(a.sentences)

    start, cpu = time.perf_counter(), time.process_time()
    encoder = retrieval.embedder()
    load_s, load_cpu = time.perf_counter() - start, time.process_time() - cpu
    start, cpu = time.perf_counter(), time.process_time()
    grammar_meanings.meanings(encoder)
    cached_s, cached_cpu = time.perf_counter() - start, time.process_time() - cpu
    cpu = time.process_time()
    cv.meanings(encoder)  # what the first process on a machine pays, before the disk cache
    embed_cpu = time.process_time() - cpu

    as_typed = [judge(card, model, t, a.beam, cv.coverage(t)) for t in texts]
    spelling, spelled, spelling_cpu = one_click(card, model, texts, a.beam, None)
    meaning, meant, meaning_cpu = one_click(card, model, texts, a.beam, grammar_meanings.meanings)
    if a.verbose:
        for t, s, m in zip(texts, spelling, meaning, strict=True):
            marks = "".join("ok" if x["covered"] else "--" for x in (s, m))
            print(f"{marks} {t}  →  {s['text']}  |  {m['text']}  →  {m['translation']}")
    result = {
        "model": card.name,
        "beam": a.beam,
        "sentences": len(texts),
        "one_click_covered": {
            "spelling": shares(spelling)["covered"],
            "meaning": shares(meaning)["covered"],
        },
        "as_typed": shares(as_typed),
        "spelling": shares(spelling),
        "meaning": shares(meaning),
        "examples": {"spelling": examples(spelled), "meaning": examples(meant)},
        "replacements_by_method": {"spelling": methods(spelled), "meaning": methods(meant)},
        "unknown_words": sum(r["unknown"] for r in as_typed),
        "still_unknown_after": {
            "spelling": sum(r["unknown"] for r in spelling),
            "meaning": sum(r["unknown"] for r in meaning),
        },
        "timings": {
            "minilm_load_s": round(load_s, 2),
            "minilm_load_cpu_s": round(load_cpu, 2),
            "grammar_words": len(cv.meaning_words()),
            "grammar_words_embedded_cpu_s": round(embed_cpu, 2),
            "grammar_words_from_cache_s": round(cached_s, 2),
            "grammar_words_from_cache_cpu_s": round(cached_cpu, 2),
            "coverage_ms_per_sentence": {
                "spelling": round(1000 * spelling_cpu / len(texts), 1),
                "meaning": round(1000 * meaning_cpu / len(texts), 1),
            },
            "coverage_100_unknown_words_cpu_s": round(gate_cost(grammar_meanings.meanings), 3),
        },
    }
    print(json.dumps(save(result), ensure_ascii=False))


if __name__ == "__main__":
    main()
