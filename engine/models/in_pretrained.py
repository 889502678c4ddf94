"""Variants inside a real pretrained model, and real Q/K/V as the lab's input.

- :func:`swap` runs all-MiniLM-L6-v2 on the user's text with a variant in place of
  softmax attention in every layer (through transformers' AttentionInterface, see
  engine.models.pretrained) and measures what it changes: the cosine of the mean-pooled
  sentence embedding against the model's own, the relative error of every layer's
  output, and the maps. A variant is called exact when every layer matches the
  original to within EXACT_TOL (measured, not assumed).
- :func:`layer_qkv` gives Q, K, V of one MiniLM layer (and head) for the user's text,
  ``[1, H, N, D]``: attention as a trained model computes it, with real structure.
- :func:`variant_perplexity` swaps a variant into the chat model (SmolLM2, a causal
  decoder) in every layer or chosen layers and measures perplexity on a text and the
  greedy continuation beside the model's own; :func:`variants_in_llm` runs every
  variant of the registry that can be causal and says why the others cannot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from engine import gate
from engine.errors import InputError
from engine.messages import Message
from engine.models import chat as chat_model
from engine.models import pretrained, token_text
from engine.variants.registry import REGISTRY, attend_fn, get

EXACT_TOL = 1e-4  # max relative layer error still called exact (float32 reordering noise)
# The variants that run untrained inside a pretrained encoder (Variant.swappable).
SWAPPABLE = tuple(name for name, v in REGISTRY.items() if v.swappable)


def default_budgets(n: int) -> dict[str, dict]:
    """Budgets for a text of ``n`` tokens under which each method's error means something
    (Variant.pretrained_budget): about half of the keys each, so the methods are compared
    at one budget; one covering the whole text would make the variant exact."""
    return {name: get(name).pretrained_budget(n) for name in SWAPPABLE}


@dataclass
class SwapResult:
    """One variant in every layer: what it changed against the model's own attention."""

    variant: str
    params: dict
    cosine: float  # mean-pooled sentence embedding vs the original
    layer_errors: list[float]  # ‖h_l − h_l^orig‖ / ‖h_l^orig‖, l = 1 … L
    exact: bool
    maps: np.ndarray  # [L, H, N, N] the variant's effective maps
    map_exact: bool
    map_implied: bool
    notes: list[str] = field(default_factory=list)


def _forward(m, enc, attend):
    # The variant reaches every layer through the context variable that
    # pretrained.trace sets too; set here directly to keep the hidden states.
    token = pretrained.ATTEND.set(attend)
    try:
        with torch.no_grad():
            out = m.model(**enc, output_attentions=True, output_hidden_states=True)
    finally:
        pretrained.ATTEND.reset(token)
    return out


def mean_pool(hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Sentence-Transformers' mean pooling over the real tokens: ``[B, d]``."""
    w = attention_mask[..., None].to(hidden.dtype)
    return (hidden * w).sum(1) / w.sum(1).clamp(min=1)


def swap(m, text: str, variants=SWAPPABLE, budgets: dict | None = None) -> dict:
    """Each variant in every layer of ``m`` on ``text``.

    Returns ``{"tokens", "n", "original_maps" [L, H, N, N], "results": {name: SwapResult}}``;
    ``budgets[name]`` overrides :func:`default_budgets` for that variant.
    """
    if not m.swappable or m.arch != "encoder":
        raise InputError("swap.not_swappable", name=m.display)
    if budgets is not None and not isinstance(budgets, dict):
        raise InputError("profile.params")  # "a table: variant name → its parameters"
    enc = pretrained.encode(m, text)
    n = int(enc["input_ids"].shape[1])
    base = _forward(m, enc, None)
    ref_emb = mean_pool(base.last_hidden_state, enc["attention_mask"])
    chosen = {**default_budgets(n), **(budgets or {})}
    results = {}
    for name in variants:
        variant = get(name)
        hp = chosen.get(name, {})
        try:
            out = _forward(m, enc, attend_fn(name, hp))
        except InputError as exc:  # a budget outside this text's limits: say which
            raise InputError("swap.failed", title=variant.title, reason=exc.message) from None
        errors = [
            float((h - h0).norm() / h0.norm())
            for h, h0 in zip(out.hidden_states[1:], base.hidden_states[1:], strict=True)
        ]
        emb = mean_pool(out.last_hidden_state, enc["attention_mask"])
        cosine = float(torch.nn.functional.cosine_similarity(emb, ref_emb).item())
        notes = [] if variant.approximates_full else [Message("swap.not_an_approximation")]
        results[name] = SwapResult(
            variant=name,
            params=variant.resolve(hp, n),
            cosine=cosine,
            layer_errors=errors,
            exact=max(errors) <= EXACT_TOL,
            maps=torch.stack([a[0] for a in out.attentions]).float().numpy(),
            map_exact=variant.map_exact,
            map_implied=variant.map_implied,
            notes=notes,
        )
    return {
        "tokens": token_text.labels(m.tokenizer, enc["input_ids"][0]),
        "n": n,
        "original_maps": torch.stack([a[0] for a in base.attentions]).float().numpy(),
        "results": results,
    }


def layer_qkv(m, text: str, layer: int = 0, head: int | None = None):
    """Q, K, V ``[1, H, N, D]`` of MiniLM ``layer`` (``head`` only, H = 1) and the tokens.

    BERT's self-attention reads the previous layer's output, so its own query/key/value
    projections applied to ``hidden_states[layer]`` reproduce the q, k, v it used.
    """
    layers = getattr(getattr(m.model, "encoder", None), "layer", None)
    if layers is None or not hasattr(layers[0].attention, "self"):
        raise InputError("qkv.no_layers", name=m.display)
    if not gate.is_whole(layer, 0, len(layers) - 1):
        raise InputError("qkv.layer_range", last=len(layers) - 1, layer=layer)
    sa = layers[layer].attention.self
    if head is not None and not gate.is_whole(head, 0, sa.num_attention_heads - 1):
        raise InputError("qkv.head_range", last=sa.num_attention_heads - 1, head=head)
    enc = pretrained.encode(m, text)
    out = _forward(m, enc, None)
    h = out.hidden_states[layer][0]  # (N, d_model)
    shape = (h.shape[0], sa.num_attention_heads, sa.attention_head_size)
    with torch.no_grad():
        q, k, v = (
            proj(h).view(shape).transpose(0, 1)[None] for proj in (sa.query, sa.key, sa.value)
        )
    if head is not None:
        q, k, v = q[:, head : head + 1], k[:, head : head + 1], v[:, head : head + 1]
    tokens = token_text.labels(m.tokenizer, enc["input_ids"][0])
    return q.contiguous(), k.contiguous(), v.contiguous(), tokens


# -- variants inside the chat model ----------------------------------------------------------
LLM_MIN_TOKENS = 8
LLM_MAX_TOKENS = 1024  # one teacher-forced pass; maps are formed per layer, H·T² each
PROMPT_TOKENS = 24  # the continuation starts from the text's first tokens
NEW_TOKENS = 12


def causal_reason(name: str) -> Message | None:
    """Why variant ``name`` cannot run inside the pretrained decoder, or None when it can:
    it is bidirectional, or it needs training (``Variant.needs_training``): swapped in
    untrained it computes something the model never learned to read (measured on 256
    tokens of the shipped text, full 15.9: perplexity 430 for differential, 3.5e3 for
    Based, 7.7e3 for MQA, 5.4e4–1.2e9 for MLA and the linear-recurrent family)."""
    variant = get(name)
    if variant.causal_support == "never":
        return Message("llm_variant.not_causal", title=variant.title)
    if variant.needs_training:
        why = Message(variant.needs_training)
        return Message("llm_variant.needs_training", title=variant.title, why=why)
    return None


def _llm_attend(n_layers: int, attend, layers) -> tuple[list[int], object]:
    """The ATTEND value for ``layers`` (None: all) and the sorted layer list, checked."""
    if layers is None:
        return list(range(n_layers)), attend
    chosen = sorted({int(li) for li in layers})
    if not chosen or chosen[0] < 0 or chosen[-1] >= n_layers:
        raise InputError("llm_variant.layers", last=n_layers - 1, layers=list(layers))
    return chosen, dict.fromkeys(chosen, attend)


def _llm_logits(chat, ids: list[int], attend, *, last: bool = False) -> torch.Tensor:
    """Logits ``[T, V]`` of one causal pass (``[1, V]`` with ``last``), ``attend`` in
    place of attention (None: the model's own).

    No KV cache: every position runs through the variant, which only takes
    self-attention over one length (cached decoding steps would fall back to eager).
    """
    token = pretrained.ATTEND.set(attend)
    try:
        with torch.no_grad():
            out = chat.model(
                input_ids=torch.tensor([ids]), use_cache=False, logits_to_keep=int(last)
            )
    finally:
        pretrained.ATTEND.reset(token)
    return out.logits[0].float()


def _nll(logits: torch.Tensor, ids: list[int]) -> float:
    """Mean −log p(x_{t+1} | x_≤t) over the text (nats); perplexity is its exp."""
    return float(torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(ids[1:])))


def _greedy(chat, prompt: list[int], attend, n_new: int) -> list[int]:
    ids = list(prompt)
    for _ in range(n_new):
        ids.append(int(_llm_logits(chat, ids, attend, last=True)[-1].argmax()))
    return ids[len(prompt) :]


def _check_llm(chat, ids: list[int]) -> None:
    if chat.model.config._attn_implementation != pretrained.STUDIO_ATTENTION:
        raise InputError("pretrained.not_swappable", name=chat.display)
    if not LLM_MIN_TOKENS <= len(ids) <= LLM_MAX_TOKENS:
        raise InputError(
            "llm_variant.text_tokens", n=len(ids), low=LLM_MIN_TOKENS, high=LLM_MAX_TOKENS
        )


def full_reference(chat, ids: list[int], *, new_tokens: int = NEW_TOKENS) -> dict:
    """The model's own attention on ``ids``: the logits, perplexity and the greedy
    continuation (``new_tokens``, 1 … 64) of the text's first tokens."""
    _check_llm(chat, ids)
    new_tokens = chat_model.NEW_TOKENS.check(new_tokens)
    logits = _llm_logits(chat, ids, None)
    prompt = ids[: min(PROMPT_TOKENS, len(ids))]
    nll = _nll(logits, ids)
    return {
        "logits": logits,
        "nll": nll,
        "ppl": math.exp(nll),
        "prompt_ids": prompt,
        "continuation_ids": _greedy(chat, prompt, None, new_tokens),
    }


def variant_perplexity(
    chat,
    variant: str,
    hp: dict | None,
    ids: list[int],
    layers=None,
    *,
    new_tokens: int = NEW_TOKENS,
    reference: dict | None = None,
) -> dict:
    """Variant ``variant`` (parameters ``hp``, else its ``pretrained_budget``) in place of
    attention in ``layers`` (None: all) of the chat model, on the text ``ids``.

    Returns perplexity under the variant and under the model's own attention, the
    next-token agreement between them, the largest logit difference, and the greedy
    continuation of the text's first tokens beside the model's own. A variant that
    cannot be causal is not run: ``runs`` is False and ``reason`` says why.
    ``reference``: :func:`full_reference` of the same ``ids``, to compute it once.
    """
    v = get(variant)
    reason = causal_reason(variant)
    base = {"variant": variant, "title": v.title}
    if reason is not None:
        return base | {"runs": False, "reason": reason}
    ref = reference if reference is not None else full_reference(chat, ids, new_tokens=new_tokens)
    _check_llm(chat, ids)
    hp = v.pretrained_budget(len(ids)) if hp is None else dict(hp)
    params = v.resolve(hp, len(ids))
    chosen, attend = _llm_attend(chat.n_layers, attend_fn(variant, hp), layers)
    logits = _llm_logits(chat, ids, attend)
    nll = _nll(logits, ids)
    agree = (logits[:-1].argmax(-1) == ref["logits"][:-1].argmax(-1)).float().mean()
    continuation = _greedy(chat, ref["prompt_ids"], attend, len(ref["continuation_ids"]))
    decode = chat.tokenizer.decode
    return base | {
        "runs": True,
        "params": params,
        "layers": chosen,
        "n_tokens": len(ids),
        "nll": nll,
        "ppl": math.exp(nll),
        "nll_full": ref["nll"],
        "ppl_full": ref["ppl"],
        "agreement": float(agree),
        "max_logit_diff": float((logits - ref["logits"]).abs().max()),
        "prompt": decode(ref["prompt_ids"]),
        "continuation": decode(continuation),
        "continuation_full": decode(ref["continuation_ids"]),
        "approximates_full": v.approximates_full,
        "notes": [] if v.approximates_full else [Message("swap.not_an_approximation")],
    }


def variants_in_llm(
    chat,
    ids: list[int],
    variants=None,
    layers=None,
    budgets: dict | None = None,
    *,
    new_tokens: int = NEW_TOKENS,
    should_stop=None,
    progress=None,
) -> dict[str, dict]:
    """:func:`variant_perplexity` for every variant (default: the whole registry), the
    model's own attention computed once. ``progress(i, n)`` after each; ``should_stop()``
    before each (True: stop and return what is done)."""
    names = list(variants or REGISTRY)
    ref = full_reference(chat, ids, new_tokens=new_tokens)
    budgets = budgets or {}
    results = {}
    for i, name in enumerate(names):
        if should_stop is not None and should_stop():
            break
        results[name] = variant_perplexity(
            chat, name, budgets.get(name), ids, layers, reference=ref
        )
        if progress is not None:
            progress(i + 1, len(names))
    return results
