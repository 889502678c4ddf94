"""Human-readable dates → ISO 8601, at character level (the classic attention warm-up task).

Dates run from 1950 to 2049 so a two-digit year is never ambiguous (50–99 → 19xx,
00–49 → 20xx); numeric dates are day-first ("03/05/79" is 3 May 1979). Every source
string is unique across the splits, so nothing in test is ever trained on.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable

from engine.data.enfr import Pair

FIRST, LAST = dt.date(1950, 1, 1), dt.date(2049, 12, 31)
MAX_CHARS = 40


def max_target_tokens(n_src: int) -> int:
    """ISO 8601 is always YYYY-MM-DD: 10 characters, whatever the input."""
    return 10


MONTHS = (
    "January February March April May June July August September October November December"
).split()
MOIS = "janvier février mars avril mai juin juillet août septembre octobre novembre décembre"
MOIS = tuple(MOIS.split())
DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
JOURS = "lundi mardi mercredi jeudi vendredi samedi dimanche".split()


def ordinal(n: int) -> str:
    """3 → '3rd', 11 → '11th', 22 → '22nd'."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _m(d: dt.date) -> str:
    return MONTHS[d.month - 1]


def _yy(d: dt.date) -> str:
    return f"{d.year % 100:02d}"


# Each format turns a date into one human spelling; at least 20, in English and French.
FORMATS: dict[str, Callable[[dt.date], str]] = {
    "weekday, d month yyyy": lambda d: f"{DAYS[d.weekday()]}, {d.day} {_m(d)} {d.year}",
    "dd/mm/yy": lambda d: f"{d.day:02d}/{d.month:02d}/{_yy(d)}",
    "month dth yyyy": lambda d: f"{_m(d)} {ordinal(d.day)} {d.year}",
    "d mois yyyy": lambda d: f"{d.day} {MOIS[d.month - 1]} {d.year}",
    "d month yyyy": lambda d: f"{d.day} {_m(d)} {d.year}",
    "dd/mm/yyyy": lambda d: f"{d.day:02d}/{d.month:02d}/{d.year}",
    "month d, yyyy": lambda d: f"{_m(d)} {d.day}, {d.year}",
    "wkd d mon yyyy": lambda d: f"{DAYS[d.weekday()][:3]} {d.day} {_m(d)[:3]} {d.year}",
    "dth of month yyyy": lambda d: f"{ordinal(d.day)} of {_m(d)} {d.year}",
    "the dth of month, yyyy": lambda d: f"the {ordinal(d.day)} of {_m(d)}, {d.year}",
    "dd.mm.yyyy": lambda d: f"{d.day:02d}.{d.month:02d}.{d.year}",
    "d.m.yy": lambda d: f"{d.day}.{d.month}.{_yy(d)}",
    "yyyy/mm/dd": lambda d: f"{d.year}/{d.month:02d}/{d.day:02d}",
    "d-mon-yyyy": lambda d: f"{d.day}-{_m(d)[:3]}-{d.year}",
    "D MONTH YYYY": lambda d: f"{d.day} {_m(d).upper()} {d.year}",
    "jour d mois yyyy": lambda d: f"{JOURS[d.weekday()]} {d.day} {MOIS[d.month - 1]} {d.year}",
    "le d mois yyyy": lambda d: f"le {d.day} {MOIS[d.month - 1]} {d.year}",
    "weekday month dth, yyyy": lambda d: f"{DAYS[d.weekday()]} {_m(d)} {ordinal(d.day)}, {d.year}",
    "month dd yyyy": lambda d: f"{_m(d)} {d.day:02d} {d.year}",
    "d month 'yy": lambda d: f"{d.day} {_m(d)} '{_yy(d)}",
    "dd-mm-yyyy": lambda d: f"{d.day:02d}-{d.month:02d}-{d.year}",
    "weekday dd/mm/yyyy": lambda d: f"{DAYS[d.weekday()]} {d.day:02d}/{d.month:02d}/{d.year}",
    "d mon. yyyy": lambda d: f"{d.day} {_m(d)[:3]}. {d.year}",
    "d month yy (lower case)": lambda d: f"{d.day} {_m(d).lower()} {_yy(d)}",
}


def iso(d: dt.date) -> str:
    return d.isoformat()


def pair(d: dt.date, fmt: str) -> Pair:
    """One example: the characters of ``d`` spelt in ``fmt`` → the characters of its ISO form."""
    return Pair(
        src=tuple(FORMATS[fmt](d)), tgt=tuple(iso(d)), sure=frozenset(), possible=frozenset()
    )


def tokenize(text: str) -> list[str]:
    """Character-level tokens of a typed date (surrounding spaces dropped)."""
    return list(text.strip())


def splits(
    seed: int = 0, n_train: int = 30000, n_valid: int = 1000, n_test: int = 2000
) -> dict[str, list[Pair]]:
    """Disjoint splits of unique (source string) examples, fixed by ``seed``."""
    rng = random.Random(seed)
    span = (LAST - FIRST).days
    names = sorted(FORMATS)
    seen: set[tuple[str, ...]] = set()
    pairs: list[Pair] = []
    need = n_train + n_valid + n_test
    while len(pairs) < need:
        p = pair(FIRST + dt.timedelta(days=rng.randrange(span + 1)), rng.choice(names))
        if p.src not in seen:
            seen.add(p.src)
            pairs.append(p)
    return {
        "test": pairs[:n_test],
        "valid": pairs[n_test : n_test + n_valid],
        "train": pairs[n_test + n_valid :],
    }
