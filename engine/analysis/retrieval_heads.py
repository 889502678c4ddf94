"""Retrieval heads on the chat model (Wu et al. 2024, "Retrieval Head Mechanistically
Explains Long-Context Factuality", arXiv 2404.15574), with the masking test that shows
they matter.

**Score.** A needle-in-a-haystack prompt (``engine.data.ruler``, single needle) is read
with its answer teacher-forced. The answer's tokens are copied from the needle: answer
token k sits at context position j_k. Head (l, h) *retrieves* at answer token k when the
query that writes it (position P + k − 1) puts its largest attention weight on j_k. The
retrieval score of a head is the share of copied tokens it retrieves, over every example
(Wu et al. count a head when its top-attended token is the one being copied, and call
heads above 0.1 retrieval heads).

**Masking.** Greedy decoding writes the answer iff each answer token is the argmax given
the answer so far, so one teacher-forced pass tells whether the model finds the needle
(exact match). The top-k heads by score are masked (their output set to 0, TransformerLens's
zero ablation of z), and, as the control, k heads drawn at random (several draws): needle
accuracy for each. Wu et al. find masking retrieval heads breaks retrieval while masking
random heads barely moves it.

The layers are :func:`engine.models.llama.forward` (the one Llama layer), with an attention
that computes the output through torch's fused kernel and the weights only for the rows
that write the answer.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from engine.data import ruler
from engine.models import llama

TASK = "niah_number"
LENGTH = 512  # tokens: long enough for a haystack, short enough for 2 × 30 examples here


@dataclass
class Needle:
    ids: list[int]  # context + question + answer (teacher-forced)
    start: int  # position of the first answer token
    answer: list[int]
    source: list[int]  # j_k: where answer token k sits in the context


def needles(tok, n: int, *, seed: int = 0, length: int = LENGTH) -> list[Needle]:
    """``n`` single-needle examples whose answer is found, token for token, in the context."""
    out, s = [], seed
    while len(out) < n:
        ex = ruler.generate(tok, TASK, length, s)
        s += 1
        answer = tok.encode(" " + ex.answers[0], add_special_tokens=False)
        ctx = list(ex.context_ids)
        at = [k for k in range(len(ctx) - len(answer) + 1) if ctx[k : k + len(answer)] == answer]
        if len(at) != 1:
            continue  # the answer is not one run of the context's own tokens
        prompt = ctx + list(ex.question_ids)
        source = list(range(at[0], at[0] + len(answer)))
        out.append(Needle(prompt + answer, len(prompt), answer, source))
    return out


def _attend(chat, t: int, rows: Sequence[int] | None, masked: dict[int, list[int]], seen: list):
    """attend(layer, q, k, v) for :func:`llama.forward`: causal attention over ``t``
    positions, heads in ``masked[layer]`` writing 0, and the argmax key of each query in
    ``rows`` per head appended to ``seen``."""
    model = chat.model
    cos, sin = llama.rotary(model, range(t))
    causal = torch.full((t, t), float("-inf")).triu(1)
    scale = chat.head_dim**-0.5
    g = chat.n_heads // chat.n_kv_heads

    def attend(li, q, k, v):
        q = llama.rope(q.transpose(0, 1), cos, sin)  # (H, T, d)
        k = llama.rope(k.transpose(0, 1), cos, sin)  # (H_kv, T, d)
        o, _ = llama.attention(q, k, v.transpose(0, 1), scale=scale, mask=causal, weights=False)
        if rows is not None:
            r = torch.as_tensor(rows)
            e = (q[:, r] @ k.repeat_interleave(g, 0).transpose(1, 2)) * scale + causal[r]
            seen.append(e.argmax(-1))  # (H, |rows|): the top-attended key
        for h in masked.get(li, ()):
            o[h] = 0.0
        return o.transpose(0, 1)  # (T, H, d)

    return attend


def scores(chat, examples: Iterable[Needle], should_stop=None) -> np.ndarray:
    """``[L, H]``: the share of copied answer tokens each head retrieves."""
    hits = torch.zeros(chat.n_layers, chat.n_heads)
    count = 0
    with torch.inference_mode():
        for ex in examples:
            if should_stop is not None and should_stop():
                break
            rows = [ex.start + k - 1 for k in range(len(ex.answer))]
            seen: list = []
            llama.forward(chat.model, ex.ids, _attend(chat, len(ex.ids), rows, {}, seen))
            top = torch.stack(seen)  # (L, H, A)
            hits += (top == torch.as_tensor(ex.source)).float().sum(-1)
            count += len(ex.answer)
    return (hits / max(count, 1)).numpy()


def found(chat, ex: Needle, masked: dict[int, list[int]]) -> bool:
    """Greedy decoding would write the answer (each answer token the argmax)."""
    with torch.inference_mode():
        logits = llama.forward(chat.model, ex.ids, _attend(chat, len(ex.ids), None, masked, []))
    pred = logits[ex.start - 1 : ex.start - 1 + len(ex.answer)].argmax(-1)
    return bool((pred == torch.as_tensor(ex.answer)).all())


def by_layer(heads: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for layer, head in heads:
        out.setdefault(int(layer), []).append(int(head))
    return out


def top_heads(score: np.ndarray, k: int) -> list[tuple[int, int]]:
    order = np.argsort(-score, axis=None, kind="stable")[:k]
    return [tuple(int(x) for x in np.unravel_index(i, score.shape)) for i in order]


def masking(
    chat,
    examples: Sequence[Needle],
    score: np.ndarray,
    k: int,
    *,
    draws: int = 5,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Needle accuracy with nothing masked, with the top-``k`` heads masked, and with ``k``
    random heads masked (``draws`` draws, never the top ones): the control."""
    every = [(li, h) for li in range(chat.n_layers) for h in range(chat.n_heads)]
    top = top_heads(score, k)
    rng = random.Random(seed)
    others = [x for x in every if x not in set(top)]
    conditions = {"none": [], "top": top}
    for d in range(draws):
        conditions[f"random-{d}"] = rng.sample(others, k)
    started, acc, done = time.perf_counter(), {}, 0
    for name, heads in conditions.items():
        masked = by_layer(heads)
        acc[name] = float(np.mean([found(chat, ex, masked) for ex in examples]))
        done += 1
        if progress is not None:
            progress(done, len(conditions))
    random_acc = [acc[f"random-{d}"] for d in range(draws)]
    return {
        "k": k,
        "n": len(examples),
        "accuracy_none": acc["none"],
        "accuracy_top": acc["top"],
        "accuracy_random": random_acc,
        "accuracy_random_mean": float(np.mean(random_acc)),
        "accuracy_random_range": [float(min(random_acc)), float(max(random_acc))],
        "top_heads": [list(x) for x in top],
        "seconds": round(time.perf_counter() - started, 1),
    }
