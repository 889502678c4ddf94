"""How many everyday classroom sentences the en→fr model translates without a warning, as
typed and with the Alignment page's offered replacements applied.

    python bench/coverage.py [--model NAME] [--beam 5] [--sentences PATH] [--verbose]

"Without a warning" is what the page shows: no unknown word (the page lists any) and no
warning from the model's card (too many unknown words, or confidence below the model's
measured floor). "Covered" is ``engine.data.coverage``: the grammar generates the sentence.
The replacements are each unknown word's first suggestion, applied automatically (a teacher
picks among three). The last stdout line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import torch
from _save import save

from engine.data.coverage import coverage, detokenize
from engine.models import registry

ROOT = Path(__file__).resolve().parents[1]
SENTENCES = ROOT / "assets" / "text" / "everyday-sentences.en.txt"


def read_sentences(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [s.strip() for s in lines if s.strip() and not s.startswith("#")]


def judge(card, model, text: str, beam: int) -> dict:
    """The page's verdict on one sentence: coverage before translating, warnings after."""
    cov = coverage(text)
    trace = card.trace(text, model=model, beam=beam)
    unknown = trace.outputs["unknown"]
    warned = bool(unknown) or bool(trace.outputs.get("warning"))
    return {
        "text": text,
        "translation": trace.outputs["translation"],
        "unknown": len(unknown),
        "card_warning": bool(trace.outputs.get("warning")),
        "no_warning": not warned,
        "covered": cov.covered,
        "coverage": cov,
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
    before = [judge(card, model, t, a.beam) for t in texts]
    after = [judge(card, model, detokenize(r["coverage"].replaced()), a.beam) for r in before]
    methods = Counter(
        w.suggestions[0].how for r in before for w in r["coverage"].words if w.suggestions
    )
    if a.verbose:
        for b, f in zip(before, after, strict=True):
            marks = "".join("W" if not x["no_warning"] else "ok" for x in (b, f))
            print(f"{marks:4} {b['text']}  →  {f['text']}  →  {f['translation']}")
    result = {
        "model": card.name,
        "beam": a.beam,
        "sentences": len(texts),
        "before": shares(before),
        "after": shares(after),
        "unknown_words": sum(r["unknown"] for r in before),
        "replacements_by_method": dict(methods),
        "still_unknown_after": sum(r["unknown"] for r in after),
    }
    print(json.dumps(save(result)))


if __name__ == "__main__":
    main()
