"""The logit lens (nostalgebraist 2020): read the residual stream after every layer as if
it were the last, through the model's final norm and unembedding.

For position t and the token y_t it predicts (the next token of the text, or for the last
position the model's own choice), after layer l:

    p_l(y_t) = softmax(W_U · norm(resid_post[l][t]))[y_t],   rank_l(y_t) = #{v : p_l(v) > p_l(y_t)}

Row 0 reads the token embeddings (before any layer); row L is the model's own output
(tests/unit/test_causal.py checks it equals the model's logits).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from engine import gate
from engine.analysis import causal
from engine.errors import InputError
from engine.models import chat as chat_model
from engine.models import precision

MAX_TOKENS = chat_model.MAX_PROMPT_TOKENS + chat_model.MAX_NEW_TOKENS  # a prompt and its reply
CHUNK_ROWS = 1_024  # rows unembedded at once: 1,024 × 49,152 float32 logits ≈ 200 MB


@dataclass
class Lens:
    """Per layer (row 0: embeddings, row l: after layer l) and read position."""

    positions: list[int]  # the positions t read
    targets: list[int]  # y_t, the token each position predicts
    prob: torch.Tensor  # (L + 1, P): p_l(y_t)
    rank: torch.Tensor  # (L + 1, P): 0 = the lens's top token
    top: torch.Tensor  # (L + 1, P): the lens's top token id


def logit_lens(
    chat,
    ids: Sequence[int],
    positions: Sequence[int] | None = None,
    *,
    arith: str = "float32",
) -> Lens:
    """The lens at ``positions`` of ``ids`` (default: every position)."""
    ids = causal.check_ids(chat, ids, MAX_TOKENS)
    T = len(ids)
    run = causal.run_with_cache(chat, ids, arith=arith)
    positions = list(range(T)) if positions is None else [int(p) for p in positions]
    if any(not 0 <= p < T for p in positions):
        raise InputError("causal.position_range", last=T - 1)
    targets = [ids[p + 1] if p + 1 < T else int(run.logits[-1].argmax()) for p in positions]
    resid = run.resid_pre[:, positions]  # (L + 1, P, d)
    rows = resid.flatten(0, 1)  # (R, d), R = (L + 1)·P: one product for many rows
    y = torch.as_tensor(targets).repeat(resid.shape[0])[:, None]  # (R, 1)
    prob, rank, top = [], [], []
    model, chunk = chat.model, max(resid.shape[1], CHUNK_ROWS // resid.shape[1] * resid.shape[1])
    with torch.inference_mode(), precision.only(causal.arithmetic(arith)):
        for r0 in range(0, len(rows), chunk):
            logits = model.lm_head(model.model.norm(rows[None, r0 : r0 + chunk]))[0].float()
            picked = logits.gather(-1, y[r0 : r0 + chunk])  # (r, 1)
            prob.append(torch.softmax(logits, -1).gather(-1, y[r0 : r0 + chunk])[:, 0])
            rank.append((logits > picked).sum(-1))
            top.append(logits.argmax(-1))
    prob, rank, top = (torch.cat(x).view(resid.shape[:2]) for x in (prob, rank, top))
    return Lens(
        positions=positions,
        targets=targets,
        prob=prob,
        rank=rank,
        top=top,
    )


def for_generation(
    chat, token_ids: Sequence[int], n_prompt: int, *, arith: str = "float32"
) -> Lens:
    """The lens for each generated token: positions n_prompt − 1 … T − 2 of a chat Trace's
    ``outputs["token_ids"]`` (prompt and reply), each reading the token written next."""
    token_ids = causal.check_ids(chat, token_ids, MAX_TOKENS)
    T = len(token_ids)
    # at least one written token to read: an empty range divided by zero
    n_prompt = gate.within(n_prompt, 1, T - 1, "lens.prompt_length", high=T - 1, value=n_prompt)
    return logit_lens(chat, token_ids, range(n_prompt - 1, T - 1), arith=arith)
