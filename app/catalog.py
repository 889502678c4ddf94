"""The studio's pages: one list shared by the router and the home page's links."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

APP_DIR = Path(__file__).parent


@dataclass(frozen=True)
class PageInfo:
    path: str
    title: str
    url: str
    blurb: str


PAGES = [
    PageInfo("studios/home.py", "Home", "home", "What the studio does."),
    PageInfo(
        "studios/basics.py",
        "Attention basics",
        "basics",
        r"Type a sentence and walk through $\mathrm{softmax}(QK^\top/\sqrt{d_k})\,V$ step by step, "
        "with and without scaling and a causal mask.",
    ),
    PageInfo(
        "studios/positional.py",
        "Positional encoding",
        "positional",
        "Sinusoidal encodings: curves, the full table, similarities, and why "
        "$PE(pos+k)$ is a rotation of $PE(pos)$.",
    ),
    PageInfo(
        "studios/alignment/page.py",
        "Alignment (Bahdanau)",
        "alignment",
        "Neural machine translation with additive attention (2014): translations, "
        "alignment heatmaps and a step-by-step decoder.",
    ),
    PageInfo(
        "studios/memory/page.py",
        "Memory (MemN2N)",
        "memory",
        "End-to-end memory networks (2015) on bAbI-style stories: answers and the weight "
        "on every memory slot at every hop.",
    ),
    PageInfo(
        "studios/transformer/page.py",
        "Transformer",
        "transformer",
        "Self- and cross-attention per layer and head in our Transformer and a real "
        "pretrained MiniLM, with bertviz views.",
    ),
    PageInfo(
        "studios/compare.py",
        "Compare models",
        "compare",
        "One sentence through every model of a task: alignments on the same axes, AER "
        "against the gold links, and the difference between any two.",
    ),
    PageInfo(
        "studios/variants/page.py",
        "Variants lab",
        "variants",
        "Efficient attention side by side on the same input: errors, patterns, "
        "long-sequence maps and measured cost profiles.",
    ),
    PageInfo("studios/lessons/page.py", "Lessons", "lessons", "Decks: predict, then reveal."),
]
