"""What the en→fr grammar model knows: its words, its constructions, and the nearest sentence
it can read.

The translation models are trained only on sentences of the synchronous grammar in
``engine.data.enfr``. ``coverage(text)`` reads a typed sentence before any translation:

- each word is *known* (a word form the grammar emits, or a day or year it writes) or not;
- the sentence is *covered* when the grammar could have generated it: a recogniser for the
  grammar's English side (the clause, noun-phrase, verb-group, time and coordination rules
  of ``enfr.Sampler``, with number and tense agreement) reads it to the end;
- punctuation the grammar does not write is read as what it does ("?" and "!" as ".", ";"
  and ":" as ","; quotes and brackets dropped), never as an unknown word;
- each unknown word gets in-vocabulary replacements, then ranked by how far the recogniser
  reads the sentence with the replacement in place. With an encoder (``meanings``: the
  process's one all-MiniLM-L6-v2, ``engine.analysis.grammar_meanings``) they are found by
  meaning:

  1. *synonym*: the contractions the grammar spells out ("didn't" → "did not"), pronouns as
     the people of a classroom, and a short hand-written map of everyday words ("read" →
     "examine"), inflected like the typed word ("wrote" → "drafted");
  2. *spelling*: for a word the encoder's tokenizer does not know whole (a typo:
     "minster"), the grammar words one or two edits away;
  3. *meaning*: in each role the typed word's form admits (a plural noun for "drinks", a
     past for "played"), the grammar words nearest in the encoder's space, for the roles
     whose nearest word is about as near as the nearest of all: the typed word's part of
     speech read from its meaning ("tea" → "cup", "bottle", not the name "eva").

  Ties in reading are broken in that order, then by closeness in meaning. Without an
  encoder (the engine alone, and bench/coverage.py's baseline), *spelling* is tried for
  every word and *role* takes each role's grammar word closest in spelling.

``PATTERNS`` are the grammar's constructions, each with one example pair built by the
grammar's own rules, so its French is exactly what the models were trained to produce.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from engine.data import enfr
from engine.errors import InputError
from engine.text import tokenize

DAYS = frozenset(str(d) for d in range(1, 29))  # the days and years Sampler.time writes
YEARS = frozenset(str(y) for y in range(1950, 2025))
NAMES = frozenset(enfr.NAMES)
NOUNS_SG = {n.en: n for n in (*enfr.THINGS.values(), *enfr.PEOPLE.values())}
NOUNS_PL = {n.en_pl: n for n in (*enfr.THINGS.values(), *enfr.PEOPLE.values())}
VERB_FORMS = {
    "base": {v.en: v for v in enfr.VERBS.values()},
    "3sg": {v.en_3sg: v for v in enfr.VERBS.values()},
    "past": {v.en_past: v for v in enfr.VERBS.values()},
    "pp": {v.en_pp: v for v in enfr.VERBS.values()},
}
SINGULAR_DETS = ("a", "an", "this", "every")
EITHER_DETS = ("the", "our", "their")
UNITS = ("year", "month", "week")
CONJUNCTIONS = tuple(tuple(en) for en, _ in enfr.CONJUNCTIONS.values())  # ("," , "but") …


@lru_cache(maxsize=1)
def known_words() -> frozenset[str]:
    """Every token the grammar writes: its words, its days and years, "." and ","."""
    return frozenset(enfr.english_words() | DAYS | YEARS | {".", ","})


# -- the recogniser -------------------------------------------------------------------------


class Reader:
    """Reads tokens with the grammar's rules; ``reached`` counts the tokens read before the
    rules failed (a hint for where a sentence leaves the grammar).

    Every rule returns all its readings from a position, each with the PATTERNS ids it used:
    noun phrases as (end, plural, person, ids), verb groups as (end, negated, tense, ids).
    """

    def __init__(self, tokens):
        self.t = tuple(tokens)
        self.n = len(self.t)
        self.reached = 0
        self._nps: dict = {}
        self._rests: dict = {}

    def at(self, i: int, words) -> bool:
        if i < self.n and self.t[i] in words:
            self.reached = max(self.reached, i + 1)
            return True
        return False

    def sentence(self) -> frozenset | None:
        """The ids of the patterns of a full reading, or None when the grammar has none."""
        return self._from(0) if self.n else None

    def _from(self, i: int) -> frozenset | None:
        if i not in self._rests:
            self._rests[i] = None
            for end, ids in self.clause(i):
                if end == self.n or (end == self.n - 1 and self.at(end, (".",))):
                    self._rests[i] = ids
                    break
                rest = self._after_conjunction(end)
                if rest is not None:
                    self._rests[i] = ids | rest | {"coordination"}
                    break
        return self._rests[i]

    def _after_conjunction(self, i: int) -> frozenset | None:
        for conj in CONJUNCTIONS:
            if all(self.at(i + k, (w,)) for k, w in enumerate(conj)):
                rest = self._from(i + len(conj))
                if rest is not None:
                    return rest
        return None

    def clause(self, i: int) -> list:
        """A person does something to a noun phrase (active); a thing has something done to
        it (passive, maybe "by" a person); then maybe a city, then maybe a time."""
        out = []
        for s_end, plural, person, s_ids in self.np(i, None, 0, False):
            if person:
                for v_end, neg, tense, v_ids in self.active(s_end, plural):
                    for o_end, _, _, o_ids in self.np(v_end, None, 1, neg):
                        out += self._tail(o_end, tense, s_ids | v_ids | o_ids)
                continue
            for v_end, _, tense, v_ids in self.passive(s_end, plural):
                out += self._tail(v_end, tense, s_ids | v_ids)
                # The sampler's agents are people; the shipped long example's is a parliament.
                if self.at(v_end, ("by",)):
                    for b_end, _, _, b_ids in self.np(v_end + 1, None, 1, True):
                        out += self._tail(b_end, tense, s_ids | v_ids | b_ids | {"by"})
        return out

    def _tail(self, i: int, tense: str, ids: frozenset) -> list:
        out = [(i, ids)]
        if self.at(i, ("in",)) and self.at(i + 1, enfr.CITIES):
            out.append((i + 2, ids | {"place"}))
        for start, start_ids in list(out):
            out += [(end, start_ids | {"time"}) for end in self.time(start, tense)]
        return out

    def np(self, i: int, person: bool | None, depth: int, in_pp: bool) -> list:
        """Noun phrases from ``i``: a name, or determiner, up to two adjectives and a noun,
        then (above depth 2) a prepositional phrase or a relative clause."""
        key = (i, person, depth, in_pp)
        if key not in self._nps:
            out = []
            if person is not False and self.at(i, NAMES):
                out.append((i + 1, False, True, frozenset()))
            for j, plural, ids in self._determiners(i, in_pp):
                for k in self._adjectives(j):
                    for end, pl, is_person in self._noun(k, plural, person):
                        found = (end, pl, is_person, ids | ({"adjectives"} if k > j else set()))
                        out.append(found)
                        if depth < 2:
                            out += self._attached(found, depth + 1)
            self._nps[key] = out
        return self._nps[key]

    def _determiners(self, i: int, in_pp: bool) -> list:
        """(position after it, plural required or None, ids) for each determiner at ``i``."""
        out = []
        if self.at(i, SINGULAR_DETS):
            out.append((i + 1, False, frozenset()))
        if self.at(i, ("these",)):
            out.append((i + 1, True, frozenset()))
        if self.at(i, EITHER_DETS):
            out.append((i + 1, None, frozenset()))
        if self.at(i, ("the",)) and self.at(i + 1, enfr.NUMBERS):
            out.append((i + 2, True, frozenset({"numbers"})))
        if self.at(i, enfr.NUMBERS):
            out.append((i + 1, True, frozenset({"numbers"})))
        if not in_pp:  # a bare plural ("des"); kept out of prepositional phrases
            out.append((i, True, frozenset()))
        return out

    def _adjectives(self, j: int) -> list[int]:
        out = [j]
        while len(out) < 3 and self.at(out[-1], enfr.ADJECTIVES):
            out.append(out[-1] + 1)
        return out

    def _noun(self, k: int, plural: bool | None, person: bool | None) -> list:
        out = []
        for table, pl in ((NOUNS_SG, False), (NOUNS_PL, True)):
            noun = table.get(self.t[k]) if k < self.n else None
            if noun and plural in (None, pl) and person in (None, noun.person):
                self.reached = max(self.reached, k + 1)
                out.append((k + 1, pl, noun.person))
        return out

    def _attached(self, found: tuple, depth: int) -> list:
        end, plural, person, ids = found
        out = []
        if self.at(end, enfr.PREPOSITIONS):
            for p_end, _, _, p_ids in self.np(end + 1, None, depth, True):
                out.append((p_end, plural, person, ids | p_ids | {"prepositions"}))
        for r_end, r_ids in self._relative(end, plural, person, depth):
            out.append((r_end, plural, person, ids | r_ids))
        return out

    def _relative(self, i: int, plural: bool, person: bool, depth: int) -> list:
        """who + verb group + object (people); that + passive, or that + a person + an
        active verb group with no object (things)."""
        out = []
        if person and self.at(i, ("who",)):
            for v_end, neg, _, v_ids in self.active(i + 1, plural):
                for o_end, _, _, o_ids in self.np(v_end, None, depth, neg):
                    out.append((o_end, v_ids | o_ids | {"who"}))
        if not person and self.at(i, ("that",)):
            for v_end, _, _, v_ids in self.passive(i + 1, plural):
                out.append((v_end, v_ids | {"that"}))
            for s_end, s_pl, _, s_ids in self.np(i + 1, True, depth, False):
                for v_end, _, _, v_ids in self.active(s_end, s_pl):
                    out.append((v_end, s_ids | v_ids | {"that-object"}))
        return out

    def verb(self, i: int, form: str) -> bool:
        return self.at(i, VERB_FORMS[form])

    def active(self, i: int, plural: bool) -> list:
        """signed · did not sign · signs / sign · does / do not sign · will (not) sign."""
        yes, no = frozenset({"active"}), frozenset({"active", "negation"})
        out = []
        if self.verb(i, "past"):
            out.append((i + 1, False, "past", yes))
        if self.at(i, ("did",)) and self.at(i + 1, ("not",)) and self.verb(i + 2, "base"):
            out.append((i + 3, True, "past", no))
        if self.verb(i, "base" if plural else "3sg"):
            out.append((i + 1, False, "present", yes))
        do = "do" if plural else "does"
        if self.at(i, (do,)) and self.at(i + 1, ("not",)) and self.verb(i + 2, "base"):
            out.append((i + 3, True, "present", no))
        if self.at(i, ("will",)):
            if self.verb(i + 1, "base"):
                out.append((i + 2, False, "future", yes))
            if self.at(i + 1, ("not",)) and self.verb(i + 2, "base"):
                out.append((i + 3, True, "future", no))
        return out

    def passive(self, i: int, plural: bool) -> list:
        """was / is (not) signed · will (not) be signed; "were" / "are" for plurals."""
        yes, no = frozenset({"passive"}), frozenset({"passive", "negation"})
        out = []
        for be, tense in (
            ("were" if plural else "was", "past"),
            ("are" if plural else "is", "present"),
        ):
            if self.at(i, (be,)):
                if self.verb(i + 1, "pp"):
                    out.append((i + 2, False, tense, yes))
                if self.at(i + 1, ("not",)) and self.verb(i + 2, "pp"):
                    out.append((i + 3, True, tense, no))
        if self.at(i, ("will",)):
            if self.at(i + 1, ("be",)) and self.verb(i + 2, "pp"):
                out.append((i + 3, False, "future", yes))
            if self.at(i + 1, ("not",)) and self.at(i + 2, ("be",)) and self.verb(i + 3, "pp"):
                out.append((i + 4, True, "future", no))
        return out

    def time(self, i: int, tense: str) -> list[int]:
        """Times that agree with the tense: yesterday, last week, in may 1992, on 3 may 1979,
        in 1992 · today, every week · tomorrow, next week."""
        out = []
        single = {"past": "yesterday", "present": "today", "future": "tomorrow"}[tense]
        if self.at(i, (single,)):
            out.append(i + 1)
        which = {"past": "last", "present": "every", "future": "next"}[tense]
        if self.at(i, (which,)) and self.at(i + 1, UNITS):
            out.append(i + 2)
        if tense == "past" and self.at(i, ("in",)):
            if self.at(i + 1, enfr.MONTHS) and self.at(i + 2, YEARS):
                out.append(i + 3)
            if self.at(i + 1, YEARS):
                out.append(i + 2)
        if tense == "past" and self.at(i, ("on",)) and self.at(i + 1, DAYS):
            if self.at(i + 2, enfr.MONTHS) and self.at(i + 3, YEARS):
                out.append(i + 4)
        return out


# -- replacements ---------------------------------------------------------------------------

# Everyday words → grammar words of the same part of speech and close meaning (lemmas; the
# typed word's form is kept). Written for classrooms: school things, family, food, verbs
# of reading and making. A word with no near meaning in the grammar is left out.
SYNONYMS = {
    "verb": dict(
        pair.split(":")
        for pair in """read:examine write:draft draw:design paint:decorate watch:observe
        see:observe look:observe study:examine teach:educate tell:inform say:announce
        give:bring take:carry make:create build:create cook:prepare bake:prepare love:like
        enjoy:appreciate clean:wash fix:repair start:launch begin:launch send:deliver
        receive:accept get:accept choose:select pick:select move:transport drink:taste
        call:contact phone:contact ask:consult lose:forget meet:visit correct:check
        mark:check grade:check test:check review:revise learn:examine open:close
        shut:close finish:close end:close buy:rent use:keep""".split()
    ),
    "noun": dict(
        pair.split(":")
        for pair in """notebook:book textbook:book essay:article desk:table classroom:room
        kid:child mum:mother mom:mother dad:father bike:bicycle movie:film test:exam
        quiz:exam homework:lesson exercise:lesson paper:document email:message mail:letter
        puzzle:game lunch:meal dinner:meal breakfast:meal sandwich:meal tablet:computer
        laptop:computer backpack:bag jacket:coat sweater:shirt cap:hat holiday:trip
        vacation:trip playground:park yard:garden town:village city:village home:house
        flat:house apartment:house store:shop supermarket:market drawing:painting
        board:screen blackboard:screen whiteboard:screen pen:tool pencil:tool
        teammate:friend classmate:friend headteacher:director principal:director
        cookie:cake pie:cake biscuit:cake sweet:cake candy:cake tune:song music:song
        image:picture drink:glass juice:glass water:glass milk:glass
        lab:room hall:room corridor:room""".split()
    ),
    "adjective": dict(
        pair.split(":")
        for pair in """nice:pretty beautiful:pretty lovely:pretty great:good excellent:good
        wonderful:good fine:good terrible:bad awful:bad little:small large:big tall:big
        new:modern old:ancient quick:fast loud:noisy silent:quiet glad:happy unhappy:sad
        upset:angry ill:sick favourite:popular favorite:popular kind:generous
        clever:creative smart:creative funny:strange interesting:curious boring:normal
        messy:broken hungry:tired cheap:free""".split()
    ),
}
# Whole-token rewrites: contractions spelled as the grammar writes them, possessives it has
# ("our", "their"), pronouns as the people of a classroom (the grammar has no pronouns;
# which of a singular and a plural fits is left to the ranking), and its one sentence end.
REWRITES = {
    "didn't": ("did not",),
    "doesn't": ("does not",),
    "don't": ("do not",),
    "won't": ("will not",),
    "wasn't": ("was not",),
    "weren't": ("were not",),
    "isn't": ("is not",),
    "aren't": ("are not",),
    "my": ("our",),
    "your": ("our",),
    "his": ("their",),
    "her": ("their", "the teacher"),
    "its": ("their",),
    "i": ("the teacher", "the pupils"),
    "me": ("the teacher", "the pupils"),
    "you": ("the pupils", "the pupil"),
    "we": ("the pupils",),
    "us": ("the pupils",),
    "they": ("the pupils", "the children"),
    "them": ("the pupils", "the children"),
    "he": ("the teacher", "the boy"),
    "him": ("the teacher", "the boy"),
    "she": ("the teacher", "the girl"),
    "now": ("today",),
    "!": (".",),
}
# Words that only colour a sentence: the grammar has no place for them, and a sentence
# without them says nearly the same ("explained the lesson again" → "explained the lesson").
REMOVABLE = frozenset(
    "please very too really again also just still already here there quite so then".split()
)
# Irregular English verbs an everyday sentence uses: base, past, participle.
IRREGULAR = """write:wrote:written read:read:read give:gave:given take:took:taken make:made:made
see:saw:seen buy:bought:bought tell:told:told say:said:said meet:met:met send:sent:sent
build:built:built draw:drew:drawn begin:began:begun teach:taught:taught get:got:got
lose:lost:lost choose:chose:chosen drink:drank:drunk shut:shut:shut sell:sold:sold
sing:sang:sung win:won:won leave:left:left sleep:slept:slept go:went:gone come:came:come
run:ran:run sit:sat:sat stand:stood:stood hear:heard:heard feel:felt:felt think:thought:thought
know:knew:known fly:flew:flown swim:swam:swum speak:spoke:spoken break:broke:broken
forget:forgot:forgotten pay:paid:paid wear:wore:worn throw:threw:thrown grow:grew:grown
fall:fell:fallen ride:rode:ridden drive:drove:driven eat:ate:eaten""".split()
IRREGULAR_FORMS = {
    word: (base, form)
    for entry in IRREGULAR
    for base, *rest in [entry.split(":")]
    for word, form in zip(rest, ("past", "pp"), strict=True)
}
REACH = 3  # the furthest edit distance any spelling search goes (see _nearest)
# The grammar's sampler writes sentences a little over the splits' MAX_LEN: read those too.
MAX_TOKENS = 2 * enfr.MAX_LEN
SUGGESTED = 8  # unknown words that get replacements; each one re-reads the whole sentence
# The order in which equal readings are offered (a typo's word before words of like meaning).
METHODS = ("synonym", "remove", "spelling", "meaning", "role", "punctuation")


@dataclass(frozen=True)
class Suggestion:
    text: str  # one grammar word, two ("did not"), or none (the word removed)
    how: str  # one of METHODS
    role: str = ""  # the role_tables / TIME_ROLES role a "meaning" or "role" word was taken from


def _lemmas(word: str) -> list[tuple[str, str]]:
    """(lemma, form) readings of an English word: form "base", "s" (plural or third person),
    "ed" (regular past or participle), "past" or "pp" (irregular)."""
    out = [(word, "base")]
    if word in IRREGULAR_FORMS:
        out.append(IRREGULAR_FORMS[word])
    for suffix, form, stems in (
        ("ies", "s", ("y",)),
        ("es", "s", ("",)),
        ("s", "s", ("",)),
        ("ied", "ed", ("y",)),
        ("ed", "ed", ("", "e")),
    ):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            out += [(word[: -len(suffix)] + stem, form) for stem in stems]
            if form == "ed" and word[-3:-2] == word[-4:-3]:  # stopped → stop
                out.append((word[:-3], "ed"))
    return out


def _inflect(part: str, lemma: str, form: str) -> list[str]:
    """``lemma`` (a grammar word) in the form the typed word had."""
    if part == "verb":
        v = enfr.VERBS[lemma]
        return {
            "base": [v.en],
            "s": [v.en_3sg],
            "ed": [v.en_past, v.en_pp],
            "past": [v.en_past],
            "pp": [v.en_pp],
        }[form]
    if part == "noun":
        n = NOUNS_SG[lemma]
        return {"base": [n.en], "s": [n.en_pl]}.get(form, [])
    return [lemma] if form == "base" else []


def _synonyms(word: str) -> list[str]:
    if word in REWRITES:
        return list(REWRITES[word])
    out = []
    for lemma, form in _lemmas(word):
        for part, table in SYNONYMS.items():
            if lemma in table:
                out += _inflect(part, table[lemma], form)
    return list(dict.fromkeys(out))


def distance(a: str, b: str, cap: int | None = None) -> int:
    """Edit distance with transpositions (optimal string alignment): "teh" → "the" is 1.

    With ``cap``, any distance over it comes back as ``cap + 1``, and the cost is bounded by
    ``len(a) × (2·cap + 1)`` whatever the words: an alignment that strays more than ``cap``
    cells off the diagonal already pays more than ``cap`` edits, so only that band is
    filled, and words whose lengths differ by more than ``cap`` are not aligned at all."""
    if cap is None:
        cap = len(a) + len(b)  # no distance exceeds it: the band is the whole table
    elif abs(len(a) - len(b)) > cap:
        return cap + 1
    over = cap + 1  # stands for every cell outside the band (their distance exceeds cap)
    prev2, prev = [], [j if j <= cap else over for j in range(len(b) + 1)]
    for i, ca in enumerate(a, 1):
        row = [i if i <= cap else over] + [over] * len(b)
        for j in range(max(1, i - cap), min(len(b), i + cap) + 1):
            cb = b[j - 1]
            cost = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, prev2[j - 2] + 1)
            row[j] = min(cost, over)
        if min(row) > cap:
            return over
        prev2, prev = prev, row
    return prev[-1]


def _nearest(word: str, candidates, k: int, within: int | None = None) -> list[str]:
    """The ``k`` candidates closest in spelling (ties alphabetical), within ``within``.

    Without a bound, words within 3 letters of its length are scored first (the distance
    is at least the length difference), all of them only when none is."""
    limit = within if within is not None else REACH
    near = sorted(c for c in candidates if abs(len(c) - len(word)) <= limit) or sorted(candidates)
    best: list[tuple[int, str]] = []  # the k best so far, (distance, word)
    for c in near:
        cap = best[-1][0] if len(best) == k else within
        d = distance(word, c, cap)
        if cap is None or d <= cap:
            best = sorted([*best, (d, c)])[:k]
    return [c for d, c in best if within is None or d <= within]


@lru_cache(maxsize=1)
def longest_word() -> int:
    """Letters in the grammar's longest word: a typed word far longer is near none of them."""
    return max(map(len, known_words()))


@lru_cache(maxsize=1)
def _spelling_vocabulary() -> tuple[str, ...]:
    return tuple(sorted(w for w in enfr.english_words() if w.isalpha()))


@lru_cache(maxsize=1)
def role_tables() -> dict[str, tuple[str, ...]]:
    """The grammar's words by part of speech and form, for replacements that keep the role;
    people first: an unknown subject is more often someone (a name) than something."""
    things, people = enfr.THINGS.values(), enfr.PEOPLE.values()
    return {
        "person": tuple(n.en for n in people),
        "name": tuple(enfr.NAMES),
        "people": tuple(n.en_pl for n in people),
        "thing": tuple(n.en for n in things),
        "things": tuple(n.en_pl for n in things),
        "adjective": tuple(enfr.ADJECTIVES),
        **{f"verb-{form}": tuple(table) for form, table in VERB_FORMS.items()},
        "city": tuple(enfr.CITIES),
        "preposition": tuple(enfr.PREPOSITIONS),
        "determiner": (*SINGULAR_DETS, *EITHER_DETS, "these"),
        "end": (".",),
    }


def _candidates(word: str, proper: bool) -> tuple[Suggestion, ...]:
    """Every replacement worth ranking without an encoder; a ``proper`` noun (capitalised
    inside a sentence) is replaced by a name or a city only."""
    found = [Suggestion(s, "synonym") for s in _synonyms(word)]
    if word in REMOVABLE:
        found.append(Suggestion("", "remove"))
    if len(word) > longest_word() + REACH:
        return tuple(found)  # no grammar word is near it in spelling: nothing to search
    found += [Suggestion(s, "spelling") for s in _misspelled(word)]
    for role, words in role_tables().items():
        if not proper or role in ("name", "city"):
            found += [Suggestion(s, "role", role) for s in _nearest(word, words, 1)]
    return tuple(found)


def _misspelled(word: str) -> list[str]:
    """Grammar words one edit from a short typed word, two from a longer one."""
    if not word.isalpha() or len(word) <= 2:
        return []
    return _nearest(word, _spelling_vocabulary(), 3, within=1 if len(word) <= 4 else 2)


def _ranked(tokens: list[str], i: int, candidates, k: int = 3) -> tuple[Suggestion, ...]:
    """``candidates`` for ``tokens[i]``, best first: the sentence read to the end, then read
    further, then by method (METHODS order), then by closeness in meaning (when scored),
    keeping the candidates' order. ``candidates`` holds (suggestion, closeness) pairs."""
    scored = {}
    for order, (s, close) in enumerate(candidates):
        if s.text in scored:
            continue
        words = s.text.split()
        reader = Reader([*tokens[:i], *words, *tokens[i + 1 :]])
        full = reader.sentence() is not None
        reach = reader.reached - (len(words) - 1 if reader.reached > i else 0)
        scored[s.text] = ((not full, -reach, METHODS.index(s.how), -close, order), s)
    return tuple(s for _, s in sorted(scored.values(), key=lambda x: x[0])[:k])


# -- meaning --------------------------------------------------------------------------------


class Encoder(Protocol):
    """What the meaning search asks of a sentence encoder: unit vectors ``[N, d]`` for texts,
    and its tokenizer's vocabulary (``engine.analysis.retrieval.embedder()``: an
    all-MiniLM-L6-v2, whose ``model.tokenizer`` is a HuggingFace tokenizer)."""

    model: Any

    def embed(self, texts) -> np.ndarray: ...


# The grammar's time words, searched beside role_tables' roles: an everyday time word is
# nearest one of them ("morning" → "today", "January" is one).
TIME_ROLES = {
    "time": ("yesterday", "today", "tomorrow"),
    "unit": UNITS,
    "month": tuple(enfr.MONTHS),
}
# The roles a typed word's form (``_lemmas``) admits: its part of speech as its ending shows
# it. Every word has a "base" reading ("bus" is not a plural); "-s" adds plural nouns and
# third-person verbs, "-ed" pasts and participles (and adjectives: "tired").
FORM_ROLES = {
    "base": (
        *("person", "people", "name", "thing", "things", "adjective", "verb-base"),
        *("city", "preposition", "determiner", *TIME_ROLES),
    ),
    "s": ("people", "things", "verb-3sg"),
    "ed": ("verb-past", "verb-pp", "adjective"),
    "past": ("verb-past",),
    "pp": ("verb-pp", "adjective"),
}
NEAREST = 2  # words per role closest in meaning, then ranked by how far the sentence reads
# Cosine below the best role's nearest word at which a role no longer fits. Measured on the
# 50 everyday sentences (bench/coverage.py's one-click share): 0.03 → 40 %, 0.05 → 42 %,
# 0.07 → 44 %, 0.1 and 0.15 → 46 %, 0.2 → 48 % but names come in ("tea" → "emma").
MARGIN = 0.1


@dataclass(frozen=True, eq=False)
class Meanings:
    """The grammar's words as an encoder's unit vectors, by role: what the meaning search
    compares a typed word with."""

    encoder: Encoder
    # Whole words the encoder's tokenizer knows: a typed word outside it that is near a
    # grammar word in spelling is taken for a typo ("minster", "techer"; not "tea" → "ten").
    dictionary: frozenset[str]
    vectors: np.ndarray  # [N, d] unit rows, one per word of meaning_words()
    row: dict[str, int]  # grammar word → its row
    roles: dict[str, tuple[tuple[str, ...], np.ndarray]]  # role → (words, their [n, d] rows)

    def nearest(self, vector: np.ndarray, roles, k: int = NEAREST) -> list:
        """(suggestion, cosine) for the ``k`` grammar words nearest ``vector`` in each of
        ``roles`` whose nearest word is within MARGIN of the nearest of all: the typed
        word's part of speech, read from where its meaning lies ("tea" among things, not
        names)."""
        cos = {role: self.roles[role][1] @ vector for role in roles}  # role → (n,)
        best = max(float(c.max()) for c in cos.values())
        out = []
        for role, c in cos.items():
            if c.max() >= best - MARGIN:
                words = self.roles[role][0]
                for j in np.argsort(-c, kind="stable")[:k]:
                    out.append((Suggestion(words[j], "meaning", role), float(c[j])))
                    if role in ("thing", "person"):  # "tea" → "the cup" where one is needed
                        out.append((Suggestion(f"the {words[j]}", "meaning", role), float(c[j])))
        return out


def _meaning_tables() -> dict[str, tuple[str, ...]]:
    return {r: w for r, w in role_tables().items() if r != "end"} | TIME_ROLES


@lru_cache(maxsize=1)
def meaning_words() -> tuple[str, ...]:
    """The texts an encoder embeds for the meaning search: every grammar word, each form on
    its own ("sold" is nearest "claimed", not "claim"; measured: 46 % one-click coverage with
    every form, 44 % with lemmas alone)."""
    return tuple(
        sorted({w for ws in _meaning_tables().values() for w in ws} | set(_spelling_vocabulary()))
    )


def meanings(encoder: Encoder, vectors: np.ndarray | None = None) -> Meanings:
    """The meaning search over ``encoder``'s space: ``vectors`` are its embeddings of
    ``meaning_words()`` (≈ 1,600 texts, ≈ 2.5 s of one core: a caller keeps them, e.g.
    ``engine.analysis.grammar_meanings``), computed here when not given."""
    words = meaning_words()
    if vectors is None:
        vectors = encoder.embed(list(words))
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.shape[0] != len(words):
        raise ValueError(f"{vectors.shape[0]} vectors for {len(words)} grammar words")
    row = {w: i for i, w in enumerate(words)}
    roles = {r: (ws, vectors[[row[w] for w in ws]]) for r, ws in _meaning_tables().items()}
    dictionary = frozenset(w for w in encoder.model.tokenizer.get_vocab() if w.isalpha())
    return Meanings(encoder, dictionary, vectors, row, roles)


def _roles(word: str, proper: bool) -> tuple[str, ...]:
    """The roles ``word``'s form admits: a name or a city for a ``proper`` noun; an inflected
    form's roles alone when its ending reads as an inflection ("drinks", "played", "sold"),
    else every reading's."""
    if proper:
        return ("name", "city")
    forms = dict.fromkeys(form for _, form in _lemmas(word))
    if word.endswith(("ss", "us", "is")):
        forms.pop("s", None)  # "glass", "bus", "this": not plurals
    if len(forms) > 1 and len(word) > 4:
        del forms["base"]  # a regular inflection; a short word ("bed", "news") keeps its base
    return tuple(dict.fromkeys(role for form in forms for role in FORM_ROLES[form]))


def _by_meaning(word: str, proper: bool, vector, m: Meanings) -> list:
    """(suggestion, closeness) pairs: the rewrites and removals, the grammar words nearest in
    meaning (cosine) in every role the word's form admits, and, for a word the encoder does
    not know, the grammar words one or two edits away (closer with fewer edits)."""
    found = [(Suggestion(s, "synonym"), 1.0) for s in _synonyms(word)]
    if word in REMOVABLE:
        found.append((Suggestion("", "remove"), 0.0))
    if vector is None:
        return found
    if word not in m.dictionary:  # a typo: the fewest edits first ("minster" → "minister")
        found += [(Suggestion(s, "spelling"), -distance(word, s)) for s in _misspelled(word)]
    return found + m.nearest(vector, _roles(word, proper))


# -- the answer -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Word:
    text: str  # as the models read it (lower-cased)
    known: bool
    # In-vocabulary replacements, best first; for punctuation the grammar does not write
    # (known: it never counts as an unknown word), the one it does, or none.
    suggestions: tuple[Suggestion, ...] = ()


@dataclass(frozen=True)
class Coverage:
    """What the grammar makes of a typed sentence, before any model reads it."""

    words: tuple[Word, ...]
    covered: bool  # the grammar generates this sentence, its punctuation read as it writes it
    read: int  # tokens its rules read before failing (all of them when covered)
    patterns: tuple[str, ...]  # PATTERNS ids of the reading, in PATTERNS order

    @property
    def tokens(self) -> tuple[str, ...]:
        return tuple(w.text for w in self.words)

    @property
    def unknown(self) -> list[str]:
        return list(dict.fromkeys(w.text for w in self.words if not w.known))

    @property
    def complete(self) -> bool:
        """Every unknown word has a replacement: ``replaced()`` leaves none."""
        return all(w.known or w.suggestions for w in self.words)

    def replaced(self) -> tuple[str, ...]:
        """The tokens with every word that has suggestions (the unknown words, and
        punctuation the grammar writes otherwise) replaced by its first one."""
        out: list[str] = []
        for w in self.words:
            out += w.suggestions[0].text.split() if w.suggestions else [w.text]
        return tuple(out)


# Punctuation the grammar does not write, read as what it does: a question or an exclamation
# ends a sentence as "." does; any other mark (quotes, brackets, dashes) is dropped.
PUNCTUATION = {"?": ".", "!": ".", ";": ",", ":": ","}


def _punctuation(token: str) -> bool:
    return not any(c.isalnum() for c in token)


def _read_as(token: str, known) -> list[str]:
    """A typed token as the grammar reads it: itself, the grammar's punctuation, or nothing."""
    if token in known or not _punctuation(token):
        return [token]
    return [PUNCTUATION[token]] if token in PUNCTUATION else []


def coverage(text: str, meanings: Callable[[], Meanings] | None = None) -> Coverage:
    """Known words, covered construction and replacements for ``text`` (see the module).

    With ``meanings`` (called only once a word is unknown, so an encoder loads on first
    need), replacements are found by meaning; without it, by spelling and role."""
    typed = tokenize(text)
    if len(typed) > MAX_TOKENS:  # the recogniser's tables grow with the length
        raise InputError("text.too_many_tokens", n=len(typed), limit=MAX_TOKENS)
    tokens = [w.lower() for w in typed]  # as enfr.tokenize_en, keeping the capitals apart
    known = known_words()
    parts = [_read_as(t, known) for t in tokens]  # becomes each token's replacement
    reader = Reader([t for p in parts for t in p])
    ids = reader.sentence()
    ends = np.cumsum([len(p) for p in parts])  # where each typed token ends in what was read
    m, vectors = _vectors(tokens, known, meanings) if meanings else (None, {})
    words = []
    for i, tok in enumerate(tokens):
        if tok in known:
            words.append(Word(tok, True))
            continue
        if _punctuation(tok):
            words.append(Word(tok, True, (Suggestion(" ".join(parts[i]), "punctuation"),)))
            continue
        if sum(not w.known for w in words) >= SUGGESTED:
            words.append(Word(tok, False))
            continue
        # Left to right, each earlier unknown word already replaced by its first suggestion.
        at = sum(len(p) for p in parts[:i])
        trial = [*(t for p in parts[:i] for t in p), tok, *(t for p in parts[i + 1 :] for t in p)]
        proper = i > 0 and typed[i][:1].isupper()
        if meanings is None:
            candidates = [(s, 0.0) for s in _candidates(tok, proper)]
        else:
            # A word the sentence already has says less: "a cup of tea" → not "of the cup".
            candidates = [
                (s, close)
                for s, close in _by_meaning(tok, proper, vectors.get(tok), m)
                if s.how != "meaning" or s.text.split()[-1] not in tokens
            ]
        found = _ranked(trial, at, candidates)
        if found:
            parts[i] = found[0].text.split()
        words.append(Word(tok, False, found))
    return Coverage(
        words=tuple(words),
        covered=ids is not None,
        read=len(tokens) if ids is not None else int(sum(e <= reader.reached for e in ends)),
        patterns=tuple(p for p in PATTERNS if ids and p in ids),
    )


def _vectors(tokens, known, meanings) -> tuple[Meanings | None, dict]:
    """The meanings and the vectors of the unknown words that get replacements, in one
    encoder call; no call when there are none. A word far longer than any grammar word is
    near none of them in meaning either, and is not embedded.

    Each word is embedded alone. Measured against embedding it in its sentence (each
    candidate's sentence compared with the typed one): the same 46 % of the 50 everyday
    sentences covered in one click, at 7× the CPU time, "fish" → "boat" rather than
    "animal"; so the word alone."""
    unknown = [t for t in dict.fromkeys(tokens) if t not in known and not _punctuation(t)]
    unknown = [t for t in unknown[:SUGGESTED] if len(t) <= longest_word() + REACH]
    if not unknown:
        return None, {}
    m = meanings()
    return m, dict(zip(unknown, m.encoder.embed(unknown), strict=True))


def detokenize(tokens) -> str:
    """Tokens as a sentence to type ("The minister did not sign the treaty.")."""
    return enfr.detokenize_en(list(tokens))


# -- what to browse: the vocabulary and the patterns -------------------------------------------

GLOSSES = {  # the grammar's other English words and their French
    "the": "le, la, les",
    "a": "un, une",
    "an": "un, une",
    "this": "ce, cet, cette",
    "these": "ces",
    "our": "notre, nos",
    "their": "leur, leurs",
    "every": "chaque",
    "who": "qui",
    "that": "qui, que",
    "by": "par",
    "in": "à, en",
    "on": "sur, le (date)",
    "not": "ne … pas",
    "did": "a, ont (passé composé)",
    "does": "(présent)",
    "do": "(présent)",
    "will": "(futur)",
    "be": "être",
    "was": "a été",
    "were": "ont été",
    "is": "est",
    "are": "sont",
    "yesterday": "hier",
    "today": "aujourd'hui",
    "tomorrow": "demain",
    "last": "dernier, dernière",
    "next": "prochain, prochaine",
    "year": "année",
    "month": "mois",
    "week": "semaine",
}


@dataclass(frozen=True)
class Entry:
    en: str
    forms: str  # the other English forms the grammar writes
    fr: str
    part: str  # thing, person, name, verb, adjective, city, number, month, word


@lru_cache(maxsize=1)
def vocabulary() -> tuple[Entry, ...]:
    """Every English word of the grammar with its French, by part of speech."""
    out = [Entry(n.en, n.en_pl, f"{n.fr} ({n.gender})", "thing") for n in enfr.THINGS.values()]
    out += [Entry(n.en, n.en_pl, f"{n.fr} ({n.gender})", "person") for n in enfr.PEOPLE.values()]
    out += [
        Entry(v.en, ", ".join(dict.fromkeys((v.en_3sg, v.en_past, v.en_pp))), v.fr_inf, "verb")
        for v in enfr.VERBS.values()
    ]
    out += [
        Entry(a.en, "", " / ".join(dict.fromkeys(a.forms.values())), "adjective")
        for a in enfr.ADJECTIVES.values()
    ]
    out += [Entry(n, "", n, "name") for n in enfr.NAMES]
    for part, table in (("city", enfr.CITIES), ("number", enfr.NUMBERS), ("month", enfr.MONTHS)):
        out += [Entry(en, "", fr, part) for en, fr in table.items()]
    glosses = GLOSSES | {en: fr for en, fr in enfr.PREPOSITIONS.items()}
    glosses |= {
        en[-1]: " ".join(w for w in fr if w != ",") for en, fr in enfr.CONJUNCTIONS.values()
    }
    out += [Entry(en, "", fr, "word") for en, fr in glosses.items()]
    return tuple(out)


@dataclass(frozen=True)
class Pattern:
    id: str
    template: str  # the construction in the grammar's categories
    example: enfr.Pair  # built by the grammar's rules


def _np(noun: str, plural: bool = False, det: str = "the", adjs=(), number: str = ""):
    table = enfr.PEOPLE if noun in enfr.PEOPLE else enfr.THINGS
    return enfr.noun_phrase(table[noun], plural, det, [enfr.ADJECTIVES[a] for a in adjs], number)


def _active(subj, verb: str, tense: str, obj, neg: bool = False) -> enfr.Phrase:
    agree = subj.head - len(subj.phrase.en)
    vp = enfr.active(enfr.VERBS[verb], tense, neg, subj.plural, agree)
    return subj.phrase + vp + obj.phrase


def _passive(subj, verb: str, tense: str, neg: bool = False) -> enfr.Phrase:
    agree = subj.head - len(subj.phrase.en)
    verb_ = enfr.VERBS[verb]
    return subj.phrase + enfr.passive(verb_, tense, neg, subj.gender, subj.plural, agree)


def _examples() -> dict[str, enfr.Phrase]:
    """One sentence per construction, derived with the grammar's own rules."""
    song = _np("song")
    song_sung = enfr.with_relative(
        song,
        enfr.object_relative(
            enfr.VERBS["sing"], "past", False, _np("girl"), song, song.head - len(song.phrase.en)
        ),
    )
    girl = _np("girl")
    finder = enfr.with_relative(
        girl,
        enfr.words(["who"], ["qui"])
        + enfr.active(enfr.VERBS["find"], "past", False, False, -2)
        + _np("key").phrase,
    )
    letter = _np("letter")
    signed = enfr.with_relative(
        letter,
        enfr.words(["that"], ["qui"])
        + enfr.passive(enfr.VERBS["sign"], "past", False, letter.gender, False, -2),
    )
    report = enfr.with_pp(_np("report"), "on", _np("budget"))
    return {
        "active": _active(_np("teacher"), "like", "present", _np("book")),
        "negation": _active(_np("pupil", True), "sign", "past", _np("letter"), neg=True),
        "passive": _passive(_np("exam"), "cancel", "future"),
        "by": _passive(_np("lesson"), "prepare", "past")
        + enfr.words(["by"], ["par"])
        + _np("teacher").phrase,
        "adjectives": _active(_np("teacher"), "find", "past", _np("book", adjs=("small", "red"))),
        "numbers": _active(
            _np("pupil", True, "the number", number="three"),
            "visit",
            "past",
            _np("museum", det="every"),
        ),
        "prepositions": _passive(report, "approve", "past"),
        "who": _active(finder, "thank", "past", _np("teacher")),
        "that": _passive(signed, "publish", "future"),
        "that-object": _active(_np("pupil", True), "like", "present", song_sung),
        "place": _active(_np("teacher"), "visit", "past", _np("museum")) + enfr.place("paris"),
        "time": _active(_np("pupil", True), "visit", "future", _np("castle"))
        + enfr.relative_time("next", "week"),
        "coordination": _active(_np("teacher"), "explain", "past", _np("lesson"))
        + enfr.conjunction("and")
        + _active(_np("pupil", True), "copy", "past", _np("text")),
    }


TEMPLATES = {
    "active": "PERSON signed · signs · will sign THING",
    "negation": "did not · does not · do not · will not + VERB; was not · is not + VERB-ed",
    "passive": "THING was · is · will be + VERB-ed",
    "by": "THING was VERB-ed by PERSON",
    "adjectives": "the ADJECTIVE ADJECTIVE NOUN",
    "numbers": "the · a · this · these · our · their · every · NUMBER · the NUMBER + NOUN",
    "prepositions": "NOUN of · on · about · with · for · against · without · from + NOUN",
    "who": "PERSON who VERB NOUN",
    "that": "THING that was VERB-ed",
    "that-object": "THING that PERSON VERB-ed",
    "place": "… in CITY",
    "time": "yesterday · last week · in may 1992 · on 3 may 1979 · today · every week · "
    "tomorrow · next week (with the verb's tense)",
    "coordination": "CLAUSE and · , but · , while · because · when CLAUSE",
}


@lru_cache(maxsize=1)
def patterns() -> tuple[Pattern, ...]:
    examples = _examples()
    return tuple(Pattern(p, TEMPLATES[p], enfr.to_pair(examples[p])) for p in TEMPLATES)


PATTERNS = tuple(TEMPLATES)
