"""RNNsearch (Bahdanau, Cho & Bengio 2014) and its RNNencdec baseline, returning a Trace.

Encoder: a bidirectional GRU; the annotation of source word j is h_j = [h→_j ; h←_j].
Decoder, at step i (eq. 4–6 and appendix A):

    e_ij = a(s_{i-1}, h_j)            the alignment model (scoring, below)
    α_ij = exp(e_ij) / Σ_k exp(e_ik)   a soft alignment of target word i to source word j
    c_i  = Σ_j α_ij h_j                the expected annotation, the context
    s_i  = GRU(s_{i-1}, [E y_{i-1} ; c_i])
    t̃_i = U_o s_i + V_o E y_{i-1} + C_o c_i,   t_i = maxout₂(t̃_i)   (the deep output)
    p(y_i | y_<i, x) = softmax(W_o t_i)

with s_0 = tanh(W_s h←_1). The scoring ``a`` is selectable: additive (Bahdanau,
e_ij = v_aᵀ tanh(W_a s_{i-1} + U_a h_j)) or Luong's dot / general / concat, always
queried with s_{i-1} so only the scoring changes. ``scoring="none"`` is RNNencdec
(Cho et al. 2014): c_i = c = [h→_T ; h←_1] for every i, the fixed-vector bottleneck.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from engine import checkpoints
from engine.attention import (
    AdditiveAttention,
    ConcatAttention,
    DotAttention,
    GeneralAttention,
    padding_mask,
)
from engine.data import dates, enfr
from engine.data.vocab import BOS_ID, EOS_ID, PAD_ID, Vocab
from engine.errors import InputError
from engine.messages import Message
from engine.trace import AttentionMap, Trace

SCORINGS = ("additive", "dot", "general", "concat", "none")


@dataclass
class NMTConfig:
    src_vocab: int
    tgt_vocab: int
    emb: int = 96
    enc_hidden: int = 96  # per direction; annotations are 2 × enc_hidden
    dec_hidden: int = 192  # = 2 × enc_hidden, so the dot scoring is defined
    attn: int = 128  # width of the additive / concat alignment model
    maxout: int = 96  # size of t_i after the maxout over pairs
    scoring: str = "additive"

    def to_json(self) -> dict:
        return asdict(self)


def make_scoring(cfg: NMTConfig) -> nn.Module | None:
    d_q, d_k = cfg.dec_hidden, 2 * cfg.enc_hidden
    if cfg.scoring == "none":
        return None
    if cfg.scoring == "dot" and d_q != d_k:
        raise ValueError(f"dot scoring needs dec_hidden == 2·enc_hidden, got {d_q} vs {d_k}")
    return {
        "additive": lambda: AdditiveAttention(d_q, d_k, cfg.attn),
        "dot": DotAttention,
        "general": lambda: GeneralAttention(d_q, d_k),
        "concat": lambda: ConcatAttention(d_q, d_k, cfg.attn),
    }[cfg.scoring]()


@dataclass
class Encoded:
    """What the encoder hands the decoder: annotations h (B, K, 2H), key mask (B, 1, K),
    s_0 (B, D), RNNencdec's summary c (B, 2H) and, for the additive scoring, U_a h (B, K, d_a)."""

    h: torch.Tensor
    mask: torch.Tensor
    s0: torch.Tensor
    summary: torch.Tensor
    Uh: torch.Tensor | None

    def expand(self, n: int) -> Encoded:
        """The same single sentence repeated for n beam hypotheses."""

        def rep(x):
            return None if x is None else x.expand(n, *x.shape[1:])

        return Encoded(rep(self.h), rep(self.mask), rep(self.s0), rep(self.summary), rep(self.Uh))


@dataclass
class Decoded:
    """One hypothesis and what produced it, step by step (T steps, K source words)."""

    ids: list[int]  # emitted target ids, ending with </s> when it finished
    score: float  # log p(y | x)
    alphas: torch.Tensor | None  # (T, K) α_ij
    contexts: torch.Tensor  # (T, 2·enc_hidden) c_i
    states: torch.Tensor  # (T, dec_hidden) s_{i-1}, the query of step i


class RNNSearch(nn.Module):
    """The network, and once loaded (:meth:`from_pretrained`) its vocabularies, task and
    checkpoint meta too, as fairseq's encoder holds its dictionary: no wrapper type sits
    between the module and its card (docs/ARCHITECTURE.md)."""

    def __init__(
        self,
        cfg: NMTConfig,
        src_vocab: Vocab | None = None,
        tgt_vocab: Vocab | None = None,
        meta: dict | None = None,
        name: str = "",
    ):
        super().__init__()
        self.name, self.meta = name, meta or {}
        self.src_vocab, self.tgt_vocab = src_vocab, tgt_vocab
        self.task = task(self.meta["task"]) if "task" in self.meta else None
        if cfg.scoring not in SCORINGS:
            raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}; got {cfg.scoring!r}")
        self.cfg = cfg
        d_c = 2 * cfg.enc_hidden
        self.src_embed = nn.Embedding(cfg.src_vocab, cfg.emb, padding_idx=PAD_ID)
        self.tgt_embed = nn.Embedding(cfg.tgt_vocab, cfg.emb, padding_idx=PAD_ID)  # E
        self.encoder = nn.GRU(cfg.emb, cfg.enc_hidden, batch_first=True, bidirectional=True)
        self.W_s = nn.Linear(cfg.enc_hidden, cfg.dec_hidden)
        self.attention = make_scoring(cfg)
        self.decoder = nn.GRUCell(cfg.emb + d_c, cfg.dec_hidden)
        self.U_o = nn.Linear(cfg.dec_hidden, 2 * cfg.maxout)
        self.V_o = nn.Linear(cfg.emb, 2 * cfg.maxout, bias=False)
        self.C_o = nn.Linear(d_c, 2 * cfg.maxout, bias=False)
        self.W_o = nn.Linear(cfg.maxout, cfg.tgt_vocab)

    # -- encoder -----------------------------------------------------------------------
    def encode(self, src: torch.Tensor, lengths: torch.Tensor) -> Encoded:
        x = self.src_embed(src)  # (B, K, emb)
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, h_n = self.encoder(packed)  # h_n: (2, B, H) = h→_T, h←_1
        h, _ = pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])
        additive = isinstance(self.attention, AdditiveAttention)
        Uh = self.attention.project_keys(h) if additive else None
        return Encoded(
            h=h,
            mask=padding_mask(lengths, src.shape[1]),
            s0=torch.tanh(self.W_s(h_n[1])),  # s_0 = tanh(W_s h←_1)
            summary=torch.cat([h_n[0], h_n[1]], dim=-1),  # RNNencdec's fixed c
            Uh=Uh,
        )

    # -- one decoder step ----------------------------------------------------------------
    def context(self, s_prev: torch.Tensor, enc: Encoded):
        """c_i (B, 2H) and α_i (B, K) from s_{i-1}; the fixed c and no α without attention."""
        if self.attention is None:
            return enc.summary, None
        # Additive: U_a h_j does not depend on i, so encode() computed it once per sentence.
        kw = {} if enc.Uh is None else {"Uh": enc.Uh}
        # c (B, 1, 2H), α (B, 1, K)
        c, alpha = self.attention(s_prev[:, None, :], enc.h, mask=enc.mask, **kw)
        return c[:, 0], alpha[:, 0]

    def step(self, y_prev: torch.Tensor, s_prev: torch.Tensor, enc: Encoded):
        """Returns logits (B, V), s_i, c_i, α_i."""
        c, alpha = self.context(s_prev, enc)
        Ey = self.tgt_embed(y_prev)  # (B, emb)
        s = self.decoder(torch.cat([Ey, c], dim=-1), s_prev)
        t = self.U_o(s) + self.V_o(Ey) + self.C_o(c)  # t̃_i (B, 2·maxout)
        t = t.view(t.shape[0], -1, 2).max(dim=-1).values  # maxout over pairs (B, maxout)
        return self.W_o(t), s, c, alpha

    # -- training: teacher forcing -------------------------------------------------------
    def forward(self, src, src_len, tgt_in):
        """Logits (B, T, V) and α (B, T, K) (None without attention) for target prefix tgt_in."""
        enc = self.encode(src, src_len)
        s, logits, alphas = enc.s0, [], []
        for i in range(tgt_in.shape[1]):
            out, s, _, alpha = self.step(tgt_in[:, i], s, enc)
            logits.append(out)
            alphas.append(alpha)
        stacked = None if alphas[0] is None else torch.stack(alphas, 1)
        return torch.stack(logits, 1), stacked

    # -- decoding ------------------------------------------------------------------------
    @torch.no_grad()
    def greedy_batch(self, src, src_len, max_len: int) -> list[list[int]]:
        """Greedy decoding of a batch (for evaluation); ids without </s>."""
        enc = self.encode(src, src_len)
        s = enc.s0
        y = torch.full((src.shape[0],), BOS_ID, dtype=torch.long)
        out = torch.zeros(src.shape[0], max_len, dtype=torch.long)
        for i in range(max_len):
            logits, s, _, _ = self.step(y, s, enc)
            y = logits.argmax(-1)
            out[:, i] = y
        result = []
        for row in out.tolist():
            result.append(row[: row.index(EOS_ID)] if EOS_ID in row else row)
        return result

    @torch.no_grad()
    def beam_search(self, src_ids: list[int], beam: int = 5, max_len: int = 80) -> Decoded:
        """Beam search for one sentence; width 1 is greedy. The returned hypothesis carries
        its own α, c_i and s_{i-1} at every step (gathered along its back-pointers).

        Hypotheses are ranked by log-probability divided by length, so finishing early
        is not rewarded; a hypothesis that never emits </s> stops at ``max_len``.
        """
        if not 1 <= beam <= 10:
            raise ValueError(f"beam width must be between 1 and 10, got {beam}")
        src = torch.tensor([src_ids], dtype=torch.long)
        enc = self.encode(src, torch.tensor([len(src_ids)]))
        s, K = enc.s0, enc.h.shape[1]
        y = torch.tensor([BOS_ID])
        scores = torch.zeros(1)
        ids = torch.zeros(1, 0, dtype=torch.long)
        hist_a = torch.zeros(1, 0, K)
        hist_c = torch.zeros(1, 0, enc.h.shape[-1])
        hist_s = torch.zeros(1, 0, s.shape[-1])
        finished: list[Decoded] = []
        for _ in range(max_len):
            n = y.shape[0]
            logits, s_new, c, alpha = self.step(y, s, enc.expand(n))
            logp = torch.log_softmax(logits, -1) + scores[:, None]  # (n, V)
            top, flat = logp.view(-1).topk(min(beam, logp.numel()))
            parent, token = flat // logits.shape[1], flat % logits.shape[1]
            a = alpha if alpha is not None else torch.zeros(n, K)
            ids = torch.cat([ids[parent], token[:, None]], 1)
            hist_a = torch.cat([hist_a[parent], a[parent][:, None]], 1)
            hist_c = torch.cat([hist_c[parent], c[parent][:, None]], 1)
            hist_s = torch.cat([hist_s[parent], s[parent][:, None]], 1)
            done = token == EOS_ID
            for k in torch.nonzero(done).flatten().tolist():
                finished.append(
                    Decoded(ids[k].tolist(), float(top[k]), hist_a[k], hist_c[k], hist_s[k])
                )
            keep = ~done
            if len(finished) >= beam or not keep.any():
                break
            y, s, scores = token[keep], s_new[parent][keep], top[keep]
            ids, hist_a, hist_c, hist_s = ids[keep], hist_a[keep], hist_c[keep], hist_s[keep]
        else:
            finished += [
                Decoded(ids[k].tolist(), float(scores[k]), hist_a[k], hist_c[k], hist_s[k])
                for k in range(ids.shape[0])
            ]
        best = max(finished, key=lambda d: d.score / len(d.ids))
        if self.attention is None:
            best.alphas = None
        return best

    # -- a trained checkpoint: text in, Trace out ------------------------------------------
    @classmethod
    def from_pretrained(cls, name: str, directory=None) -> RNNSearch:
        """A shipped checkpoint in eval mode, with its vocabularies (nanoGPT's shape)."""
        state, meta = checkpoints.load(name, directory)
        vocabs = Vocab.from_json(meta["src_vocab"]), Vocab.from_json(meta["tgt_vocab"])
        model = cls(NMTConfig(**meta["config"]), *vocabs, meta, name)
        model.load_state_dict(state)
        return model.eval()

    def tokens(self, text: str) -> list[str]:
        """The model's source tokens for ``text``; empty or over-long input is refused."""
        if not text or not text.strip():
            raise InputError("card.nmt.empty")
        toks = self.task.tokenize(text)
        if not toks:
            raise InputError("nmt.no_tokens")
        if len(toks) > self.task.max_tokens:
            raise InputError(
                "nmt.too_many_tokens", n=len(toks), unit=self.task.unit, limit=self.task.max_tokens
            )
        return toks

    def translate(self, text: str, beam: int = 5) -> Trace:
        t0 = time.perf_counter()
        src = self.tokens(text)
        unknown = self.src_vocab.unknown(src)
        best = self.beam_search(
            self.src_vocab.encode(src), beam=beam, max_len=self.task.max_target(len(src)) + 1
        )  # + 1 for </s>
        out_tokens = self.tgt_vocab.decode(best.ids)
        steps = [self.tgt_vocab.itos[i] for i in best.ids]  # includes the final </s>
        maps, vectors = {}, {"contexts": best.contexts.numpy(), "states": best.states.numpy()}
        if best.alphas is not None:
            scoring = self.cfg.scoring
            maps["alignment"] = AttentionMap(
                weights=best.alphas.numpy()[None, None],
                query_labels=steps,
                key_labels=src,
                kind="alignment",
                layer_labels=("decoder steps",),
                head_labels=(scoring,),
                note=Message("note.beam_alignment", beam=beam),
            )
            vectors.update(self.internals(src, best.states))
        trace = Trace(
            model=self.name,
            task=self.task.name,
            inputs={"text": text, "tokens": src, "beam": beam},
            outputs={
                "translation": self.task.detokenize(out_tokens),
                "tokens": out_tokens,
                "steps": steps,
                "log_prob": best.score,
                # the confidence a card compares with its model's floor (steps include </s>)
                "log_prob_per_token": best.score / max(1, len(steps)),
                "unknown": unknown,
            },
            maps=maps,
            vectors={k: np.asarray(v, dtype=np.float32) for k, v in vectors.items()},
            timings={"translate_ms": 1000 * (time.perf_counter() - t0)},
        )
        return trace

    @torch.no_grad()
    def align(self, src: list[str], tgt: list[str]):
        """α (T, K) with ``tgt`` fed in (forced alignment): how the model aligns a given
        translation, e.g. the gold one when its own output differs. None without attention."""
        if self.attention is None:
            return None
        ids = torch.tensor([self.src_vocab.encode(src)])
        tgt_in = torch.tensor([self.tgt_vocab.encode(tgt, add_bos=True)])
        _, alpha = self(ids, torch.tensor([len(src)]), tgt_in)
        return alpha[0].numpy()

    @torch.no_grad()
    def internals(self, src: list[str], states: torch.Tensor) -> dict:
        """The annotations h_j and the scores e_ij; for the additive scoring also its parts
        W_a s_{i-1}, U_a h_j, tanh(·) and v_a, so a page can show e_ij being built."""
        ids = torch.tensor([self.src_vocab.encode(src)])
        h = self.encode(ids, torch.tensor([len(src)])).h  # (1, K, 2H)
        attn = self.attention
        out = {"annotations": h[0]}
        if isinstance(attn, AdditiveAttention):
            parts = attn.parts(states[None], h)
            out.update({k: v[0] for k, v in parts.items()})
            out["v_a"] = attn.v_a.weight[0]
        else:
            out["e"] = attn.score(states[None], h)[0]
        return {k: v.detach() for k, v in out.items()}


# -- the tasks a trained model reads and writes ---------------------------------------


@dataclass(frozen=True)
class Task:
    name: str
    tokenize: object  # str -> list[str]
    detokenize: object  # list[str] -> str
    max_tokens: int
    unit: str  # what the limit counts
    max_target: object  # n_src -> the longest output worth decoding


def task(name: str) -> Task:
    tasks = {
        "dates": Task(
            "dates",
            dates.tokenize,
            "".join,
            dates.MAX_CHARS,
            Message("unit.characters"),
            dates.max_target_tokens,
        ),
        "en-fr": Task(
            "en-fr",
            enfr.tokenize_en,
            enfr.detokenize_fr,
            enfr.MAX_LEN,
            Message("unit.tokens"),
            enfr.max_target_tokens,
        ),
    }
    if name not in tasks:
        raise ValueError(f"task must be one of {', '.join(tasks)}; got {name!r}")
    return tasks[name]
