"""The Chat page's causal checks (issue 33): head ablation, activation patching, the
logit lens and the token-level faithfulness meter on the one SmolLM2 of this process
(``state.chat``).

Each is seconds of work (an ablation sweep reruns the upper layers L·H times), so each goes
through the bounded queue with progress and Cancel, and its result is cached by its inputs:
a view change that needs no new run only redraws. The engine does the measuring
(``engine.analysis.ablation``, ``patching``, ``logit_lens``, ``faithfulness_tokens``);
this module only queues it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from kit import queue
from kit.i18n import t

from engine.analysis import ablation, causal, faithfulness_tokens, logit_lens, patching
from state import chat as chat_state

MODES = ablation.MODES
SWEEPS = ("heads", "residual")
LIMIT = causal.MAX_TOKENS  # tokens of a prompt an ablation or patching sweep reads
RESIDUAL = patching.MAX_RESIDUAL_TOKENS  # the residual sweep's cost grows as T²: fewer
TABLE_HEADS = ablation.TABLE_HEADS  # the heads whose removal lowers log p most, listed
IOI_CLEAN = "When Mary and John went to the store, John gave a drink to"
IOI_CORRUPTED = "When Mary and John went to the store, Mary gave a drink to"
IOI_ANSWER, IOI_WRONG = " Mary", " John"


@dataclass(frozen=True)
class Pair:
    """What the patching form asks: two prompts of one length and the two tokens read."""

    clean: str = IOI_CLEAN
    corrupted: str = IOI_CORRUPTED
    answer: str = IOI_ANSWER
    wrong: str = IOI_WRONG


def prompt_ids(trace) -> list[int]:
    """The prompt's token ids as the model read them (chat template included)."""
    out = trace.outputs
    return list(out["token_ids"][: out["n_prompt"]])


def ablate(ids: tuple[int, ...], mode: str) -> dict:
    """Every head ablated alone on ``ids``; the answer is the model's own next token."""
    return queue.run(
        t("causal.queue_ablate"),
        _ablate,
        chat_state.model(),
        ids,
        mode,
        t("causal.progress_layers"),
        (queue.work_queue().running, chat_state.generating()),
        key=repr((ids, mode)),
        cancel_label=t("causal.stop"),
    )


def _ablate(chat, ids, mode, unit, busy, cancel, progress) -> dict:
    with queue.spare_cores(*busy) as adjust:  # both cores while nothing else runs
        found = ablation.ablate(
            chat,
            list(ids),
            mode=mode,
            should_stop=lambda: adjust() or cancel.is_set(),
            progress=lambda done, total: progress(done, total, unit),
            loss_for=TABLE_HEADS,  # Δ loss for the table's heads alone: a third less work
        )
    return {
        "mode": found.mode,
        "answer": found.answer_text,
        "log_prob": found.log_prob,
        "loss": found.loss,
        "delta_log_prob": found.delta_log_prob.numpy(),
        "delta_loss": found.delta_loss.numpy(),
        "reference": found.reference,
        "seconds": found.seconds,
        "stopped": found.stopped,
        "layers_done": list(found.layers_done),
        "n_tokens": found.n_tokens,
    }


def patch(pair: Pair, sweep: str) -> dict:
    """The clean run's activations patched into the corrupted run, one at a time."""
    return queue.run(
        t("causal.queue_patch"),
        _patch,
        chat_state.model(),
        pair,
        sweep,
        t("causal.progress_layers"),
        key=repr((pair, sweep)),
        cancel_label=t("causal.stop"),
    )


def _patch(chat, pair: Pair, sweep: str, unit, cancel, progress) -> dict:
    clean = causal.encode(chat, pair.clean)
    corrupted = causal.encode(chat, pair.corrupted)
    prepared = patching.prepare(chat, clean, corrupted, pair.answer, pair.wrong)
    run = patching.heads if sweep == "heads" else patching.residual
    found = run(
        chat,
        prepared,
        should_stop=cancel.is_set,
        progress=lambda done, total: progress(done, total, unit),
    )
    labels = [chat.tokenizer.decode([i]) for i in clean]
    return {
        "what": found.what,
        "metric": found.metric.numpy(),
        "clean_diff": found.clean_diff,
        "corrupted_diff": found.corrupted_diff,
        "seconds": found.seconds,
        "stopped": found.stopped,
        "tokens": labels,
    }


def lens(token_ids: tuple[int, ...], n_prompt: int) -> dict:
    """The logit lens for each written token: its probability and rank at every layer."""
    return queue.run(
        t("causal.queue_lens"),
        _lens,
        chat_state.model(),
        token_ids,
        n_prompt,
        key=repr((token_ids, n_prompt)),
    )


def _lens(chat, token_ids, n_prompt) -> dict:
    found = logit_lens.for_generation(chat, list(token_ids), n_prompt)
    decode = chat.tokenizer.decode
    return {
        "prob": found.prob.numpy(),
        "rank": found.rank.numpy().astype(np.int64),
        "targets": [decode([i]) for i in found.targets],
        "top": [[decode([i]) for i in row] for row in found.top.tolist()],
    }


def faithful(ids: tuple[int, ...], target: int) -> faithfulness_tokens.TokenFaithfulness:
    """The written token ``target`` after ``ids``: attention and rollout beside occlusion
    (one forward pass per input token) and gradient × input."""
    return queue.run(
        t("causal.queue_faithful"),
        _faithful,
        chat_state.model(),
        ids,
        target,
        t("causal.progress_batches"),
        key=repr((ids, target)),
        cancel_label=t("causal.stop"),
    )


def _faithful(chat, ids, target, unit, cancel, progress):
    return faithfulness_tokens.for_chat(
        chat,
        list(ids),
        target,
        should_stop=cancel.is_set,
        progress=lambda done, total: progress(done, total, unit),
    )
