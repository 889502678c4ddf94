"""Seeded tasks where attention's reach matters, for comparing attention variants.

Every task gives ``inputs [B, n]`` (token ids) and ``targets [B, n]`` with IGNORE (−100)
wherever nothing is asked, so a model answers at the asked positions only and the
answers never appear in its input (a bidirectional model cannot copy them).

- **mqar** — multi-query associative recall (Arora et al. 2023, Zoology): P key–value
  pairs ``k₁ v₁ … k_P v_P`` (distinct keys), then blanks with every key asked once, at
  random later positions; the answer at a query is its key's value. Reach: a query is
  up to n tokens from its pair, and P lookups share one sequence.
- **copy** — the copying-memory task (Hochreiter & Schmidhuber 1997; Arjovsky et al.
  2016): C symbols at positions 0…C−1, blanks, then C answer slots at the end; slot j
  answers the symbol at position j. The answer sits a fixed, structured distance
  n − C away from its slot: reach by position, not by content.
- **control** — short range: random tokens, and at a random half of the positions the
  answer is the token just before. Any model whose mixer leaves tokens readable solves
  it (the model's short convolution carries the previous token); it checks that a
  variant trains at all.

Vocabulary (shared by every task): 0 blank, 1 slot, then KEYS key ids, then VALUES
value ids.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

BLANK, SLOT = 0, 1
KEYS = VALUES = 64
KEY0, VALUE0 = 2, 2 + KEYS
VOCAB = 2 + KEYS + VALUES
IGNORE = -100
COPY_SYMBOLS = 8  # the copying-memory task's alphabet (Arjovsky et al. use 8)


@dataclass(frozen=True)
class Task:
    """One generated task: ``kind`` (mqar, copy, control), length ``n``, ``pairs``
    (mqar key–value pairs; copy symbols; control: unused)."""

    name: str
    kind: str
    n: int
    pairs: int = 0
    description: str = ""

    def batch(self, size: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``size`` examples drawn from ``seed``: the same seed gives the same batch."""
        g = torch.Generator().manual_seed(int(seed))
        return GENERATORS[self.kind](size, self.n, self.pairs, g)


def mqar(size: int, n: int, pairs: int, g: torch.Generator):
    """Zoology's MQAR: ``k v`` pairs first, each key asked once at a random later slot."""
    if not 1 <= pairs <= KEYS or 3 * pairs > n:
        raise ValueError(f"mqar needs 1 ≤ pairs ≤ {KEYS} and 3·pairs ≤ n; got {pairs}, n={n}")
    x = torch.full((size, n), BLANK)
    y = torch.full((size, n), IGNORE)
    rows = torch.arange(size)[:, None]
    keys = torch.rand(size, KEYS, generator=g).argsort(dim=1)[:, :pairs] + KEY0  # distinct
    values = torch.randint(VALUES, (size, pairs), generator=g) + VALUE0
    x[:, 0 : 2 * pairs : 2], x[:, 1 : 2 * pairs : 2] = keys, values
    # Query positions: distinct, uniform over the rest of the sequence.
    where = torch.rand(size, n - 2 * pairs, generator=g).argsort(dim=1)[:, :pairs] + 2 * pairs
    asked = torch.rand(size, pairs, generator=g).argsort(dim=1)  # which pair each query asks
    x[rows, where] = keys.gather(1, asked)
    y[rows, where] = values.gather(1, asked)
    return x, y


def copy(size: int, n: int, pairs: int, g: torch.Generator):
    """Copying memory: C symbols, blanks, then C slots answering them in order."""
    if not 1 <= pairs or 2 * pairs > n:
        raise ValueError(f"copy needs 1 ≤ symbols and 2·symbols ≤ n; got {pairs}, n={n}")
    x = torch.full((size, n), BLANK)
    y = torch.full((size, n), IGNORE)
    symbols = torch.randint(COPY_SYMBOLS, (size, pairs), generator=g) + VALUE0
    x[:, :pairs] = symbols
    x[:, n - pairs :] = SLOT
    y[:, n - pairs :] = symbols
    return x, y


def control(size: int, n: int, pairs: int, g: torch.Generator):
    """Previous-token recall at a random half of the positions (short range only)."""
    x = torch.randint(VALUES, (size, n), generator=g) + VALUE0
    asked = torch.rand(size, n, generator=g) < 0.5
    asked[:, 0] = False  # position 0 has no previous token
    prev = torch.cat([x.new_full((size, 1), BLANK), x[:, :-1]], dim=1)
    return x, torch.where(asked, prev, IGNORE)


GENERATORS = {"mqar": mqar, "copy": copy, "control": control}

TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        Task(
            "mqar-256",
            "mqar",
            256,
            32,
            "associative recall, n = 256, 32 key–value pairs (Zoology)",
        ),
        Task(
            "mqar-512",
            "mqar",
            512,
            64,
            "associative recall, n = 512, 64 key–value pairs (Zoology)",
        ),
        # Zoology's published points (Arora et al. 2023, Fig. 2; the Based paper's Fig. 2):
        # (length, pairs) = (64, 4), (128, 8), (256, 16). Zoology draws 8,192 ids and fills
        # the gaps with random tokens; here 64 keys, 64 values and blanks.
        *(
            Task(
                f"mqar-{n}-{p}",
                "mqar",
                n,
                p,
                f"associative recall, n = {n}, {p} key–value pairs (Zoology's grid)",
            )
            for n, p in ((64, 4), (128, 8), (256, 16))
        ),
        Task("copy-128", "copy", 128, 8, "copying memory, n = 128, 8 symbols 120 tokens back"),
        Task("copy-256", "copy", 256, 16, "copying memory, n = 256, 16 symbols 240 tokens back"),
        Task("control-128", "control", 128, 0, "short-range control: the previous token, n = 128"),
    )
}


def evidence(kind: str, x: torch.Tensor, i: int) -> int | None:
    """Where the answer asked at position ``i`` of ``x [n]`` is read from: the key's earlier
    place (mqar), the symbol as far from the first slot as ``i`` is (copy), the token
    before (control). None where nothing is there."""
    tokens = x.tolist()
    if kind == "control":
        return i - 1 if i > 0 else None
    if kind == "copy":
        first_slot = tokens.index(SLOT)
        return i - first_slot if 0 <= i - first_slot < first_slot else None
    return next((j for j in range(i) if tokens[j] == tokens[i]), None)


def get(name: str) -> Task:
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(f"unknown task {name!r}; known: {', '.join(TASKS)}") from None


def accuracy(logits: torch.Tensor, targets: torch.Tensor) -> float:
    """Fraction of asked positions answered right (``logits [B, n, V]``)."""
    asked = targets != IGNORE
    return float((logits.argmax(-1)[asked] == targets[asked]).float().mean())
