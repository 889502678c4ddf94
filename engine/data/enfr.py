"""English→French sentence pairs with gold word alignments, from a synchronous grammar.

Every rule emits the English and the French side together, and each French token
carries its links to English positions:

- *sure* links for word-for-word correspondences ("agreement" ↔ "accord", "not" ↔
  "ne" and "pas", "was" ↔ "a" and "été"),
- *possible* links for agreement dependencies: a French determiner, adjective,
  auxiliary or participle on the English noun whose gender and number it needs.

Phenomena: adjective–noun reordering ("the european economic area" → "la zone
économique européenne"), elision ("l' accord", "n' a"), contraction ("du", "aux"),
discontinuous negation ("did not sign" → "n' a pas signé"), gender and number
agreement (including the participle after "que"), subject and object relative
clauses, dates, numbers, and coordinated sentences of 40+ words. Bahdanau et al.
(2014) Figure 3(a)'s sentence is in the language (``FIGURE_3A``).

English is lower-cased and tokenised; French elisions are separate tokens ("l'",
"accord") that ``detokenize_fr`` joins back.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.data import enfr_lexicon as lx
from engine.text import tokenize

if TYPE_CHECKING:
    import numpy as np

MAX_LEN = 50  # English tokens; longer sentences are not generated for the splits


def max_target_tokens(n_src: int) -> int:
    """A decoding bound tied to the input: French here is at most 8 tokens longer than its
    English (measured over 5,000 generated pairs), so n + 10 never cuts a grammar
    sentence, and an out-of-grammar input cannot loop for 60 tokens."""
    return n_src + 10


LENGTH_BUCKETS = ((1, 10), (11, 20), (21, 30), (31, 40), (41, MAX_LEN))


@dataclass(frozen=True)
class Pair:
    """One sentence pair; links are (src_index, tgt_index) and ``possible ⊇ sure``."""

    src: tuple[str, ...]
    tgt: tuple[str, ...]
    sure: frozenset[tuple[int, int]]
    possible: frozenset[tuple[int, int]]

    def score(self, alpha) -> OnGold:
        """α [T, S] (rows: this pair's target words, maybe followed by </s>) read on the
        gold links: each target word's argmax source word scored by AER."""
        import numpy as np  # heavy: card listing reads the examples without it

        from engine import translation_quality as metrics  # heavy: numpy

        alpha = np.asarray(alpha)[: len(self.tgt), : len(self.src)]
        predicted = metrics.argmax_links(alpha)
        kinds = metrics.link_kinds(alpha, self.sure, self.possible)
        by_row = sorted(predicted, key=lambda link: link[1])
        return OnGold(
            alpha=alpha,
            aer=metrics.aer([(predicted, self.sure, self.possible)]),
            aer_sure=metrics.aer([(predicted, self.sure, self.sure)]),
            ahead=[
                (self.tgt[i], self.src[j])
                for (j, i), k in zip(by_row, kinds, strict=True)
                if k == "possible"
            ],
        )


@dataclass(frozen=True)
class OnGold:
    """An alignment scored on a Pair's gold links (:meth:`Pair.score`)."""

    alpha: np.ndarray  # rows: the pair's target words, columns: its source words
    aer: float  # argmax links vs sure + possible
    aer_sure: float  # argmax links vs sure only
    ahead: list[tuple[str, str]]  # (target word, source word) argmax links that are possible only


# -- lexicon --------------------------------------------------------------------------


@dataclass(frozen=True)
class Noun:
    en: str
    en_pl: str
    fr: str
    fr_pl: str
    gender: str  # "m" | "f"
    person: bool


@dataclass(frozen=True)
class Adjective:
    en: str
    forms: dict  # (gender, plural) -> French form
    pre: bool  # placed before the noun in French


@dataclass(frozen=True)
class Verb:
    """An English verb and its regular French -er counterpart (``stem`` + endings)."""

    en: str
    en_3sg: str
    en_past: str
    en_pp: str
    fr_inf: str

    def present(self, plural: bool) -> str:
        return self.fr_inf[:-2] + ("ent" if plural else "e")

    def future(self, plural: bool) -> str:
        return self.fr_inf + ("ont" if plural else "a")

    def participle(self, gender: str = "m", plural: bool = False) -> str:
        return self.fr_inf[:-2] + "é" + ("e" if gender == "f" else "") + ("s" if plural else "")


def _nouns(table: str, person: bool) -> dict[str, Noun]:
    out = {}
    for f in lx.pairs(table):
        en, fr, g = f[:3]
        en_pl = f[3] if len(f) > 3 else lx.english_plural(en)
        fr_pl = f[4] if len(f) > 4 else lx.french_plural(fr)
        out[en] = Noun(en, en_pl, fr, fr_pl, g, person)
    return out


def _adjectives() -> dict[str, Adjective]:
    out = {}
    for f in lx.pairs(lx.ADJECTIVES):
        masc, _, fem = f[1].partition("/")
        fem = fem or lx.french_feminine(masc)
        forms = {
            ("m", False): masc,
            ("f", False): fem,
            ("m", True): lx.french_plural(masc),
            ("f", True): fem + "s",
        }
        out[f[0]] = Adjective(f[0], forms, pre=len(f) > 2 and f[2] == "pre")
    return out


def _verbs() -> dict[str, Verb]:
    out = {}
    for f in lx.pairs(lx.VERBS):
        third, past = lx.english_verb_forms(f[0])
        past = f[2] if len(f) > 2 else past
        out[f[0]] = Verb(f[0], third, past, f[3] if len(f) > 3 else past, f[1])
    return out


THINGS = _nouns(lx.THINGS, person=False)
PEOPLE = _nouns(lx.PEOPLE, person=True)
ADJECTIVES = _adjectives()
VERBS = _verbs()
NAMES = tuple(lx.NAMES.split())
CITIES = dict(lx.pairs(lx.CITIES))
NUMBERS = dict(lx.pairs(lx.NUMBERS))
MONTHS = dict(lx.pairs(lx.MONTHS))


def english_words() -> set[str]:
    """Every English word form the grammar can emit (the vocabulary it teaches)."""
    words = set(
        "the a an this these our their every of on about with for against without from "
        "by in that who and but while because when was were is are did does do not "
        "will be yesterday today tomorrow last next year month week".split()
    )
    for n in (*THINGS.values(), *PEOPLE.values()):
        words |= {n.en, n.en_pl}
    for v in VERBS.values():
        words |= {v.en, v.en_3sg, v.en_past, v.en_pp}
    return words | set(ADJECTIVES) | set(NAMES) | set(CITIES) | set(NUMBERS) | set(MONTHS)


# -- phrases with links ---------------------------------------------------------------


@dataclass(frozen=True)
class Fr:
    """A French token and the English positions it links to (relative to its phrase)."""

    text: str
    sure: frozenset[int] = frozenset()
    possible: frozenset[int] = frozenset()

    def shifted(self, by: int) -> Fr:
        return Fr(
            self.text,
            frozenset(i + by for i in self.sure),
            frozenset(i + by for i in self.possible),
        )


@dataclass
class Phrase:
    """English tokens and French tokens; French links index ``en``.

    Links may point before the phrase (negative indices): an auxiliary agrees with a
    subject built earlier. Concatenation shifts the right operand's links.
    """

    en: list[str] = field(default_factory=list)
    fr: list[Fr] = field(default_factory=list)

    def __add__(self, other: Phrase) -> Phrase:
        n = len(self.en)
        return Phrase(self.en + other.en, self.fr + [t.shifted(n) for t in other.fr])


def fr(text: str, sure: Sequence[int] = (), possible: Sequence[int] = ()) -> Fr:
    return Fr(text, frozenset(sure), frozenset(possible))


def words(en: Sequence[str], fr_words: Sequence[str]) -> Phrase:
    """A phrase translated word for word, in order (each French word sure to its English)."""
    return Phrase(list(en), [fr(w, [i]) for i, w in enumerate(fr_words)])


@dataclass
class NP:
    phrase: Phrase
    head: int  # index of the head noun in phrase.en
    gender: str
    plural: bool
    person: bool


def _article(next_en: str) -> str:
    vowel = next_en[0] in "aeiou" and next_en not in lx.A_NOT_AN
    return "an" if vowel else "a"


DETERMINERS = ("the", "a", "this", "our", "their", "every", "bare", "number", "the number")


def noun_phrase(
    noun: Noun, plural: bool, det: str, adjectives: Sequence[Adjective] = (), number: str = ""
) -> NP:
    """det adj* noun → det pre-adj noun post-adj (post-nominal adjectives mirrored).

    ``det`` is one of DETERMINERS; "bare" is the English bare plural (French "des"),
    "number" a cardinal ("three agreements"), "the number" both ("the three …").
    """
    g = noun.gender
    en_noun = noun.en_pl if plural else noun.en
    en_adj = [a.en for a in adjectives]
    first = (en_adj + [en_noun])[0]
    en_det, fr_det = {
        "the": (["the"], ["les" if plural else ("la" if g == "f" else "le")]),
        "a": ([_article(first)], ["une" if g == "f" else "un"]),
        "this": (
            ["these" if plural else "this"],
            ["ces" if plural else ("cette" if g == "f" else "ce")],
        ),
        "our": (["our"], ["nos" if plural else "notre"]),
        "their": (["their"], ["leurs" if plural else "leur"]),
        "every": (["every"], ["chaque"]),
        "bare": ([], ["des"]),
        "number": ([number], [NUMBERS.get(number, "")]),
        "the number": (["the", number], ["les", NUMBERS.get(number, "")]),
    }[det]
    en = en_det + en_adj + [en_noun]
    head = len(en) - 1
    out = []
    for j, w in enumerate(fr_det):
        # A determiner needs the noun's gender and number; a cardinal does not.
        agrees = w not in NUMBERS.values() and w != "chaque"
        out.append(fr(w, [j] if j < len(en_det) else [], [head] if agrees else []))
    first_adj = len(en_det)
    adj_fr = [fr(a.forms[g, plural], [first_adj + k], [head]) for k, a in enumerate(adjectives)]
    pre = [t for t, a in zip(adj_fr, adjectives, strict=True) if a.pre]
    post = [t for t, a in zip(adj_fr, adjectives, strict=True) if not a.pre][::-1]
    out += pre + [fr(noun.fr_pl if plural else noun.fr, [head])] + post
    return NP(Phrase(en, out), head, g, plural, noun.person)


def name_phrase(name: str) -> NP:
    return NP(words([name], [name]), 0, "m", False, True)


PREPOSITIONS = {
    "of": "de",
    "on": "sur",
    "about": "sur",
    "with": "avec",
    "for": "pour",
    "against": "contre",
    "without": "sans",
    "from": "de",
}


def with_pp(np: NP, prep: str, obj: NP) -> NP:
    """NP prep NP' → NP prép NP' (same order; "de le" contracts later)."""
    return NP(
        np.phrase + words([prep], [PREPOSITIONS[prep]]) + obj.phrase,
        np.head,
        np.gender,
        np.plural,
        np.person,
    )


def with_relative(np: NP, clause: Phrase) -> NP:
    return NP(np.phrase + clause, np.head, np.gender, np.plural, np.person)


TENSES = ("past", "present", "future")


def active(verb: Verb, tense: str, neg: bool, plural: bool, agree: int) -> Phrase:
    """The verb group of an active clause; ``agree`` = subject head (relative index)."""
    aux = "ont" if plural else "a"
    if tense == "past" and not neg:  # signed → a signé
        return Phrase([verb.en_past], [fr(aux, [0], [agree]), fr(verb.participle(), [0])])
    if tense == "past":  # did not sign → n' a pas signé
        return Phrase(
            ["did", "not", verb.en],
            [fr("ne", [1]), fr(aux, [0], [agree]), fr("pas", [1]), fr(verb.participle(), [2])],
        )
    if tense == "present" and not neg:  # signs → signe
        return Phrase(
            [verb.en if plural else verb.en_3sg], [fr(verb.present(plural), [0], [agree])]
        )
    if tense == "present":  # does not sign → ne signe pas
        return Phrase(
            ["do" if plural else "does", "not", verb.en],
            [fr("ne", [1]), fr(verb.present(plural), [2], [0, agree]), fr("pas", [1])],
        )
    if not neg:  # will sign → signera
        return Phrase(["will", verb.en], [fr(verb.future(plural), [0, 1], [agree])])
    return Phrase(
        ["will", "not", verb.en],  # will not sign → ne signera pas
        [fr("ne", [1]), fr(verb.future(plural), [0, 2], [agree]), fr("pas", [1])],
    )


def passive(verb: Verb, tense: str, neg: bool, gender: str, plural: bool, agree: int) -> Phrase:
    """was signed → a été signé(e)(s): the participle agrees with the subject."""
    pp = fr(verb.participle(gender, plural), [1 + neg], [agree])
    if tense == "past":
        be, aux = ("were" if plural else "was"), ("ont" if plural else "a")
        en = [be, "not", verb.en_pp] if neg else [be, verb.en_pp]
        aux_fr, ete = fr(aux, [0], [agree]), fr("été", [0])
        fr_ = [fr("ne", [1]), aux_fr, fr("pas", [1]), ete, pp] if neg else [aux_fr, ete, pp]
        return Phrase(en, fr_)
    if tense == "present":
        be, aux = ("are" if plural else "is"), ("sont" if plural else "est")
        en = [be, "not", verb.en_pp] if neg else [be, verb.en_pp]
        aux_fr = fr(aux, [0], [agree])
        return Phrase(en, [fr("ne", [1]), aux_fr, fr("pas", [1]), pp] if neg else [aux_fr, pp])
    aux = "seront" if plural else "sera"
    if neg:  # will not be signed → ne sera pas signé
        pp = fr(verb.participle(gender, plural), [3], [agree])
        return Phrase(
            ["will", "not", "be", verb.en_pp],
            [fr("ne", [1]), fr(aux, [0, 2], [agree]), fr("pas", [1]), pp],
        )
    pp = fr(verb.participle(gender, plural), [2], [agree])
    return Phrase(["will", "be", verb.en_pp], [fr(aux, [0, 1], [agree]), pp])


def object_relative(
    verb: Verb, tense: str, neg: bool, subj: NP, antecedent: NP, agree: int
) -> Phrase:
    """that the minister signed → que le ministre a signée: after "que" the participle
    agrees with the antecedent (the preceding direct object).

    ``agree`` is the antecedent's head relative to "that"; the verb group starts
    ``1 + len(subject)`` words later, which shifts both agreement links."""
    offset = 1 + len(subj.phrase.en)  # "that" + the subject
    vp = active(verb, tense, neg, subj.plural, 1 + subj.head - offset)
    if tense == "past":
        vp.fr[-1] = fr(
            verb.participle(antecedent.gender, antecedent.plural),
            vp.fr[-1].sure,
            [agree - offset],
        )
    return words(["that"], ["que"]) + subj.phrase + vp


def place(city: str) -> Phrase:
    return words(["in", city], ["à", CITIES[city]])


def month_year(month: str, year: int) -> Phrase:
    return words(["in", month, str(year)], ["en", MONTHS[month], str(year)])


def day_month_year(day: int, month: str, year: int) -> Phrase:
    return words(["on", str(day), month, str(year)], ["le", str(day), MONTHS[month], str(year)])


def relative_time(which: str, unit: str) -> Phrase:
    """last year → l' année dernière (the adjective follows, the article agrees)."""
    fr_unit, g = {"year": ("année", "f"), "month": ("mois", "m"), "week": ("semaine", "f")}[unit]
    art = {"every": "chaque"}.get(which, "la" if g == "f" else "le")
    adj = {"last": "dernier", "next": "prochain"}.get(which)
    toks = [
        fr(art, [0] if which == "every" else [], [] if which == "every" else [1]),
        fr(fr_unit, [1]),
    ]
    if adj:
        toks.append(fr(lx.french_feminine(adj) if g == "f" else adj, [0], [1]))
    return Phrase([which, unit], toks)


CONJUNCTIONS = {
    "and": (["and"], ["et"]),
    "but": ([",", "but"], [",", "mais"]),
    "while": ([",", "while"], [",", "tandis", "que"]),
    "because": (["because"], ["parce", "que"]),
    "when": (["when"], ["quand"]),
}


def conjunction(word: str) -> Phrase:
    en, fr_words = CONJUNCTIONS[word]
    # The last English word (the conjunction itself) links to every French word after ",".
    toks = [fr(w, [en.index(w)] if w in en else [len(en) - 1]) for w in fr_words]
    return Phrase(list(en), toks)


# -- surface rules ----------------------------------------------------------------------

_NO_ELISION = frozenset({"onze", "huit"})


def _vowel(word: str) -> bool:
    return word[:1] in set("aeiouyéèêëàâîïôûh") and word not in _NO_ELISION


def _merge(a: Fr, b: Fr, text: str) -> Fr:
    return Fr(text, a.sure | b.sure, a.possible | b.possible)


def surface(tokens: list[Fr]) -> list[Fr]:
    """Elision (le → l', ne → n', de → d', que → qu', ce → cet) and contraction
    (de le → du, de les → des, à le → au, à les → aux); merged tokens keep both links."""
    out: list[Fr] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        nxt = tokens[i + 1].text if i + 1 < len(tokens) else ""
        if t.text in ("le", "la") and _vowel(nxt):
            t = Fr("l'", t.sure, t.possible)
        elif t.text == "ce" and _vowel(nxt):
            t = Fr("cet", t.sure, t.possible)
        elif (
            t.text in ("de", "à")
            and nxt in ("le", "les")
            and not (nxt == "le" and i + 2 < len(tokens) and _vowel(tokens[i + 2].text))
        ):
            contracted = {
                ("de", "le"): "du",
                ("de", "les"): "des",
                ("à", "le"): "au",
                ("à", "les"): "aux",
            }[t.text, nxt]
            out.append(_merge(t, tokens[i + 1], contracted))
            i += 2
            continue
        elif t.text in ("de", "ne", "que") and _vowel(nxt):
            t = Fr({"de": "d'", "ne": "n'", "que": "qu'"}[t.text], t.sure, t.possible)
        out.append(t)
        i += 1
    return out


def to_pair(phrase: Phrase) -> Pair:
    """Close a sentence with "." and turn its phrase into a Pair with absolute links."""
    phrase = phrase + words(["."], ["."])
    toks = surface(phrase.fr)
    n = len(phrase.en)
    sure, possible = set(), set()
    for j, t in enumerate(toks):
        assert all(0 <= i < n for i in t.sure | t.possible), f"dangling link in {t}"
        sure |= {(i, j) for i in t.sure}
        possible |= {(i, j) for i in t.sure | t.possible}
    return Pair(tuple(phrase.en), tuple(t.text for t in toks), frozenset(sure), frozenset(possible))


# -- random sentences --------------------------------------------------------------------


class Sampler:
    """Draws derivations from the grammar with a private ``random.Random``."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.things = sorted(THINGS)
        self.people = sorted(PEOPLE)
        self.adjs = sorted(ADJECTIVES)
        self.verbs = sorted(VERBS)

    def _adjectives(self) -> list[Adjective]:
        k = self.rng.choices((0, 1, 2), (0.5, 0.35, 0.15))[0]
        chosen = [ADJECTIVES[a] for a in self.rng.sample(self.adjs, k)]
        if sum(a.pre for a in chosen) > 1:  # at most one adjective before the noun
            chosen = chosen[:1]
        return chosen

    def np(self, person: bool, depth: int, in_pp: bool = False) -> NP:
        r = self.rng
        if person and r.random() < 0.2:
            return name_phrase(r.choice(NAMES))
        noun = (PEOPLE if person else THINGS)[r.choice(self.people if person else self.things)]
        plural = r.random() < 0.3
        dets = (
            ["the", "this", "our", "their", "number", "the number"] + ([] if in_pp else ["bare"])
            if plural
            else ["the", "the", "a", "this", "our", "their", "every"]
        )
        det = r.choice(dets)
        np = noun_phrase(noun, plural, det, self._adjectives(), number=r.choice(sorted(NUMBERS)))
        if r.random() < (0.35, 0.2, 0.0)[min(depth, 2)]:
            if r.random() < 0.6:
                prep = r.choice(sorted(PREPOSITIONS))
                np = with_pp(np, prep, self.np(r.random() < 0.3, depth + 1, in_pp=True))
            else:
                np = with_relative(np, self.relative(np, depth + 1))
        return np

    def relative(self, antecedent: NP, depth: int) -> Phrase:
        r = self.rng
        verb, tense, neg = VERBS[r.choice(self.verbs)], r.choice(TENSES), r.random() < 0.25
        agree = antecedent.head - len(antecedent.phrase.en) - 1  # relative to the verb group
        if antecedent.person:  # who signed the treaty → qui a signé le traité
            vp = active(verb, tense, neg, antecedent.plural, agree)
            # French negation turns "des" into "de": keep bare plurals out of negated objects.
            obj = self.np(r.random() < 0.2, depth, in_pp=neg)
            return words(["who"], ["qui"]) + vp + obj.phrase
        if r.random() < 0.5:  # that was signed → qui a été signé
            vp = passive(verb, tense, neg, antecedent.gender, antecedent.plural, agree)
            return words(["that"], ["qui"]) + vp
        subj = self.np(True, depth)
        return object_relative(verb, tense, neg, subj, antecedent, agree + 1)

    def time(self, tense: str) -> Phrase:
        r = self.rng
        month = r.choice(sorted(MONTHS))
        if tense == "past":
            year = r.randrange(1950, 2025)
            return r.choice(
                [
                    lambda: words(["yesterday"], ["hier"]),
                    lambda: relative_time("last", r.choice(["year", "month", "week"])),
                    lambda: month_year(month, year),
                    lambda: day_month_year(r.randrange(1, 29), month, year),
                    lambda: words(["in", str(year)], ["en", str(year)]),
                ]
            )()
        if tense == "present":
            return r.choice(
                [
                    lambda: words(["today"], ["aujourd'hui"]),
                    lambda: relative_time("every", r.choice(["year", "month", "week"])),
                ]
            )()
        return r.choice(
            [
                lambda: words(["tomorrow"], ["demain"]),
                lambda: relative_time("next", r.choice(["year", "month", "week"])),
            ]
        )()

    def clause(self) -> Phrase:
        r = self.rng
        person = r.random() < 0.55
        subj = self.np(person, 0)
        verb, tense, neg = VERBS[r.choice(self.verbs)], r.choice(TENSES), r.random() < 0.25
        agree = subj.head - len(subj.phrase.en)
        if person:
            out = subj.phrase + active(verb, tense, neg, subj.plural, agree)
            out = out + self.np(r.random() < 0.2, 1, in_pp=neg).phrase
        else:
            out = subj.phrase + passive(verb, tense, neg, subj.gender, subj.plural, agree)
            if r.random() < 0.4:
                out = out + words(["by"], ["par"]) + self.np(True, 1, in_pp=True).phrase
        if r.random() < 0.2:
            out = out + place(r.choice(sorted(CITIES)))
        if r.random() < 0.35:
            out = out + self.time(tense)
        return out

    def sentence(self) -> Pair:
        n = self.rng.choices((1, 2, 3, 4), (0.4, 0.3, 0.2, 0.1))[0]
        out = self.clause()
        for _ in range(n - 1):
            out = out + conjunction(self.rng.choice(sorted(CONJUNCTIONS))) + self.clause()
        return to_pair(out)


# -- the teaching examples (built from explicit derivations, so their gold is exact) -------


def _figure_3a() -> Pair:
    """the agreement on the european economic area was signed in august 1992 ."""
    area = noun_phrase(
        THINGS["area"], False, "the", [ADJECTIVES["european"], ADJECTIVES["economic"]]
    )
    subj = with_pp(noun_phrase(THINGS["agreement"], False, "the"), "on", area)
    vp = passive(VERBS["sign"], "past", False, "m", False, subj.head - len(subj.phrase.en))
    return to_pair(subj.phrase + vp + month_year("august", 1992))


def _negation() -> Pair:
    """the minister did not sign the treaty ."""
    subj = noun_phrase(PEOPLE["minister"], False, "the")
    vp = active(VERBS["sign"], "past", True, False, subj.head - len(subj.phrase.en))
    return to_pair(subj.phrase + vp + noun_phrase(THINGS["treaty"], False, "the").phrase)


def _long() -> Pair:
    """A 40+-word sentence: relative clauses, agreement, negation, a date."""
    law = noun_phrase(THINGS["law"], False, "the", [ADJECTIVES["constitutional"]])
    minister = noun_phrase(PEOPLE["minister"], False, "the", [ADJECTIVES["young"]])
    law = with_relative(
        law,
        object_relative(VERBS["sign"], "past", False, minister, law, law.head - len(law.phrase.en)),
    )
    vp1 = passive(
        VERBS["approve"], "past", False, law.gender, law.plural, law.head - len(law.phrase.en)
    )
    by = (
        words(["by"], ["par"])
        + noun_phrase(THINGS["parliament"], False, "the", [ADJECTIVES["european"]]).phrase
    )
    first = law.phrase + vp1 + by + day_month_year(3, "may", 1979)
    judges = noun_phrase(
        PEOPLE["judge"], True, "the number", [ADJECTIVES["federal"]], number="three"
    )
    vp2 = active(VERBS["accept"], "past", True, True, judges.head - len(judges.phrase.en))
    reports = with_pp(
        noun_phrase(THINGS["report"], True, "the", [ADJECTIVES["financial"]]),
        "of",
        noun_phrase(THINGS["bank"], False, "the", [ADJECTIVES["central"]]),
    )
    second = judges.phrase + vp2 + reports.phrase + place("brussels")
    return to_pair(first + conjunction("but") + second)


FIGURE_3A = _figure_3a()
EXAMPLES = {"Figure 3(a)": FIGURE_3A, "negation": _negation(), "long sentence": _long()}


# -- splits and lookup ------------------------------------------------------------------


def bucket(n_tokens: int) -> int:
    """Index of the source-length bucket (LENGTH_BUCKETS) for a sentence of n tokens."""
    for k, (lo, hi) in enumerate(LENGTH_BUCKETS):
        if lo <= n_tokens <= hi:
            return k
    return len(LENGTH_BUCKETS) - 1


def splits(
    seed: int = 0, n_train: int = 60000, n_valid: int = 1000, n_test: int = 2000
) -> dict[str, list[Pair]]:
    """Disjoint train / valid / test splits of unique English sentences, fixed by ``seed``.

    The test split is stratified: an equal share per source-length bucket, so the
    BLEU-by-length curve has the same support at every length. The teaching examples
    are never in train.
    """
    sampler = Sampler(seed)
    # An equal share per bucket; the first n_test mod B buckets take one more, so the
    # split holds exactly n_test (a quota rounded down never filled: the loop never ended).
    share, extra = divmod(n_test, len(LENGTH_BUCKETS))
    quota = [share + (i < extra) for i in range(len(LENGTH_BUCKETS))]
    test: list[list[Pair]] = [[] for _ in LENGTH_BUCKETS]
    valid, train = [], []
    seen = {p.src for p in EXAMPLES.values()}
    while len(train) < n_train or len(valid) < n_valid or sum(map(len, test)) < n_test:
        p = sampler.sentence()
        if len(p.src) > MAX_LEN or p.src in seen:
            continue
        seen.add(p.src)
        k = bucket(len(p.src))
        if len(test[k]) < quota[k]:
            test[k].append(p)
        elif len(valid) < n_valid:
            valid.append(p)
        elif len(train) < n_train:
            train.append(p)
    return {"train": train, "valid": valid, "test": [p for b in test for p in b]}


def gold(tokens: Sequence[str], pairs: Iterable[Pair] = ()) -> Pair | None:
    """The grammar's Pair for an English token sequence if it is one of the teaching
    examples or of ``pairs`` (e.g. sentences a page drew from the grammar); else None.
    A missing final "." is forgiven."""
    tokens = tuple(tokens)
    if tokens and tokens[-1] != ".":
        tokens = tokens + (".",)
    return next((p for p in (*EXAMPLES.values(), *pairs) if p.src == tokens), None)


def sample(seed: int) -> Pair:
    """One sentence drawn from the grammar (with its gold links), outside the splits' stream."""
    return Sampler(seed).sentence()


# -- text in and out ---------------------------------------------------------------------


def tokenize_en(text: str) -> list[str]:
    """Lower-cased word and punctuation tokens, as the grammar writes English."""
    return [t.lower() for t in tokenize(text)]


_CAPITALISED = frozenset(NAMES) | frozenset(CITIES.values()) | frozenset(CITIES)


def _detok(tokens: Sequence[str]) -> str:
    text = ""
    for t in tokens:
        t = t.capitalize() if t in _CAPITALISED else t
        glue = not text or text.endswith("'") or t in (".", ",")
        text += t if glue else " " + t
    return text[:1].upper() + text[1:]


def detokenize_fr(tokens: Sequence[str]) -> str:
    """["l'", "accord", "a", "été", "signé", "."] → "L'accord a été signé."."""
    return _detok(tokens)


def detokenize_en(tokens: Sequence[str]) -> str:
    return _detok(tokens)
