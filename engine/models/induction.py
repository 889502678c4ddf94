"""An attention-only Transformer, the small-model setting of Olsson et al. 2022 ("In-context
learning and induction heads", arXiv 2209.11895) and Elhage et al. 2021 ("A Mathematical
Framework for Transformer Circuits"), scaled to a CPU.

No MLPs, no LayerNorm, no biases: the residual stream is

    x_0 = W_E t + W_pos          (token and learned position embeddings)
    x_{l+1} = x_l + Σ_h W_O^h W_V^h x_l A^h,   A^h = softmax_causal(x_lᵀ W_Q^hᵀ W_K^h x_l / √d_head)
    logits = W_U x_L

so each head is fully described by two d_model × d_model matrices, W_QK^h = W_Q^hᵀ W_K^h
(where it looks) and W_OV^h = W_O^h W_V^h (what it moves), and the composition scores of
:mod:`engine.analysis.induction` read straight off the weights. With two layers a
layer-0 previous-token head feeding a layer-1 head's keys (K-composition) forms an
induction head; with one layer there is nothing to compose with.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn

from engine import checkpoints
from engine.attention.scoring import scaled_dot_product_attention
from engine.errors import InputError
from engine.text import tokenize
from engine.trace import AttentionMap, Trace

BOS = 0  # the first token of every sequence; never drawn as content
WHOLE = re.compile(r"[0-9]+")  # an id as typed (ASCII: "²".isdigit() is True)


@dataclass(frozen=True)
class InductionConfig:
    vocab_size: int = 64  # BOS + 63 content tokens
    n_layers: int = 2
    n_heads: int = 4
    d_model: int = 64
    max_len: int = 48

    def __post_init__(self) -> None:
        assert self.n_layers >= 1, f"n_layers must be ≥ 1; got {self.n_layers}"
        assert self.d_model % self.n_heads == 0, "n_heads must divide d_model"

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    def to_dict(self) -> dict:
        return asdict(self)


class AttentionLayer(nn.Module):
    """One layer of heads, its weights stored per head in the paper's shapes:
    W_Q, W_K, W_V ``[H, d_head, d_model]`` and W_O ``[H, d_model, d_head]``."""

    def __init__(self, cfg: InductionConfig):
        super().__init__()
        H, dh, d = cfg.n_heads, cfg.d_head, cfg.d_model
        self.W_Q = nn.Parameter(torch.randn(H, dh, d) / math.sqrt(d))
        self.W_K = nn.Parameter(torch.randn(H, dh, d) / math.sqrt(d))
        self.W_V = nn.Parameter(torch.randn(H, dh, d) / math.sqrt(d))
        self.W_O = nn.Parameter(torch.randn(H, d, dh) / math.sqrt(d))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x ``[B, T, d]`` → (the heads' summed output ``[B, T, d]``, A ``[B, H, T, T]``)."""
        q = torch.einsum("hed,btd->bhte", self.W_Q, x)  # (B, H, T, d_head)
        k = torch.einsum("hed,btd->bhte", self.W_K, x)
        v = torch.einsum("hed,btd->bhte", self.W_V, x)
        # The reference path, not engine.attention.attend.exact: on a CPU that one's fused
        # kernel returns wrong weights for non-contiguous q, k, v such as an einsum gives.
        z, A = scaled_dot_product_attention(q, k, v, causal=True)  # z (B, H, T, d_head)
        return torch.einsum("hde,bhte->btd", self.W_O, z), A

    def W_QK(self) -> torch.Tensor:
        """``[H, d, d]``: score(i, j) = x_iᵀ W_QK x_j (before the 1/√d_head)."""
        return self.W_Q.transpose(1, 2) @ self.W_K

    def W_OV(self) -> torch.Tensor:
        """``[H, d, d]``: what a head writes is W_OV x_j, weighted by A_ij."""
        return self.W_O @ self.W_V


class AttentionOnlyTransformer(nn.Module):
    def __init__(self, cfg: InductionConfig):
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        self.W_E = nn.Parameter(torch.randn(cfg.vocab_size, d) / math.sqrt(d))
        self.W_pos = nn.Parameter(torch.randn(cfg.max_len, d) / math.sqrt(d))
        self.layers = nn.ModuleList(AttentionLayer(cfg) for _ in range(cfg.n_layers))
        self.W_U = nn.Parameter(torch.randn(d, cfg.vocab_size) / math.sqrt(d))

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """tokens ``[B, T]`` → (logits ``[B, T, V]`` for the next token, A ``[B, L, H, T, T]``)."""
        B, T = tokens.shape
        assert T <= self.cfg.max_len, f"sequence of {T} tokens > max_len {self.cfg.max_len}"
        x = self.W_E[tokens] + self.W_pos[:T]  # (B, T, d)
        maps = []
        for layer in self.layers:
            out, A = layer(x)
            x = x + out
            maps.append(A)
        return x @ self.W_U, torch.stack(maps, dim=1)


def build(cfg: InductionConfig, seed: int) -> AttentionOnlyTransformer:
    """The same initial weights for the same seed, whatever ran before."""
    gen_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    model = AttentionOnlyTransformer(cfg)
    torch.random.set_rng_state(gen_state)
    return model


def checkpoint_name(n_layers: int) -> str:
    return f"induction-{n_layers}l"


MAX_CHARS = 400  # 47 token ids of two digits, with spaces: far above any real input


def load(name: str, directory: Path | None = None) -> AttentionOnlyTransformer:
    """The checkpoint ``name`` (``induction-2l`` …), in eval mode."""
    state, meta = checkpoints.load(name, directory)
    model = AttentionOnlyTransformer(InductionConfig(**meta["config"]))
    model.load_state_dict(state)
    return model.eval()


def parse(text: str, cfg: InductionConfig) -> tuple[list[int], list[str]]:
    """The token ids after BOS, and the symbols typed in their place (empty for ids).

    Whole numbers are ids (1 … vocab − 1): ``"12 7 33 12 7"``. Anything else is read as
    symbols, split as the page counts them (:func:`engine.text.tokenize`: words, marks,
    one CJK character each): each distinct one takes the next id in the order first typed
    (``"a b c a b c"``: a → 1, b → 2, …). The toy trained on blocks of ids drawn uniformly,
    so which id a symbol gets does not change what an induction head does: only which
    symbols repeat. Too many tokens, or an id out of range, is an InputError.
    """
    top, most = cfg.vocab_size - 1, cfg.max_len - 1
    words = text.replace(",", " ").split()
    numbers = all(WHOLE.fullmatch(w) for w in words)
    if not numbers:
        words = tokenize(text)
    if len(words) > most:
        raise InputError("text.too_many_tokens", n=len(words), limit=most)
    if numbers:
        if not all(len(w) <= 12 and 1 <= int(w) <= top for w in words):  # no 5,000-digit int
            raise InputError("induction.not_ids", top=top)
        return [int(w) for w in words], []
    symbols = list(dict.fromkeys(words))
    if len(symbols) > top:  # only a config with max_len > vocab_size reaches this
        raise InputError("induction.not_ids", top=top)
    ids = {s: i for i, s in enumerate(symbols, 1)}
    return [ids[w] for w in words], symbols


def naming(symbols: list[str]):
    """An id as the page shows it: the symbol typed for it, ``#id`` for an id the user's
    symbols do not cover (a prediction outside them), the id itself where ids were typed."""
    if not symbols:
        return str
    return lambda i: symbols[i - 1] if 1 <= i <= len(symbols) else f"#{i}"


@torch.no_grad()
def trace(model: AttentionOnlyTransformer, name: str, text: str) -> Trace:
    """BOS and the typed ids (or symbols, :func:`parse`) through the toy: every head's causal
    map ``[L, H, T, T]`` labelled as typed, and the next token each position predicts
    (``next``, as ids; ``named``, as the page shows them): an induction head's work shows as
    the second copy of a block predicting what followed the first."""
    ids, symbols = parse(text, model.cfg)
    shown = naming(symbols)
    tokens = [BOS, *ids]
    logits, A = model(torch.tensor([tokens]))
    labels = ["BOS", *(shown(t) for t in ids)]
    amap = AttentionMap(
        A[0].numpy(),
        labels,
        labels,
        "self",
        layer_labels=[f"L{i}" for i in range(model.cfg.n_layers)],
        head_labels=[f"H{h}" for h in range(model.cfg.n_heads)],
    )
    predicted = logits[0].argmax(-1).tolist()
    return Trace(
        model=name,
        task="induction",
        inputs={"text": text, "tokens": tokens},
        outputs={"next": predicted, "named": [shown(t) for t in predicted], "symbols": symbols}
        | {"text": " ".join(shown(t) for t in predicted)},
        maps={"self": amap},
    )
