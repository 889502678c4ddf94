"""Retrieval: attention mass per passage beside dropping each passage from the prompt.

The output is the chat model's own answer (the tokens of the steps that wrote it,
:func:`engine.analysis.retrieval.answer_steps`), read teacher-forced: log p(answer |
prompt) = Σ_s log p(a_s | prompt, a_<s). Dropping passage j rebuilds the prompt without
it (the others renumbered, as if it had never been retrieved); Δ_j = log p(answer |
all passages) − log p(answer | all but j): the passage the answer needs most has the
largest Δ. Gradient × input sums g·x over the passage's tokens' input embeddings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from engine.analysis import faithfulness as F
from engine.analysis import retrieval
from engine.trace import Trace


@dataclass(frozen=True)
class PassageRemoval:
    """One answer: ``attention`` ``[P]`` (the mass per passage, mean over layers, heads
    and answer steps), ``delta`` Δ_j ``[P]``, ``grad_x_input`` ``[P]``, ``support``
    which passages are supporting facts, ``answer_log_prob`` log p(answer | all)."""

    attention: np.ndarray
    delta: np.ndarray
    grad_x_input: np.ndarray
    support: tuple[bool, ...]
    answer_log_prob: float

    def agreement(self) -> dict[str, F.Agreement]:
        return {
            "occlusion": F.agreement(self.attention, self.delta),
            "grad_x_input": F.agreement(self.attention, self.grad_x_input),
        }


def answer_ids(trace: Trace) -> list[int]:
    """The generated tokens up to the last one of the answer (a final end token left out)."""
    steps = retrieval.answer_steps(trace)
    p = trace.outputs["n_prompt"]
    return trace.outputs["token_ids"][p : p + steps[-1] + 1] if steps else []


def _answer_log_prob(logits: torch.Tensor, n_prompt: int, answer: list[int]) -> torch.Tensor:
    """Σ_s log p(a_s) from teacher-forced logits ``[B, T, V]`` → ``[B]``."""
    lp = torch.log_softmax(logits[:, n_prompt - 1 : n_prompt - 1 + len(answer)].float(), -1)
    target = torch.tensor(answer).expand(lp.shape[0], -1)
    return lp.gather(-1, target[..., None])[..., 0].sum(-1)


def _log_prob(chat, prompt_ids: list[int], answer: list[int]) -> float:
    with torch.inference_mode():
        logits = chat.model(input_ids=torch.tensor([prompt_ids + answer]), use_cache=False).logits
    return float(_answer_log_prob(logits, len(prompt_ids), answer)[0])


def _grad_x_input(chat, prompt, answer: list[int]) -> np.ndarray:
    """Σ over each passage's tokens of g·x, g = ∂ log p(answer) / ∂ input embeddings."""
    ids = torch.tensor([prompt.ids + answer])
    x = chat.model.get_input_embeddings()(ids).detach()  # (1, T, d)

    def f(e: torch.Tensor) -> torch.Tensor:
        logits = chat.model(inputs_embeds=e, use_cache=False).logits
        return _answer_log_prob(logits, len(prompt.ids), answer)

    with torch.enable_grad():
        per_token = F.gradient_x_input(f, x)[0]  # (T,)
    return np.array([per_token[a:b].sum() for a, b in prompt.spans])


def drop_each(
    chat, trace: Trace, *, should_stop: Callable[[], bool] | None = None
) -> PassageRemoval | None:
    """Δ_j and g·x for every passage of a :func:`retrieval.answer` trace (P + 1 forward
    passes and one backward pass over the prompt and the answer). ``should_stop()`` is
    asked before each of those P + 2 runs (a caller ticks its progress there); True ends
    it with None: a Δ for some passages alone would rank nothing."""
    answer = answer_ids(trace)
    listed = trace.outputs["passages"]
    if not answer or not listed:
        raise ValueError("drop_each needs an answer and at least one passage")
    question, mode = trace.inputs["question"], trace.inputs["mode"]
    passages = [retrieval.Passage(p["id"], p["text"], p["source"], p["support"]) for p in listed]
    prompt = retrieval.build_prompt(chat, question, passages, mode=mode)
    prompts = [prompt.ids]
    for j in range(len(passages)):
        rest = passages[:j] + passages[j + 1 :]  # none left: the prompt without context
        kept = retrieval.build_prompt(chat, question, rest, mode=mode if rest else "none")
        prompts.append(kept.ids)
    stop = should_stop or (lambda: False)
    log_probs = []
    for ids in prompts:
        if stop():
            return None
        log_probs.append(_log_prob(chat, ids, answer))
    if stop():
        return None
    full, without = log_probs[0], log_probs[1:]
    steps = retrieval.answer_steps(trace)
    mass = retrieval.aggregate(trace.maps["passages"].weights)  # (S, P)
    return PassageRemoval(
        attention=mass[steps].mean(0),
        delta=full - np.array(without),
        grad_x_input=_grad_x_input(chat, prompt, answer),
        support=tuple(p.support for p in passages),
        answer_log_prob=full,
    )
