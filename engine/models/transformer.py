"""The Transformer (Vaswani et al. 2017, "Attention Is All You Need"), small enough for a CPU.

Encoder: N × [x = LayerNorm(x + MultiHead(x, x, x)); x = LayerNorm(x + FFN(x))]
Decoder: N × [y = LayerNorm(y + MaskedMultiHead(y, y, y));
              y = LayerNorm(y + MultiHead(y, memory, memory));
              y = LayerNorm(y + FFN(y))]
FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 (§3.3); embeddings scaled by √d_model and summed
with a positional encoding (§3.4–3.5): sinusoidal, learned (one vector per position, the
paper's §3.5 alternative) or none (the ablation: attention alone is order-blind).

Every attention sublayer returns its weights from ``forward`` (no hooks), and each layer
also returns the inputs its attention saw, so a view can recompute the per-head queries
and keys (neuron view, AttentionViz) with ``MultiHeadAttention.project``.

The encoder's self-attention core is a parameter (``attend``, engine.attention.attend):
``translate(load("transformer-dates-sinusoidal"), "12 March 2021", attend="linformer",
attend_hp={"k": 8})`` is the trained model with Linformer in every encoder layer, its
trained projections, feed-forward and norms unchanged.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch import nn

from engine import checkpoints, gate
from engine.attention import Attend, MultiHeadAttention, padding_mask
from engine.data.vocab import Vocab
from engine.errors import InputError
from engine.messages import Message
from engine.positional import sinusoidal
from engine.trace import AttentionMap, Trace
from engine.variants.registry import attend_fn
from engine.variants.registry import get as variant_named

PE_KINDS = ("sinusoidal", "learned", "none")
PAD, BOS, EOS = 0, 1, 2


@dataclass(frozen=True)
class TransformerConfig:
    src_vocab: int
    tgt_vocab: int
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 512
    dropout: float = 0.1
    max_len: int = 64
    pe: str = "sinusoidal"

    def __post_init__(self) -> None:
        assert self.pe in PE_KINDS, f"pe must be one of {PE_KINDS}; got {self.pe!r}"
        assert self.d_model % self.n_heads == 0, "n_heads must divide d_model"

    def to_dict(self) -> dict:
        return asdict(self)


class Embedding(nn.Module):
    """x = Embed(token)·√d_model + PE(pos), then dropout (§3.4, §3.5, §5.4)."""

    def __init__(self, vocab: int, cfg: TransformerConfig):
        super().__init__()
        self.d_model, self.kind = cfg.d_model, cfg.pe
        self.tokens = nn.Embedding(vocab, cfg.d_model, padding_idx=PAD)
        # std d^-1/2 so that after the √d_model scaling each component is ~N(0, 1),
        # the same size as the sinusoids it is added to.
        nn.init.normal_(self.tokens.weight, std=cfg.d_model**-0.5)
        if cfg.pe == "sinusoidal":
            table = torch.tensor(sinusoidal(cfg.max_len, cfg.d_model), dtype=torch.float32)
            self.register_buffer("pe", table, persistent=False)
        elif cfg.pe == "learned":
            # RMS 1/√2 per component, like sin/cos, so neither term drowns the other at start.
            self.pe = nn.Parameter(torch.randn(cfg.max_len, cfg.d_model) * 2**-0.5)
        else:
            self.pe = None
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, ids: torch.Tensor, start: int = 0) -> torch.Tensor:
        """ids (B, T) at positions start … start + T − 1 → (B, T, d)."""
        x = self.tokens(ids) * math.sqrt(self.d_model)  # (B, T, d)
        if self.pe is not None:
            x = x + self.pe[start : start + ids.shape[1]]
        return self.drop(x)


class FeedForward(nn.Sequential):
    def __init__(self, cfg: TransformerConfig):
        super().__init__(
            nn.Linear(cfg.d_model, cfg.d_ff),
            nn.ReLU(),
            nn.Dropout(cfg.dropout),
            nn.Linear(cfg.d_ff, cfg.d_model),
        )


class EncoderLayer(nn.Module):
    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads)
        self.ff = FeedForward(cfg)
        self.norm1, self.norm2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x, src_mask, attend: Attend | None = None):
        """x (B, S, d), src_mask (B, 1, S) → x, weights (B, h, S, S), attention input."""
        x_in = x
        a, w = self.self_attn(x, x, x, src_mask, attend=attend)
        x = self.norm1(x + self.drop(a))
        x = self.norm2(x + self.drop(self.ff(x)))
        return x, w, x_in


class DecoderLayer(nn.Module):
    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads)
        self.cross_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads)
        self.ff = FeedForward(cfg)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(cfg.d_model) for _ in range(3))
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, y, memory, src_mask, tgt_mask, want_weights: bool = True):
        """y (B, T, d), memory (B, S, d) → y, self weights (B, h, T, T), cross (B, h, T, S)."""
        y_self_in = y
        a, w_self = self.self_attn(y, y, y, tgt_mask, causal=True, want_weights=want_weights)
        y = self.norm1(y + self.drop(a))
        y_cross_in = y
        c, w_cross = self.cross_attn(y, memory, memory, src_mask, want_weights=want_weights)
        y = self.norm2(y + self.drop(c))
        y = self.norm3(y + self.drop(self.ff(y)))
        return y, w_self, w_cross, y_self_in, y_cross_in

    def step(self, y, memory, src_mask, cache: dict):
        """One new position y (B, 1, d): the same output as :meth:`forward`'s last row.

        ``cache`` keeps this layer's keys and values (the KV cache): the earlier positions'
        self-attention keys/values and the memory's cross-attention ones, projected once.
        The new query may see every cached key, which is exactly the causal mask's row.
        """
        sa, ca = self.self_attn, self.cross_attn
        k, v = sa.split(sa.W_K(y)), sa.split(sa.W_V(y))
        if "k" in cache:
            k, v = torch.cat([cache["k"], k], 2), torch.cat([cache["v"], v], 2)
        cache["k"], cache["v"] = k, v
        y = self.norm1(y + self.drop(sa.attend_projected(y, k, v)))
        if "memory_k" not in cache:
            cache["memory_k"], cache["memory_v"] = (
                ca.split(ca.W_K(memory)),
                ca.split(ca.W_V(memory)),
            )
        c = ca.attend_projected(y, cache["memory_k"], cache["memory_v"], src_mask)
        y = self.norm2(y + self.drop(c))
        return self.norm3(y + self.drop(self.ff(y)))


@dataclass
class Intermediates:
    """What one forward pass saw: weights ``(B, L, h, Q, K)`` and each sublayer's query input."""

    encoder_self: torch.Tensor
    decoder_self: torch.Tensor
    cross: torch.Tensor
    inputs: dict[str, list[torch.Tensor]] = field(default_factory=dict)


class Transformer(nn.Module):
    """The model, and once loaded (:meth:`from_pretrained`) its vocabularies and checkpoint
    meta too, as fairseq's encoder holds its dictionary: no wrapper type sits between the
    module and its card (docs/ARCHITECTURE.md)."""

    def __init__(
        self,
        cfg: TransformerConfig,
        src_vocab: Vocab | None = None,
        tgt_vocab: Vocab | None = None,
        meta: dict | None = None,
        name: str = "",
    ):
        super().__init__()
        self.cfg = cfg
        self.src_vocab, self.tgt_vocab, self.name = src_vocab, tgt_vocab, name
        self.meta = meta or {}
        self.src_embed = Embedding(cfg.src_vocab, cfg)
        self.tgt_embed = Embedding(cfg.tgt_vocab, cfg)
        self.encoder = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.n_layers))
        self.decoder = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.n_layers))
        # §3.4: the pre-softmax projection shares the target embedding matrix (logits = y Eᵀ + b).
        self.out_bias = nn.Parameter(torch.zeros(cfg.tgt_vocab))

    @classmethod
    def from_pretrained(cls, name: str, directory=None) -> Transformer:
        """A shipped checkpoint in eval mode, with its vocabularies (nanoGPT's shape)."""
        state, meta = checkpoints.load(name, directory)
        vocabs = Vocab.from_json(meta["src_vocab"]), Vocab.from_json(meta["tgt_vocab"])
        model = cls(TransformerConfig(**meta["config"]), *vocabs, meta, name)
        model.load_state_dict({k: v.float() for k, v in state.items()})
        return model.eval()

    @property
    def task(self) -> str:
        return self.meta["task"]

    @property
    def max_src(self) -> int:
        return self.cfg.max_len

    @property
    def max_new(self) -> int:
        return min(self.meta["max_tgt"], self.cfg.max_len - 1)

    def positional_table(self) -> np.ndarray:
        """The encoder's trained PE table ``[n_positions, d_model]`` (``--pe learned``)."""
        if self.cfg.pe != "learned":
            raise ValueError(f"model {self.name!r} was trained with pe={self.cfg.pe}")
        return self.src_embed.pe.detach().numpy().astype(np.float64)

    def encode(self, src: torch.Tensor, attend: Attend | None = None):
        """src (B, S) → memory (B, S, d), src_mask (B, 1, S), weights and inputs per layer.

        ``attend`` replaces the self-attention core of every encoder layer.
        """
        src_mask = padding_mask((src != PAD).sum(-1), src.shape[1])
        x = self.src_embed(src)
        weights, inputs = [], []
        for layer in self.encoder:
            x, w, x_in = layer(x, src_mask, attend)
            weights.append(w)
            inputs.append(x_in)
        return x, src_mask, weights, inputs

    def decode(self, tgt_in: torch.Tensor, memory, src_mask, want_weights: bool = True):
        """tgt_in (B, T) starting with <s> → logits (B, T, V) and per-layer weights/inputs
        (weights None with ``want_weights=False``: greedy decoding reads logits only)."""
        tgt_mask = padding_mask((tgt_in != PAD).sum(-1), tgt_in.shape[1])
        y = self.tgt_embed(tgt_in)
        w_self, w_cross, self_in, cross_in = [], [], [], []
        for layer in self.decoder:
            y, ws, wc, ys, yc = layer(y, memory, src_mask, tgt_mask, want_weights)
            w_self.append(ws)
            w_cross.append(wc)
            self_in.append(ys)
            cross_in.append(yc)
        logits = y @ self.tgt_embed.tokens.weight.T + self.out_bias  # (B, T, V)
        return logits, w_self, w_cross, self_in, cross_in

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor, attend: Attend | None = None):
        """Teacher-forced pass: logits (B, T, V) and every attention map."""
        memory, src_mask, w_enc, enc_in = self.encode(src, attend)
        logits, w_self, w_cross, self_in, cross_in = self.decode(tgt_in, memory, src_mask)
        inter = Intermediates(
            encoder_self=torch.stack(w_enc, 1),  # (B, L, h, S, S)
            decoder_self=torch.stack(w_self, 1),  # (B, L, h, T, T)
            cross=torch.stack(w_cross, 1),  # (B, L, h, T, S)
            inputs={
                "encoder_self": enc_in,
                "decoder_self": self_in,
                "cross": cross_in,
                "memory": [memory],
            },
        )
        return logits, inter

    @torch.no_grad()
    def greedy(self, src: torch.Tensor, max_new: int, attend: Attend | None = None) -> torch.Tensor:
        """Greedy decoding: (B, S) → (B, ≤ max_new + 1) ids starting with <s>, PAD after </s>."""
        memory, src_mask, _, _ = self.encode(src, attend)
        B = src.shape[0]
        out = torch.full((B, 1), BOS, dtype=torch.long)
        done = torch.zeros(B, dtype=torch.bool)
        caches: list[dict] = [{} for _ in self.decoder]
        for t in range(min(max_new, self.cfg.max_len - 1)):
            # One position per step through each layer's KV cache: the same logits as
            # decoding the whole prefix again (a finished item's PAD rows are never read).
            y = self.tgt_embed(out[:, -1:], start=t)
            for layer, cache in zip(self.decoder, caches, strict=True):
                y = layer.step(y, memory, src_mask, cache)
            logits = y[:, -1] @ self.tgt_embed.tokens.weight.T + self.out_bias  # (B, V)
            nxt = logits.argmax(-1).masked_fill(done, PAD)
            out = torch.cat([out, nxt[:, None]], 1)
            done |= nxt == EOS
            if done.all():
                break
        return out

    @torch.no_grad()
    def queries_keys(self, inter: Intermediates, kind: str) -> tuple[np.ndarray, np.ndarray]:
        """Per-head q and k for one attention kind of batch item 0: two ``[L, h, T, d_k]``."""
        layers = self.encoder if kind == "encoder_self" else self.decoder
        qs, ks = [], []
        for layer, x in zip(layers, inter.inputs[kind], strict=True):
            mha = layer.cross_attn if kind == "cross" else layer.self_attn
            kv = inter.inputs["memory"][0] if kind == "cross" else x
            q, k, _ = mha.project(x[:1], kv[:1], kv[:1])  # (1, h, T, d_k)
            qs.append(q[0])
            ks.append(k[0])
        return torch.stack(qs).numpy(), torch.stack(ks).numpy()


def build(cfg: TransformerConfig, seed: int = 0, **loaded) -> Transformer:
    """A fresh model from ``seed``; ``loaded``: its vocabularies, meta and name."""
    torch.manual_seed(seed)
    return Transformer(cfg, **loaded)


# -- checkpoints and traces: what the studio, the CLI and the tests call ---------------------

TASKS = {"dates": "engine.data.dates", "en-fr": "engine.data.enfr"}
KINDS = {"encoder_self": "self", "decoder_self": "self", "cross": "cross"}
MAX_CHARS = 2_000


def checkpoint_name(task: str, pe: str) -> str:
    return f"transformer-{task.replace('-', '')}-{pe}"


def task_module(task: str):
    import importlib

    if task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)}; got {task!r}")
    return importlib.import_module(TASKS[task])


def tokenize(task: str, text: str) -> list[str]:
    """Characters for dates; lower-cased words for en-fr, as each grammar writes its source."""
    mod = task_module(task)
    return mod.tokenize(text) if task == "dates" else mod.tokenize_en(text)


def detokenize(task: str, tokens: list[str]) -> str:
    mod = task_module(task)
    return "".join(tokens) if task == "dates" else mod.detokenize_fr(tokens)


def load(name: str, directory=None) -> Transformer:
    return Transformer.from_pretrained(name, directory)


def source_ids(tr: Transformer, text: str) -> tuple[list[str], torch.Tensor]:
    """Tokenise user text the way the task does; refuse empty or over-long input (a pasted
    book is refused before tokenising, with the card's own message)."""
    if len(text) > MAX_CHARS:
        raise InputError("limits.too_long", n=len(text), limit=MAX_CHARS)
    tokens = tokenize(tr.task, text) if text else []
    if not tokens:
        raise InputError("text.empty")
    if len(tokens) > tr.max_src:
        raise InputError("transformer.too_many_tokens", n=len(tokens), limit=tr.max_src)
    return tokens, torch.tensor([tr.src_vocab.encode(tokens)])


def layer_qkv(tr: Transformer, text: str, layer: int = 0):
    """Per-head q, k, v ``[1, h, n, d_k]`` that encoder ``layer`` projects, and the tokens.

    The layers below it run with exact attention: these are the inputs a variant swapped
    into that layer would receive.
    """
    if not gate.is_whole(layer, 0, len(tr.encoder) - 1):
        raise InputError("qkv.layer_range", last=len(tr.encoder) - 1, layer=layer)
    tokens, src = source_ids(tr, text)
    with torch.no_grad():
        src_mask = padding_mask(torch.tensor([src.shape[1]]), src.shape[1])
        x = tr.src_embed(src)
        for below in tr.encoder[:layer]:
            x = below(x, src_mask)[0]
        q, k, v = tr.encoder[layer].self_attn.project(x, x, x)
    return q, k, v, tokens


def attend_function(attend, attend_hp):
    """A callable, or a registry variant's name (with its parameters) → an attend function."""
    if attend is None or callable(attend):
        return attend
    return attend_fn(attend, attend_hp)


def max_new(tr: Transformer, n_src: int) -> int:
    """Decoding stops at the task's bound for this input length (+ 1 for </s>)."""
    return min(tr.max_new, task_module(tr.task).max_target_tokens(n_src) + 1)


def _translation(tr: Transformer, gen: torch.Tensor) -> str:
    return detokenize(tr.task, tr.tgt_vocab.decode(gen[0].tolist()))


def translate(tr: Transformer, text: str, *, attend=None, attend_hp: dict | None = None) -> str:
    """Greedy translation of ``text``; ``attend`` swaps every encoder self-attention core.

    ``attend``: None (exact), a variant name from engine.variants.registry with its
    parameters ``attend_hp``, or any function with the attend signature.
    """
    fn = attend_function(attend, attend_hp)
    tokens, src = source_ids(tr, text)
    n = max_new(tr, len(tokens))
    with torch.no_grad():
        gen = tr.greedy(src, n, fn)[:, : n + 1]
    return _translation(tr, gen)


def trace(tr: Transformer, text: str, *, attend=None, attend_hp: dict | None = None):
    """Translate ``text`` greedily and return every attention map, queries and keys.

    ``attend``: None (exact) or a variant name with its parameters ``attend_hp``; the
    encoder_self map is then the variant's map, flagged as the variant declares (exact,
    or implied where it never forms one). A name, not a function: a function states
    nothing of the maps it makes.
    """
    variant = None if attend is None else variant_named(attend)
    fn = None if variant is None else variant.attend(attend_hp)
    tokens, src = source_ids(tr, text)
    t0 = time.perf_counter()
    n = max_new(tr, len(tokens))
    with torch.no_grad():
        gen = tr.greedy(src, n, fn)[:, : n + 1]  # (1, ≤ n + 1)
        logits, inter = tr(src, gen[:, :-1], fn)
        # log p of each chosen token: the model's confidence, for the page's warning
        log_prob = torch.log_softmax(logits[0], -1).gather(-1, gen[0, 1:, None]).sum()
    ms = (time.perf_counter() - t0) * 1e3
    itos = tr.tgt_vocab.itos
    dec_in = [itos[i] for i in gen[0, :-1].tolist()]
    produced = [itos[i] for i in gen[0, 1:].tolist()]
    labels = {
        "encoder_self": (tokens, tokens),
        "decoder_self": (dec_in, dec_in),
        "cross": (produced, tokens),
    }
    maps, vectors = {}, {}
    for kind, (ql, kl) in labels.items():
        flags = {}
        if kind == "cross":
            flags["note"] = Message("note.cross_rows")
        elif kind == "encoder_self" and variant is not None:
            flags = variant.map_flags(Message("note.computed_by", title=variant.title))
        maps[kind] = AttentionMap(getattr(inter, kind)[0].numpy(), ql, kl, KINDS[kind], **flags)
        vectors[f"queries.{kind}"], vectors[f"keys.{kind}"] = tr.queries_keys(inter, kind)
    return Trace(
        model=tr.name,
        task=tr.task,
        inputs={"text": text, "tokens": tokens, **_attend_input(attend, attend_hp)},
        outputs={
            "translation": _translation(tr, gen),
            "unknown": tr.src_vocab.unknown(tokens),
            "steps": produced,
            "log_prob": float(log_prob),
            "log_prob_per_token": float(log_prob) / max(1, len(produced)),
        },
        maps=maps,
        vectors=vectors,
        timings={"forward_ms": ms},
    )


def _attend_input(attend, attend_hp) -> dict:
    """What the Trace records about a swapped core (nothing for the default)."""
    if attend is None:
        return {}
    return {"attend": attend, "attend_hp": dict(attend_hp or {})}
