"""A real chat model, offline: SmolLM2-135M-Instruct writing one token at a time.

The model (Llama: 30 layers, 9 query heads sharing 3 key/value heads, head size 64,
RoPE, ChatML) is converted once by ``scripts/setup.sh`` into a float32 safetensors
directory (:mod:`engine.models.convert_gguf`); this module only reads that directory.

:func:`generate` runs the decoder the way a KV cache does, with its own loop over the
model's layers (the StreamingLLM code does the same), so that at every step it can say
exactly what the cache holds and where the new query looked:

1. prefill: the prompt but its last token, in one causal pass; their keys (before
   RoPE) and values go into the cache;
2. step t = 0, 1, …: the last known token is the query. The cache policy chooses the
   positions kept; the step appends the token's K/V; the query attends over the kept
   positions; the next token is chosen from the logits (greedy, or sampled with
   temperature / top-k / top-p from a ``torch.Generator`` seeded with ``seed``).

Keys are cached before RoPE and rotated at every step at their *text* position, or at
their slot inside the cache under StreamingLLM (``CachePolicy.cache_positions``). With
the full cache, step t's attention row is row P − 1 + t of one teacher-forced causal
pass over prompt + generated tokens (tests/unit/test_chat.py checks it).
"""

from __future__ import annotations

import time
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np

from engine import gate
from engine.errors import InputError
from engine.messages import Message
from engine.models import convert_gguf, llama, precision, token_text
from engine.models.cache_policy import FULL, CachePolicy, keep
from engine.models.pretrained import use_studio_attention
from engine.params import Param
from engine.trace import AttentionMap, Trace

CHAT_DIR: Path = convert_gguf.OUT_DIR
NAME = convert_gguf.NAME
MAX_CHARS = 2_000  # refuse before tokenising a pasted book
MAX_PROMPT_TOKENS = 256  # with the template's system turn (≈ 35 tokens); maps are L·H·P²
MAX_NEW_TOKENS = 64
MAX_TOP = 20
ALLOWED_CONTROLS = "\n\t\r"  # line breaks and tabs are text; other controls are not

# The sampling options with their limits; the chat card shows the same ones.
TEMPLATE = Param("template", "Chat template", "chat", choices=("chat", "raw"))
NEW_TOKENS = Param("max_new_tokens", "New tokens", 20, 1, MAX_NEW_TOKENS)
TEMPERATURE = Param(
    "temperature", "Temperature", 0.0, 0.0, 2.0, help="0 = greedy: always the likeliest token"
)
# Sampling divides the logits by T: below float32's smallest normal they overflow to inf
# and the probabilities become NaN, and anything under 0.05 is greedy in all but name.
# So a temperature is 0 (greedy) or at least MIN_TEMPERATURE, the page's lowest.
MIN_TEMPERATURE = 0.05
TOP_K = Param("top_k", "Top-k", 0, 0, 200, help="sample among the k likeliest tokens; 0 = all")
TOP_P = Param(
    "top_p", "Top-p", 1.0, 0.01, 1.0, help="sample among the likeliest tokens holding mass p"
)
SEED = Param("seed", "Seed", 0, 0, 2**31 - 1, help="the same seed gives the same tokens")
TOP = Param("top", "Next-token candidates shown", 5, 1, MAX_TOP)
OPTIONS = (TEMPLATE, NEW_TOKENS, TEMPERATURE, TOP_K, TOP_P, SEED)


def available(path: Path = CHAT_DIR) -> bool:
    """True when the converted directory is there and complete."""
    return convert_gguf.is_complete(Path(path))


def load(path: str | Path = CHAT_DIR) -> tuple[Any, Any]:
    """The converted model in eval mode, eager attention, read from local files only, and
    its tokenizer. ``engine.models.cards.pretrained.ChatCard.load`` holds the two: the
    functions here take that loaded card as ``chat`` (``chat.model``, ``chat.tokenizer``,
    its shape ``n_layers`` … ``head_dim``, ``special_ids``)."""
    import torch  # heavy: kept out of start-up
    from transformers import AutoModelForCausalLM, AutoTokenizer  # heavy: kept out of start-up
    from transformers.utils import logging as hf_logging  # heavy: kept out of start-up

    p = Path(path)
    if not available(p):
        raise InputError("chat.missing", path=str(p), command="bash scripts/setup.sh")
    hf_logging.disable_progress_bar()
    model = AutoModelForCausalLM.from_pretrained(
        p,
        local_files_only=True,
        use_safetensors=True,
        attn_implementation="eager",
        dtype=torch.float32,
    )
    model.eval()
    # Matrix products at half precision, the rest float32 (engine.models.precision: why).
    precision.to_half(model)
    # Eager attention unless a variant is asked for (engine.models.in_pretrained).
    use_studio_attention(model)
    return model, AutoTokenizer.from_pretrained(p, local_files_only=True)


def special_ids(tokenizer) -> frozenset[int]:
    """Every id the tokenizer calls special (added ChatML markers and its own)."""
    special = {i for i, t in tokenizer.added_tokens_decoder.items() if t.special}
    return frozenset(special | set(tokenizer.all_special_ids))


def sinks(tokenizer) -> tuple[str, ...]:
    """The boundary tokens (``<|im_start|>``, ``<|im_end|>``, …) of the chat template."""
    t = tokenizer
    return tuple(dict.fromkeys(n for n in (t.bos_token, t.eos_token, t.unk_token) if n))


# -- text in -------------------------------------------------------------------------------
def check_prompt(prompt: str) -> str:
    """The prompt, or an InputError: empty, too long, or holding control characters."""
    if not isinstance(prompt, str) or not prompt.strip():
        raise InputError("chat.empty")
    if len(prompt) > MAX_CHARS:
        raise InputError("chat.too_many_chars", n=len(prompt), limit=MAX_CHARS)
    controls = [c for c in prompt if unicodedata.category(c) == "Cc" and c not in ALLOWED_CONTROLS]
    if controls:
        raise InputError("chat.control_chars", n=len(controls), first=f"U+{ord(controls[0]):04X}")
    return prompt


def encode(chat, prompt: str, *, template: bool = True) -> list[int]:
    """Token ids of ``prompt``: one ChatML user turn and the assistant's opening, or raw text.

    Special tokens typed in the prompt stay special (that is how the tokenizer reads
    them); a prompt made of nothing else is refused.
    """
    check_prompt(prompt)
    tok = chat.tokenizer
    own = tok(prompt, add_special_tokens=False)["input_ids"]
    if all(i in chat.special_ids for i in own):
        raise InputError("chat.only_special")
    if template:
        ids = tok.apply_chat_template(
            [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=True
        )
        ids = list(ids["input_ids"] if hasattr(ids, "keys") else ids)
    else:
        ids = list(own)
    if len(ids) > MAX_PROMPT_TOKENS:
        raise InputError("chat.too_many_tokens", n=len(ids), limit=MAX_PROMPT_TOKENS)
    return ids


def check_token_ids(chat, ids) -> list[int]:
    """``ids`` as a list of the model's token ids, or an InputError naming the first that is
    not one: a whole number from 0 to the vocabulary's last (an id past it raised
    IndexError inside the embedding; "x" or 1.5 failed or was truncated)."""
    if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
        raise InputError("chat.bad_token", high=chat.vocab_size - 1, value=ids)
    last = chat.vocab_size - 1
    return [gate.within(i, 0, last, "chat.bad_token", high=last, value=i) for i in ids]


_VISIBLE = str.maketrans({"\n": "↵", "\t": "⇥", "\r": "␍"})


def token_labels(chat, ids: list[int]) -> list[str]:
    """Each token as the text it stands for; special tokens as themselves (``<|im_start|>``).

    Tokens that each hold part of a multi-byte character ("注" is two) are labelled by the
    character with their place, "注 1/2" and "注 2/2" (:mod:`engine.models.token_text`).
    Line breaks and tabs are drawn (↵, ⇥).
    """
    labels = token_text.labels(chat.tokenizer, ids, chat.special_ids)
    return [label.translate(_VISIBLE) for label in labels]


def _written(chat, ids: list[int]) -> str:
    """The text of generated ``ids``, without the U+FFFD a character cut off mid-way would
    leave at the end (its tokens' labels show its bytes instead)."""
    text = chat.tokenizer.decode(ids, skip_special_tokens=True)
    if token_text.ends_mid_character(chat.tokenizer.convert_ids_to_tokens(ids)):
        return text.rstrip("\ufffd")
    return text


def token_label(chat, i: int) -> str:
    """One token read alone (a candidate, an alternative): half a character shows its bytes."""
    return token_labels(chat, [i])[0]


# -- the decoding loop ---------------------------------------------------------------------
class Decoder:
    """The model's layers run over a KV cache that a :class:`CachePolicy` trims.

    ``keys[l]``, ``values[l]``: ``[H_kv, N, d]`` for the N cached positions
    ``positions`` (text positions, ascending); keys are stored before RoPE.
    ``scores``: attention each text position has received (mean over layers and heads,
    summed over queries), −inf once evicted; H2O reads it.
    """

    def __init__(self, chat, policy: CachePolicy = FULL):
        import torch  # heavy: kept out of start-up

        self.chat, self.policy = chat, policy
        empty = torch.zeros(chat.n_kv_heads, 0, chat.head_dim)
        self.keys = [empty] * chat.n_layers
        self.values = [empty] * chat.n_layers
        self.positions: list[int] = []
        self.scores: list[float] = []
        self.n = 0  # tokens read so far

    def prefill(self, ids: list[int]):
        """``ids`` in one causal pass with every position kept.

        Returns logits ``[T, V]`` and weights ``[L, H, T, T]`` (torch, float32).
        """
        import torch  # heavy: kept out of start-up

        if self.n:
            raise ValueError("prefill runs on an empty cache")
        t = len(ids)
        new = list(range(t))
        mask = torch.full((t, t), float("-inf")).triu(1)
        logits, weights = self._forward(ids, new, new, mask)
        self.positions, self.n = new, t
        self.scores = weights.mean(dim=(0, 1)).sum(0).tolist()
        return logits, weights

    def step(self, token: int):
        """One token: the policy trims the cache, the token's K/V is appended, it attends.

        Returns logits ``[V]``, weights ``[L, H, N]`` over the kept positions, and
        ``kept`` (the text positions in the cache after this step appended its K/V).
        """
        import torch  # heavy: kept out of start-up

        n = self.n + 1
        self.scores.append(0.0)
        kept = keep(self.policy, n, self.scores)
        held = kept[:-1]
        if held != self.positions:
            slot = {p: i for i, p in enumerate(self.positions)}
            if any(p not in slot for p in held) or kept[-1] != n - 1:
                raise RuntimeError(f"{self.policy.name} took back an evicted position")
            index = torch.tensor([slot[p] for p in held], dtype=torch.long)
            self.keys = [k.index_select(1, index) for k in self.keys]
            self.values = [v.index_select(1, index) for v in self.values]
            for p in set(self.positions) - set(held):
                self.scores[p] = float("-inf")
        rope = list(range(len(kept))) if self.policy.cache_positions else kept
        logits, weights = self._forward([token], rope[-1:], rope, None)
        self.positions, self.n = kept, n
        received = weights[:, :, 0].mean(dim=(0, 1)).tolist()
        for p, r in zip(kept, received, strict=True):
            self.scores[p] += r
        return logits[0], weights[:, :, 0], kept

    def _forward(self, ids, q_pos, k_pos, mask):
        """New tokens ``ids`` at RoPE positions ``q_pos``, attending to the cache
        (after their K/V are appended) whose keys sit at RoPE positions ``k_pos``."""
        import torch  # heavy: kept out of start-up

        model = self.chat.model
        cos_q, sin_q = llama.rotary(model, q_pos)  # (T, d)
        cos_k, sin_k = llama.rotary(model, k_pos)  # (N, d)
        scale = self.chat.head_dim**-0.5
        weights = []

        def attend(li, q, k, v):
            # keys are cached before RoPE and rotated at k_pos at every step
            self.keys[li] = keys = torch.cat([self.keys[li], k.transpose(0, 1)], 1)  # (H_kv, N, d)
            self.values[li] = values = torch.cat([self.values[li], v.transpose(0, 1)], 1)
            q = llama.rope(q.transpose(0, 1), cos_q, sin_q)  # (H, T, d)
            keys = llama.rope(keys, cos_k, sin_k)
            o, alpha = llama.attention(q, keys, values, scale=scale, mask=mask)
            weights.append(alpha)  # (H, T, N)
            return o.transpose(0, 1)  # (T, H, d)

        with torch.no_grad():
            logits = llama.forward(model, ids, attend)  # (T, V)
        return logits, torch.stack(weights)  # (L, H, T, N)


# -- choosing the next token ---------------------------------------------------------------
def _choose(logits, temperature: float, top_k: int, top_p: float, generator) -> int:
    """Greedy when temperature is 0; else sample softmax(logits / T) cut to the top k
    tokens, then to the smallest set holding mass ``top_p`` (the order transformers uses)."""
    import torch  # heavy: kept out of start-up

    if temperature == 0.0:
        return int(torch.argmax(logits))
    z = logits / temperature
    if top_k:
        cut = torch.topk(z, min(top_k, z.numel())).values[-1]
        z = z.masked_fill(z < cut, float("-inf"))
    if top_p < 1.0:
        probs, order = torch.sort(torch.softmax(z, -1), descending=True)
        # drop a token once the mass before it already reaches p (the first always stays)
        drop = (torch.cumsum(probs, -1) - probs) >= top_p
        z = z.masked_fill(torch.zeros_like(drop).scatter(0, order, drop), float("-inf"))
    return int(torch.multinomial(torch.softmax(z, -1), 1, generator=generator))


def stop_ids(chat) -> set[int]:
    """The tokens that end a reply: ``<|im_end|>`` (the tokenizer's EOS) and
    ``<|endoftext|>``."""
    tok = chat.tokenizer
    return {tok.eos_token_id, tok.convert_tokens_to_ids("<|endoftext|>")}


class Writing:
    """One generation's bookkeeping, whichever loop feeds it: the prompt's ids, the maps
    being filled, the sampler with its own ``torch.Generator``, the stop tokens.

    :func:`generate` feeds it from a :class:`Decoder` alone; ``engine.models.batching``
    feeds many from one forward per step. Both hand it the same rows, so both build the
    same Trace.
    """

    def __init__(
        self,
        chat,
        prompt: str,
        *,
        template: bool = True,
        max_new_tokens: int = 20,
        temperature: float = 0.0,
        top_k: int = 0,
        top_p: float = 1.0,
        seed: int = 0,
        policy: CachePolicy = FULL,
        top: int = 5,
    ):
        import torch  # heavy: kept out of start-up

        self.chat, self.prompt, self.template, self.policy = chat, prompt, bool(template), policy
        self.max_new_tokens = NEW_TOKENS.check(max_new_tokens)
        self.temperature = TEMPERATURE.check(temperature)
        if 0 < self.temperature < MIN_TEMPERATURE:
            raise InputError("chat.temperature_floor", floor=MIN_TEMPERATURE, value=temperature)
        self.top_k, self.top_p = TOP_K.check(top_k), TOP_P.check(top_p)
        self.seed, self.top = SEED.check(seed), TOP.check(top)
        self.ids = encode(chat, prompt, template=self.template)
        self.p = p = len(self.ids)
        policy.check(p)
        self.stops = stop_ids(chat)
        self.generator = torch.Generator().manual_seed(self.seed)
        L, H = chat.n_layers, chat.n_heads
        self.gen = torch.zeros(L, H, self.max_new_tokens, p + self.max_new_tokens)
        self.prompt_map = torch.zeros(L, H, p, p)
        self.out_ids = list(self.ids)
        self.top_rows, self.log_probs, self.kept_rows = [], [], []
        self.done = False

    @property
    def last(self) -> int:
        """The last known token: the query of the next step."""
        return self.out_ids[-1]

    @property
    def steps(self) -> int:
        return len(self.kept_rows)

    def prefilled(self, weights) -> None:
        """The prompt but its last token read: their attention ``[L, H, P − 1, P − 1]``."""
        self.prompt_map[:, :, : self.p - 1, : self.p - 1] = weights

    def take(self, logits, w, kept: list[int]) -> bool:
        """Step s's logits ``[V]`` and attention row ``[L, H, |kept|]``: record them,
        choose the next token; True once the generation is finished."""
        import torch  # heavy: kept out of start-up

        s = self.steps
        self.gen[:, :, s, kept] = w
        if s == 0:
            self.prompt_map[:, :, self.p - 1, kept] = w
        log_p = torch.log_softmax(logits.float(), -1)
        best = torch.topk(log_p, self.top)
        self.top_rows.append(
            [[label, float(np.exp(lp))] for label, lp in _labelled(self.chat, best, log_p)]
        )
        nxt = _choose(logits, self.temperature, self.top_k, self.top_p, self.generator)
        self.log_probs.append(float(log_p[nxt]))
        self.kept_rows.append(kept)
        self.out_ids.append(nxt)
        self.done = nxt in self.stops or self.steps == self.max_new_tokens
        return self.done

    def trace(self, *, stopped: bool, timings: dict) -> Trace:
        """The Trace of what was written (``stopped``: cancelled before it finished)."""
        chat, p, steps, policy = self.chat, self.p, self.steps, self.policy
        labels = token_labels(chat, self.out_ids)
        k = p + steps  # a generation cancelled before its first step has no rows
        maps = {
            "prompt": AttentionMap(self.prompt_map.numpy(), labels[:p], labels[:p], "self"),
            "generation": AttentionMap(
                self.gen[:, :, :steps, :k].numpy(),
                labels[p - 1 : p - 1 + steps],
                labels[:k],
                "self",
                note=Message("note.generation_step", policy=policy.name),
            ),
        }
        out_ids = self.out_ids
        outputs = {
            "tokens": labels,
            "token_ids": out_ids,
            "special": [i in chat.special_ids for i in out_ids],
            "n_prompt": p,
            "generated": _written(chat, out_ids[p:]),
            "top": self.top_rows,
            "log_probs": self.log_probs,
            "kv_tokens": [len(r) for r in self.kept_rows],
            "kv_bytes": [chat.kv_bytes(len(r)) for r in self.kept_rows],
            "kept": self.kept_rows,
            "sampling": {
                "method": "greedy" if self.temperature == 0.0 else "sample",
                "temperature": self.temperature,
                "top_k": self.top_k,
                "top_p": self.top_p,
                "seed": self.seed,
            },
            "policy": policy.describe(),
            "stopped": stopped,
        }
        inputs = {"prompt": self.prompt, "template": self.template}
        return Trace(
            model=chat.display,
            task="chat",
            inputs=inputs | {"max_new_tokens": self.max_new_tokens},
            outputs=outputs,
            maps=maps,
            timings=timings,
        )


def generate(
    chat,
    prompt: str,
    *,
    template: bool = True,
    max_new_tokens: int = 20,
    temperature: float = 0.0,
    top_k: int = 0,
    top_p: float = 1.0,
    seed: int = 0,
    policy: CachePolicy = FULL,
    top: int = 5,
    should_stop=None,
) -> Trace:
    """Write up to ``max_new_tokens`` tokens after ``prompt``, keeping every step's attention.

    ``maps["generation"]``: ``[L, H, S, K]``, step s's query (the last known token)
    over all K = prompt + generated positions, 0 where the cache did not hold the key.
    ``maps["prompt"]``: ``[L, H, P, P]``, each prompt token's attention when it was
    read (the last row is step 0's). ``top`` and ``log_probs`` are the model's own
    distribution (softmax of the logits); the sampler then applies temperature,
    top-k and top-p. Generation ends at ``<|im_end|>``/``<|endoftext|>``, after
    ``max_new_tokens``, or when ``should_stop()`` returns True (``outputs["stopped"]``).
    """
    writing = Writing(
        chat,
        prompt,
        template=template,
        max_new_tokens=max_new_tokens,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        seed=seed,
        policy=policy,
        top=top,
    )
    ids = writing.ids
    t0 = time.perf_counter()
    dec = Decoder(chat, policy)
    if len(ids) > 1:
        writing.prefilled(dec.prefill(ids[:-1])[1])
    t1 = time.perf_counter()
    stopped = False
    while not writing.done:
        if should_stop is not None and should_stop():
            stopped = True
            break
        writing.take(*dec.step(writing.last))
    t2 = time.perf_counter()
    return writing.trace(
        stopped=stopped, timings={"prefill_ms": (t1 - t0) * 1e3, "decode_ms": (t2 - t1) * 1e3}
    )


def _labelled(chat, best, log_p):
    ids = best.indices.tolist()  # alternatives, not a sequence: each labelled alone
    labels = [token_label(chat, i) for i in ids]
    return zip(labels, best.values.tolist(), strict=True)
