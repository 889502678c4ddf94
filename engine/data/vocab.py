"""Token ↔ id tables with four fixed specials; round-trips through JSON (no pickle)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

PAD, BOS, EOS, UNK = "<pad>", "<s>", "</s>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)
PAD_ID, BOS_ID, EOS_ID, UNK_ID = range(4)


class Vocab:
    """``<pad>``=0, ``<s>``=1, ``</s>``=2, ``<unk>``=3, then tokens by falling count, then name."""

    def __init__(self, tokens: Sequence[str]):
        tokens = list(tokens)
        if tuple(tokens[:4]) != SPECIALS:
            tokens = list(SPECIALS) + [t for t in tokens if t not in SPECIALS]
        if len(set(tokens)) != len(tokens):
            raise ValueError("vocabulary tokens must be unique")
        self.itos: list[str] = tokens
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(tokens)}

    @classmethod
    def build(cls, sentences: Iterable[Sequence[str]], min_count: int = 1) -> Vocab:
        counts = Counter(t for s in sentences for t in s)
        kept = [t for t, n in counts.items() if n >= min_count and t not in SPECIALS]
        kept.sort(key=lambda t: (-counts[t], t))  # deterministic order for a given corpus
        return cls(list(SPECIALS) + kept)

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def encode(
        self, tokens: Sequence[str], add_bos: bool = False, add_eos: bool = False
    ) -> list[int]:
        ids = [self.stoi.get(t, UNK_ID) for t in tokens]
        return ([BOS_ID] if add_bos else []) + ids + ([EOS_ID] if add_eos else [])

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Tokens up to (not including) the first ``</s>``; ``<s>`` and ``<pad>`` dropped."""
        out = []
        for i in ids:
            i = int(i)
            if i == EOS_ID:
                break
            if i in (BOS_ID, PAD_ID):
                continue
            out.append(self.itos[i] if 0 <= i < len(self.itos) else UNK)
        return out

    def unknown(self, tokens: Sequence[str]) -> list[str]:
        """The tokens this vocabulary would map to ``<unk>``, in order, without repeats."""
        return list(dict.fromkeys(t for t in tokens if t not in self.stoi))

    def to_json(self) -> dict:
        return {"itos": list(self.itos)}

    @classmethod
    def from_json(cls, data: dict) -> Vocab:
        return cls(data["itos"])
