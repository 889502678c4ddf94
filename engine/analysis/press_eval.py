"""One prefill, every press: a context read once, then each press's compressed cache asked
the question, in one batch.

kvpress compresses after the prefill, so every press at every ratio is a selection over
the same keys (:mod:`engine.analysis.presses`). Here:

1. :func:`prefill` reads context + question once, with full attention, and keeps what the
   presses score from (:class:`~engine.analysis.presses.Observed`) and the context's K/V
   (keys rotated at their text positions, as kvpress caches them);
2. :func:`answer` and :func:`continuation_nll` read what follows the context for B runs
   at once (one kept set ``(L, H_kv, n)`` per run): every run's query attends over the
   context keys its press kept, per layer and K/V head, and over its own later tokens.
   Masking a key to −inf gives it α = 0 exactly, so this equals a cache from which the
   other keys were evicted (tests/unit/test_press_eval.py).

The context's K/V are held once, not once per run: a layer's scores are computed in two
blocks, e = [q K_ctxᵀ + M_run, q K_ownᵀ + causal] · scale, one softmax over both, as
:func:`engine.models.llama.attention` would over the two key sets concatenated. Products
are bfloat16 (engine.models.precision: the long evaluations' path), the rest float32.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass

import torch

from engine import checkpoints
from engine.analysis import presses
from engine.analysis.presses import SNAPKV_WINDOW, Observed, duo_head_scores
from engine.data import ruler
from engine.data.ruler import WINDOW
from engine.errors import InputError
from engine.models import chat as chat_model
from engine.models import llama, precision


@dataclass
class Prefilled:
    """The context's K/V per layer ``(H_kv, n, d)`` and what the presses score from."""

    keys: list[torch.Tensor]
    values: list[torch.Tensor]
    observed: Observed
    n: int


def prefill(
    chat, context_ids, question_ids, head_scores: torch.Tensor, retrieval_scores=None
) -> Prefilled:
    """Context + question in one causal pass, α kept where a press reads it; at most
    ``WINDOW`` tokens (the chat model's training length). ``head_scores`` and
    ``retrieval_scores`` ``(L, H_kv)``: the head-wise presses' rankings (may be None)."""
    ids = [*context_ids, *question_ids]
    if len(ids) > WINDOW:
        raise InputError("ruler.too_long", n=len(ids), limit=WINDOW)
    if not question_ids:
        raise InputError("press.empty_question")
    n, t = len(context_ids), len(ids)
    w = min(SNAPKV_WINDOW, n)
    cos, sin = llama.rotary(chat.model, range(t))
    mask = torch.full((t, t), -math.inf).triu(1)
    scale = chat.head_dim**-0.5
    keys, values, received, window, question = [], [], [], [], []

    def attend(li, q, k, v):
        q, k = llama.rope(q.transpose(0, 1), cos, sin), llama.rope(k.transpose(0, 1), cos, sin)
        v = v.transpose(0, 1)  # (H_kv, T, d)
        keys.append(k[:, :n].clone())
        values.append(v[:, :n].clone())
        o, alpha = llama.attention(q, k, v, scale=scale, mask=mask)  # α (H, T, T)
        received.append(alpha[:, :n, :n].sum(1))
        window.append(alpha[:, n - w : n, :n].clone())
        question.append(alpha[:, n:, :n].clone())
        return o.transpose(0, 1)

    with torch.inference_mode(), precision.only(torch.bfloat16, unless_set=True):
        llama.forward(chat.model, ids, attend, head=False)
    k = torch.stack(keys)
    obs = Observed(
        received=torch.stack(received),
        window=torch.stack(window),
        question=torch.stack(question),
        key_norms=k.norm(dim=-1),
        head_scores=head_scores,
        retrieval_scores=retrieval_scores,
    )
    return Prefilled(keys, values, obs, n)


class _Runs:
    """B runs' own K/V after the shared context, per layer ``(B, H_kv, S, d)``."""

    def __init__(self, chat, pre: Prefilled, kept: torch.Tensor, room: int):
        b = kept.shape[0]
        shape = (b, chat.n_kv_heads, room, chat.head_dim)
        self.keys = [torch.zeros(shape) for _ in range(chat.n_layers)]
        self.values = [torch.zeros(shape) for _ in range(chat.n_layers)]
        # per layer (B, H_kv, 1, 1, n): 0 where the run's press kept the key, else −inf
        blocked = torch.zeros(kept.shape).masked_fill_(~kept, -math.inf)
        self.masks = [blocked[:, li, :, None, None] for li in range(chat.n_layers)]
        self.chat, self.pre, self.b, self.s = chat, pre, b, 0

    def read(self, ids: torch.Tensor, *, last: bool = False) -> torch.Tensor:
        """Tokens ``ids`` ``(B, T)``, run b's after its own earlier ones: logits ``(B, T, V)``,
        or of the last token alone ``(B, 1, V)`` (the vocabulary's product is the costly one)."""
        chat, pre, b, s0 = self.chat, self.pre, self.b, self.s
        t = ids.shape[1]
        hkv, g, d = chat.n_kv_heads, chat.groups, chat.head_dim
        cos, sin = llama.rotary(chat.model, range(pre.n + s0, pre.n + s0 + t))
        causal = torch.zeros(t, s0 + t).masked_fill_(
            torch.ones(t, s0 + t, dtype=torch.bool).triu(s0 + 1), -math.inf
        )
        scale = d**-0.5

        def attend(li, q, k, v):
            q = llama.rope(q.view(b, t, -1, d).transpose(1, 2), cos, sin)  # (B, H, T, d)
            self.keys[li][:, :, s0 : s0 + t] = llama.rope(
                k.view(b, t, hkv, d).transpose(1, 2), cos, sin
            )
            self.values[li][:, :, s0 : s0 + t] = v.view(b, t, hkv, d).transpose(1, 2)
            own_k, own_v = self.keys[li][:, :, : s0 + t], self.values[li][:, :, : s0 + t]
            ctx_k, ctx_v = pre.keys[li], pre.values[li]  # (H_kv, n, d), shared by the runs
            q = q.reshape(b, hkv, g, t, d)
            # q over the context keys: the runs stacked as rows, so K_ctx is read once
            rows = q.transpose(0, 1).reshape(hkv, b * g * t, d)
            e_ctx = (rows @ ctx_k.transpose(1, 2)) * scale  # (H_kv, B·g·T, n)
            e_ctx = e_ctx.view(hkv, b, g, t, -1).transpose(0, 1) + self.masks[li]
            e_own = (q @ own_k.transpose(-1, -2).unsqueeze(2)) * scale + causal
            alpha = torch.softmax(torch.cat([e_ctx, e_own], -1), dim=-1, dtype=torch.float32)
            a_ctx, a_own = alpha[..., : pre.n], alpha[..., pre.n :]
            o = (a_ctx.transpose(0, 1).reshape(hkv, b * g * t, -1) @ ctx_v).view(hkv, b, g, t, d)
            o = o.transpose(0, 1) + a_own @ own_v.unsqueeze(2)  # (B, H_kv, g, T, d)
            return o.permute(0, 3, 1, 2, 4).reshape(b * t, hkv * g, d)

        m = chat.model
        with torch.inference_mode(), precision.only(torch.bfloat16, unless_set=True):
            x = llama.forward(m, ids.reshape(-1), attend, head=False).view(b, t, -1)
            logits = m.lm_head(m.model.norm(x[:, -1:] if last else x))
        self.s += t
        return logits


def answer(chat, pre: Prefilled, kept, question_ids, max_new: int, stops) -> list[list[int]]:
    """Each run's greedy answer after the question, read over its compressed cache; up to
    ``max_new`` tokens, cut before the first of ``stops``."""
    b = kept.shape[0]
    runs = _Runs(chat, pre, kept, len(question_ids) + max_new)
    logits = runs.read(torch.tensor([list(question_ids)] * b), last=True)[:, -1]
    out: list[list[int]] = [[] for _ in range(b)]
    done = [False] * b
    for step in range(max_new):
        nxt = logits.argmax(-1)
        for r, tok in enumerate(nxt.tolist()):
            done[r] = done[r] or tok in stops
            if not done[r]:
                out[r].append(tok)
        if all(done) or step == max_new - 1:
            break
        logits = runs.read(nxt[:, None], last=True)[:, -1]
    return out


def continuation_nll(chat, pre: Prefilled, kept, ids) -> torch.Tensor:
    """Each run's mean negative log-likelihood of ``ids[1:]`` read after its compressed
    context (teacher-forced): ``(B,)`` nats; exp of a mean over examples is a perplexity."""
    b = kept.shape[0]
    runs = _Runs(chat, pre, kept, len(ids) - 1)
    logp = torch.log_softmax(runs.read(torch.tensor([list(ids[:-1])] * b)).float(), -1)
    target = torch.tensor(list(ids[1:]))[None, :, None].expand(b, -1, 1)
    return -logp.gather(2, target)[..., 0].mean(1)


def head_scores(chat, texts: list[list[int]], q_len: int = 500) -> torch.Tensor:
    """DuoAttention's head scores ``(L, H_kv)`` as kvpress computes them on the fly: the
    mean pre-RoPE query and key of each head over ``texts`` (kvpress: BookSum chapters;
    here passages of the shipped book), then :func:`presses.duo_head_scores`."""
    q_sum = torch.zeros(chat.n_layers, chat.n_heads, chat.head_dim)
    k_sum = torch.zeros(chat.n_layers, chat.n_kv_heads, chat.head_dim)
    scale = chat.head_dim**-0.5
    for ids in texts:
        cos, sin = llama.rotary(chat.model, range(len(ids)))
        mask = torch.full((len(ids), len(ids)), -math.inf).triu(1)

        def attend(li, q, k, v, cos=cos, sin=sin, mask=mask):
            q_sum[li] += q.mean(0) / len(texts)
            k_sum[li] += k.mean(0) / len(texts)
            q, k = llama.rope(q.transpose(0, 1), cos, sin), llama.rope(k.transpose(0, 1), cos, sin)
            o, _ = llama.attention(q, k, v.transpose(0, 1), scale=scale, mask=mask, weights=False)
            return o.transpose(0, 1)

        with torch.inference_mode(), precision.only(torch.bfloat16, unless_set=True):
            llama.forward(chat.model, ids, attend, head=False)

    def rotate(x, pos):
        return llama.rope(x, *llama.rotary(chat.model, pos))

    return duo_head_scores(q_sum, k_sum, rotate, q_len=q_len)


# ---- one RULER example, as the sweep and the Chat page ask it ---------------------------

RETRIEVAL_HEADS = checkpoints.result_name("retrieval_heads")
MAX_NEW = {  # greedy answer tokens: the longest answer of each task (digits and UUIDs
    # are a token a character here: a UUID takes up to 38) and a few more
    "niah_number": 14,
    "niah_uuid": 44,
    "niah_multikey": 14,
    "niah_multivalue": 44,
    "vt": 32,
    "cwe": 48,
    "qa": 16,
}
DUO_TEXTS = 4  # book passages of 500 tokens for the DuoAttention head scores


def duo_scores(chat):
    """DuoAttention's head scores from passages spread over the book."""
    text = ruler.BOOK.read_text(encoding="utf-8")
    starts = [len(text) * (i + 1) // (DUO_TEXTS + 1) for i in range(DUO_TEXTS)]
    texts = [chat.tokenizer.encode(text[s : s + 4000])[:500] for s in starts]
    return head_scores(chat, texts)


def retrieval_scores(chat) -> torch.Tensor:
    """The measured retrieval-head scores per K/V head ``(L, H_kv)``, from the shipped
    ``python -m engine.evaluate retrieval_heads`` result (per query head, 20 needles of
    ≤ 512 tokens: other examples than the sweep's), for the ``retrieval_heads`` press."""
    saved = checkpoints.load_result(RETRIEVAL_HEADS)
    if saved is None:
        raise InputError("press.no_retrieval_scores")
    return presses.kv_head_scores(saved["score"], chat.groups)


def run_example(
    chat,
    ex: ruler.Example,
    runs,
    heads,
    *,
    retrieval: torch.Tensor | None = None,
    masks: bool = False,
    pre: Prefilled | None = None,
    perplexity: bool = True,
) -> dict:
    """One example: one prefill, every run's answer and continuation perplexity (with
    ``masks``, each run's kept context positions too, ``(L, H_kv, n)`` bool: a page draws
    them; the sweep's JSON lines do not keep them). ``pre``: this example's prefill, kept
    by a caller that asks it again under other presses (the prefill is most of the cost).
    ``perplexity=False``: no continuation read (a page showing answers only; ``nll`` None).
    ``heads``, ``retrieval``: the two head-wise presses' head scores (None where unused)."""
    c0, t0 = time.process_time(), time.perf_counter()
    if pre is None:
        pre = prefill(chat, ex.context_ids, ex.question_ids, heads, retrieval)
    else:  # head scores are only read by the head-wise presses: the caller's are current
        obs = dataclasses.replace(pre.observed, head_scores=heads, retrieval_scores=retrieval)
        pre = dataclasses.replace(pre, observed=obs)
    kept = torch.stack([presses.keep(p, pre.observed, r, seed=ex.seed) for p, r in runs])
    t1 = time.perf_counter()
    tok = chat.tokenizer
    stops = chat_model.stop_ids(chat)
    outs = answer(chat, pre, kept, ex.question_ids, MAX_NEW[ex.task], stops)
    t2 = time.perf_counter()
    if perplexity:
        nll = continuation_nll(chat, pre, kept, ex.continuation_ids).tolist()
    else:
        nll = [None] * len(runs)
    t3 = time.perf_counter()
    rows = []
    for (p, r), out, k, loss in zip(runs, outs, kept, nll, strict=True):
        text = tok.decode(out, skip_special_tokens=True)
        rows.append(
            {
                "press": p,
                "ratio": r,
                "kept": round(float(k.float().mean()), 4),
                "answer": text,
                "score": ex.score(text),
                "nll": None if loss is None else round(loss, 5),
            }
        )
    if masks:
        for row, k in zip(rows, kept, strict=True):
            row["mask"] = k.numpy()
    return {
        "task": ex.task,
        "length": ex.length,
        "seed": ex.seed,
        "n_tokens": ex.n_tokens,
        "n_context": len(ex.context_ids),
        "answers": list(ex.answers),
        "seconds": {"prefill": t1 - t0, "answers": t2 - t1, "perplexity": t3 - t2},
        "cpu_seconds": time.process_time() - c0,  # what a quiet machine's wall time would be
        "runs": rows,
    }


# ---- the sweep's summary (``python -m engine.evaluate cache``), as a page reads it ---------


def rows(summary: dict) -> list[dict]:
    """The summary as a table: one row per task, length, press and ratio (the CSV's)."""
    return [
        {"task": s["task"], "length": s["length"], "n": s["n"], "counts": s["counts"]}
        | {"press": p, "ratio": float(ratio)}
        | {k: c[k] for k in ("accuracy", "ppl", "kept")}
        for s in summary.values()
        for p, by_ratio in s["presses"].items()
        for ratio, c in by_ratio.items()
    ]


# A loss perplexity hides: accuracy falls by at least this much while the perplexity of
# the same compressed cache rises by at most this share of the full cache's.
HIDDEN_DROP, HIDDEN_RISE = 0.2, 0.10


def hidden_losses(task: dict) -> list[dict]:
    """The presses and ratios of one task and length (a summary entry) whose accuracy
    falls by ≥ ``HIDDEN_DROP`` below the full cache's while their perplexity rises by
    ≤ ``HIDDEN_RISE`` of it: where judging by perplexity alone would miss the loss."""
    full_acc, full_ppl = task["full_accuracy"], task["full_ppl"]
    return [
        {
            "press": p,
            "ratio": float(r),
            "drop": full_acc - c["accuracy"],
            "rise": c["ppl"] / full_ppl - 1,
        }
        for p, by_ratio in task["presses"].items()
        if p != "full"
        for r, c in by_ratio.items()
        if full_acc - c["accuracy"] >= HIDDEN_DROP and c["ppl"] <= full_ppl * (1 + HIDDEN_RISE)
    ]
