"""Is the attention faithful, token by token? One output; over every input token, two
readings of attention beside what changes the output.

For one output y read at position q of a text x_0 … x_{n−1}, and each input token j:

- **attention**: row q of layer l's map, mean over heads, ā_l[q, j] (every layer kept, so a
  page changes the layer without rerunning anything);
- **rollout** (Abnar & Zuidema 2020, :meth:`AttentionMap.rollout`): row q of R_L;
- **occlusion** (:func:`engine.analysis.faithfulness.occlusion`): token j removed from
  attention, its key masked for every query at every layer, Δ_j = f(x) − f(x without j).
  A query left with no key at all keeps its own (only query 0 of a causal model, when j
  = 0; no other position then reads it). Token j's own position still runs, so Δ_q
  measures only what the read position takes from its own key: its token also reaches
  the output through the residual stream, which no attention mask removes;
- **gradient × input** on the input embeddings
  (:func:`~engine.analysis.faithfulness.gradient_x_input`), and for MiniLM **integrated
  gradients** from the zero word embedding
  (:func:`~engine.analysis.faithfulness.integrated_gradients`). Not for the chat model:
  its first operation is RMSNorm, x / √(mean(x²) + ε), so f(t·x) hardly moves with t
  except within √ε of 0, where the gradient grows as 1/t (g·x ≈ 2 × 10⁵ at t = 10⁻⁴ on
  a six-token text) and is NaN at 0 itself: the zero path has no usable integral. In
  MiniLM the position embeddings are added before its LayerNorm, so the zero word
  embedding is an ordinary input (positions only).

What f is, per model:

- the chat model (a causal decoder, :func:`for_chat`): f = log p(y | x_≤q), y the token
  written after x_q. A token after q is never read, so its occlusion is exactly 0;
- MiniLM (a BERT encoder, :func:`for_encoder`): f = ⟨h_q(x), u⟩, the read token's last
  hidden state along its own unoccluded direction u = h_q(x) / ‖h_q(x)‖, held fixed: a
  linear read-out of one state, as a logit reads a state along a fixed row of the
  unembedding, so occlusion (how much of h_q along u is lost), g·x and IG all answer
  about the one token whose attention row is shown. The cosine to the unoccluded
  embedding would serve occlusion, but at x itself it is at its maximum (1), where its
  gradient is 0: gradient × input would be 0 for every token.

:meth:`TokenFaithfulness.agreement` scores each attention reading against each attribution
(Spearman's ρ, top-1, :func:`~engine.analysis.faithfulness.agreement`);
:meth:`~TokenFaithfulness.verdict` says in one word how each reading agrees with
occlusion, the most direct of the three: ``agrees`` (ρ ≥ 0.5 and the same top token),
``partly`` (one of ρ ≥ 0.3 or the same top token), ``disagrees``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from engine.analysis import causal
from engine.analysis import faithfulness as F
from engine.errors import InputError
from engine.models import chat as chat_model
from engine.models import precision, pretrained, token_text
from engine.trace import AttentionMap

IG_STEPS = 32  # MiniLM, 13 tokens: |Σ IG − (f(x) − f(0))| = 0.01 of f(x) − f(0) = 11.3
CHUNK = 8  # occluded copies per forward pass: progress and Stop between chunks
READINGS = ("attention", "rollout")
ATTRIBUTIONS = ("occlusion", "grad_x_input", "integrated_gradients")
AGREES_RHO, PARTLY_RHO = 0.5, 0.3


@dataclass(frozen=True)
class TokenFaithfulness:
    """One output read at position ``read`` of ``tokens``; every row is over the n inputs."""

    tokens: tuple[str, ...]
    read: int  # q: the position whose output is scored
    output: str  # the token predicted (chat), or the token whose state is read (MiniLM)
    value: float  # f(x)
    attention: np.ndarray  # (L, n): ā_l[q, :], mean over heads, per layer
    rollout: np.ndarray  # (n,): R_L[q, :]
    occlusion: np.ndarray  # (n,): Δ_j (NaN where a stopped run did not reach)
    grad_x_input: np.ndarray  # (n,)
    integrated: F.Integrated | None  # None for the chat model, or when stopped before it
    seconds: float
    stopped: bool = False

    def readings(self, layer: int) -> dict[str, np.ndarray]:
        return {"attention": self.attention[layer], "rollout": self.rollout}

    def attributions(self) -> dict[str, np.ndarray]:
        ig = None if self.integrated is None else self.integrated.attributions
        return {
            "occlusion": self.occlusion,
            "grad_x_input": self.grad_x_input,
            "integrated_gradients": ig,
        }

    def agreement(self, layer: int) -> dict[tuple[str, str], F.Agreement]:
        """(reading, attribution) → Spearman's ρ and top-1, for the finished attributions."""
        found = {}
        for r, a in self.readings(layer).items():
            for name, s in self.attributions().items():
                if s is not None and np.isfinite(s).all():
                    found[r, name] = F.agreement(a, s)
        return found

    def verdict(self, layer: int) -> dict[str, str]:
        """Each reading against occlusion: ``agrees``, ``partly`` or ``disagrees``."""
        out = {}
        for (r, name), a in self.agreement(layer).items():
            if name == "occlusion":
                rho = -1.0 if a.spearman is None else a.spearman
                strong, some = rho >= AGREES_RHO and a.top1, rho >= PARTLY_RHO or a.top1
                out[r] = "agrees" if strong else "partly" if some else "disagrees"
        return out

    def scaled(self, layer: int) -> dict[str, np.ndarray]:
        """Every row divided by its largest |value|, so all share one −1 … 1 scale."""
        rows = self.readings(layer) | self.attributions()
        out = {}
        for name, row in rows.items():
            if row is not None:
                m = np.nanmax(np.abs(row)) if np.isfinite(row).any() else 0.0
                out[name] = np.asarray(row, np.float64) / (m or 1.0)
        return out


def _rows(weights: np.ndarray, q: int, labels: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Attention ``[L, H, T, T]`` → (ā_l[q, :] per layer ``[L, T]``, R_L[q, :] ``[T]``)."""
    amap = AttentionMap(weights, list(labels), list(labels), "self")
    return weights[:, :, q].mean(1), amap.rollout().weights[-1, 0, q]


def _chunked(
    score: Callable[[torch.Tensor], torch.Tensor],
    should_stop: Callable[[], bool] | None,
    tick: Callable[[], None],
) -> Callable[[torch.Tensor], torch.Tensor]:
    """``score`` over a ``keep`` batch in chunks of at most ``CHUNK``; NaN for chunks after
    a stop. Every chunk is one size, the last filled up with unoccluded copies: a product
    over fewer rows rounds differently (2 × 10⁻⁶ nats measured on the chat model, float32),
    and a copy that reads nothing removed must equal the first exactly."""

    def run(keep: torch.Tensor) -> torch.Tensor:
        B = len(keep)
        size = -(-B // -(-B // CHUNK))  # ⌈B / ⌈B / CHUNK⌉⌉
        out = torch.full((B,), float("nan"), dtype=torch.float64)
        for i in range(0, B, size):
            if should_stop is not None and should_stop():
                break
            part = keep[i : i + size]
            filled = torch.cat([part, keep.new_ones(size - len(part), keep.shape[1])])
            out[i : i + len(part)] = score(filled)[: len(part)].double()
            tick()
        return out

    return run


def _ticker(total: int, progress: Callable[[int, int], None] | None) -> Callable[[], None]:
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total)

    return tick


# -- the chat model ------------------------------------------------------------------------
def _key_mask(keep: torch.Tensor, T: int) -> torch.Tensor:
    """``keep`` ``[B, T]`` → the additive causal mask ``[B, 1, T, T]`` without the dropped
    keys; a row left with no key keeps its own (see the module's docstring)."""
    allowed = torch.ones(T, T, dtype=torch.bool).tril()[None] & keep[:, None, :]
    allowed |= ~allowed.any(-1, keepdim=True) & torch.eye(T, dtype=torch.bool)
    mask = torch.zeros(allowed.shape).masked_fill(~allowed, torch.finfo(torch.float32).min)
    return mask[:, None]


def _chat_log_p(chat, q: int, y: int, **inputs) -> torch.Tensor:
    """log p(y) at position q, per copy ``[B]``: the unembedding of row q alone (all rows'
    logits would be B·T·49,152 floats). Products in float32 whatever their shape (a
    float16 product of a few rows would differ from the same rows among many)."""
    with precision.only(torch.float32):
        h = chat.model.model(use_cache=False, **inputs).last_hidden_state[:, q]  # (B, d)
        return torch.log_softmax(chat.model.lm_head(h).float(), -1)[:, y]


def chat_occlusion(
    chat,
    ids: Sequence[int],
    position: int,
    target: int,
    *,
    should_stop: Callable[[], bool] | None = None,
    tick: Callable[[], None] = lambda: None,
) -> np.ndarray:
    """Δ_j for every token j of ``ids`` (those after ``position`` included: exactly 0)."""
    ids = causal.check_ids(chat, ids)
    T = len(ids)

    def score(keep: torch.Tensor) -> torch.Tensor:
        batch = torch.tensor([ids]).expand(len(keep), -1)
        return _chat_log_p(
            chat, position, target, input_ids=batch, attention_mask=_key_mask(keep, T)
        )

    return F.occlusion(_chunked(score, should_stop, tick), T)


def for_chat(
    chat,
    ids: Sequence[int],
    target: int | None = None,
    *,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> TokenFaithfulness:
    """The next token after ``ids`` (``target``, by default the model's own greedy choice)
    against every token of ``ids``: attention, rollout, occlusion and g·x."""
    t0 = time.perf_counter()
    ids = causal.check_ids(chat, ids)
    T, q = len(ids), len(ids) - 1
    x = chat.model.get_input_embeddings()(torch.tensor([ids])).detach()  # (1, T, d)
    with torch.inference_mode(), precision.only(torch.float32):
        out = chat.model.model(
            input_ids=torch.tensor([ids]), output_attentions=True, use_cache=False
        )
        weights = torch.stack([a[0] for a in out.attentions]).float().numpy()  # (L, H, T, T)
        log_p = torch.log_softmax(chat.model.lm_head(out.last_hidden_state[0, q]).float(), -1)
        target = int(log_p.argmax()) if target is None else causal.token_id(chat, target)
        value = float(log_p[target])
    labels = chat_model.token_labels(chat, list(ids))
    attention, rolled = _rows(weights, q, labels)
    tick = _ticker(-(-(T + 1) // CHUNK) + 1, progress)
    delta = chat_occlusion(chat, ids, q, target, should_stop=should_stop, tick=tick)

    def f(e: torch.Tensor) -> torch.Tensor:
        return _chat_log_p(chat, q, target, inputs_embeds=e)

    grad, ig, stopped = _gradients(f, x, None, should_stop, tick)
    return TokenFaithfulness(
        tokens=tuple(labels),
        read=q,
        output=chat_model.token_label(chat, target),
        value=value,
        attention=attention,
        rollout=rolled,
        occlusion=delta,
        grad_x_input=grad,
        integrated=ig,
        seconds=time.perf_counter() - t0,
        stopped=stopped or bool(np.isnan(delta).any()),
    )


def _gradients(f, x: torch.Tensor, steps: int | None, should_stop, tick):
    """(g·x ``[n]``, IG over ``steps`` intervals or None, stopped) of ``f`` at the
    embeddings ``x`` ``[1, n, d]``."""
    if should_stop is not None and should_stop():
        return np.full(x.shape[1], np.nan), None, True
    with torch.enable_grad():
        grad = F.gradient_x_input(f, x)[0]
        tick()
        if steps is None:
            return grad, None, False
        if should_stop is not None and should_stop():
            return grad, None, True
        ig = F.integrated_gradients(f, x[0], steps=steps)
        tick()
    return grad, ig, False


# -- MiniLM --------------------------------------------------------------------------------
def for_encoder(
    m,  # a loaded PretrainedCard (an encoder)
    text: str,
    token: int,
    *,
    ig_steps: int = IG_STEPS,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> TokenFaithfulness:
    """Token ``token`` of a BERT encoder's reading of ``text``: f = ⟨h_q(x), u⟩ (see the
    module's docstring) against every token of the text."""
    t0 = time.perf_counter()
    enc = pretrained.encode(m, text)
    ids = enc["input_ids"]  # (1, T)
    T = ids.shape[1]
    if not (isinstance(token, int) and 0 <= token < T):
        raise InputError("causal.position_range", last=T - 1)
    rest = {k: v for k, v in enc.items() if k not in ("input_ids", "attention_mask")}
    with torch.no_grad():  # not inference_mode: u is read again under autograd
        out = m.model(**enc, output_attentions=True)
        weights = torch.stack([a[0] for a in out.attentions]).float().numpy()
        h = out.last_hidden_state[0, token]
        u = h / h.norm()
    labels = token_text.labels(m.tokenizer, ids[0])
    attention, rolled = _rows(weights, token, labels)
    tick = _ticker(-(-(T + 1) // CHUNK) + 2, progress)

    def read(**inputs) -> torch.Tensor:
        return m.model(**inputs).last_hidden_state[:, token] @ u

    def score(keep: torch.Tensor) -> torch.Tensor:
        B = len(keep)
        batch = {k: v.expand(B, -1) for k, v in rest.items()}
        return read(input_ids=ids.expand(B, -1), attention_mask=keep.long(), **batch)

    delta = F.occlusion(_chunked(score, should_stop, tick), T)

    def f(e: torch.Tensor) -> torch.Tensor:
        B = len(e)
        batch = {k: v.expand(B, -1) for k, v in enc.items() if k != "input_ids"}
        return read(inputs_embeds=e, **batch)

    x = m.model.get_input_embeddings()(ids).detach()  # word embeddings (1, T, d)
    grad, ig, stopped = _gradients(f, x, ig_steps, should_stop, tick)
    return TokenFaithfulness(
        tokens=tuple(labels),
        read=token,
        output=labels[token],
        value=float(h.norm()),
        attention=attention,
        rollout=rolled,
        occlusion=delta,
        grad_x_input=grad,
        integrated=ig,
        seconds=time.perf_counter() - t0,
        stopped=stopped or bool(np.isnan(delta).any()),
    )
