"""A small world simulator that writes bAbI-style stories (Weston et al. 2015, "Towards
AI-Complete Question Answering: A Set of Prerequisite Toy Tasks").

Actors move between locations and pick up and drop objects; each task narrates the
simulation in its own way and asks the questions its name promises. Every question
carries the line numbers of its *supporting facts*: the lines a reader must use to
answer it, which is what the Memory page compares the model's attention against.

The phrasing (names, verbs and their synonyms, places) follows the published tasks so
that a story reads like one of theirs; the stories are generated here, not copied.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Line:
    """One numbered line of a story: a fact, or a question with answer and support ids."""

    text: str
    answer: str | None = None
    support: tuple[int, ...] = ()

    @property
    def is_question(self) -> bool:
        return self.answer is not None


Episode = list[Line]

ACTORS = ("John", "Mary", "Sandra", "Daniel")
GENDER = {"John": "he", "Mary": "she", "Sandra": "she", "Daniel": "he"}
PLACES = ("bathroom", "hallway", "garden", "office", "bedroom", "kitchen")
OBJECTS = ("football", "apple", "milk")
MOVE = ("moved to", "went to", "journeyed to", "travelled to", "went back to")
GET = ("got", "picked up", "grabbed", "took")
DROP = ("dropped", "discarded", "put down", "left")
THEN = ("Then", "After that", "Afterwards", "Following that")
NUMBERS = ("none", "one", "two", "three")


class Story:
    """Numbered lines under construction; ``say`` and ``ask`` return the new line's id."""

    def __init__(self) -> None:
        self.lines: Episode = []

    def say(self, text: str) -> int:
        self.lines.append(Line(text))
        return len(self.lines)

    def ask(self, text: str, answer: str, support) -> int:
        self.lines.append(Line(text, answer, tuple(sorted(set(support)))))
        return len(self.lines)


class World(Story):
    """Actors, places and objects; each action is narrated and remembered with its line id.

    ``at[a] = (place, line)``: where actor a is and which line said so.
    ``held[o] = (actor, line)``: who holds object o and which line said so.
    ``lying[o] = (place, lines)``: where a dropped object lies and the lines that show it.
    ``trail[o] = [(place, line, got), …]``: the places object o has been, for "before"
    questions: ``line`` put it there (a move of whoever held it, or of whoever picked it
    up there) and ``got`` is the pick-up it was carried under (0 if none).
    """

    def __init__(self, rng: random.Random, actors=ACTORS, objects=OBJECTS) -> None:
        super().__init__()
        self.rng, self.actors, self.objects = rng, actors, objects
        self.at: dict[str, tuple[str, int]] = {}
        self.held: dict[str, tuple[str, int]] = {}
        self.lying: dict[str, tuple[str, tuple[int, ...]]] = {}
        self.trail: dict[str, list[tuple[str, int, int]]] = {}
        self.touched: dict[str, dict[str, int]] = {a: {} for a in actors}  # actor → obj → line

    def move(self, actor: str) -> int:
        here = self.at.get(actor, (None, 0))[0]
        place = self.rng.choice([p for p in PLACES if p != here])
        line = self.say(f"{actor} {self.rng.choice(MOVE)} the {place}.")
        self.at[actor] = (place, line)
        for obj, (holder, got) in self.held.items():
            if holder == actor:
                self.trail[obj].append((place, line, got))
        return line

    def carrying(self, actor: str) -> list[str]:
        """Objects an actor holds, in the order they were picked up."""
        mine = [(line, o) for o, (a, line) in self.held.items() if a == actor]
        return [o for _, o in sorted(mine)]

    def get(self, actor: str, obj: str) -> int:
        line = self.say(f"{actor} {self.rng.choice(GET)} the {obj}.")
        place, moved = self.at[actor]
        self.held[obj] = (actor, line)
        self.lying.pop(obj, None)
        trail = self.trail.setdefault(obj, [])
        if trail and trail[-1][0] == place:
            trail.pop()  # the newest evidence that it was here is this actor's move
        trail.append((place, moved, 0))
        self.touched[actor][obj] = line
        return line

    def drop(self, actor: str, obj: str) -> int:
        line = self.say(f"{actor} {self.rng.choice(DROP)} the {obj}.")
        place, moved = self.at[actor]
        del self.held[obj]
        self.lying[obj] = (place, (moved, line))
        self.touched[actor][obj] = line
        return line

    def act(self, *, objects: bool = True) -> None:
        """One random event; objects change hands only where the holder's place is known."""
        actor = self.rng.choice(self.actors)
        if not objects or actor not in self.at or self.rng.random() < 0.5:
            self.move(actor)
            return
        mine = self.carrying(actor)
        free = [
            o
            for o in self.objects
            if o not in self.held
            and self.lying.get(o, (self.at[actor][0],))[0] == self.at[actor][0]
        ]
        if mine and (not free or self.rng.random() < 0.4):
            self.drop(actor, self.rng.choice(mine))
        elif free:
            self.get(actor, self.rng.choice(free))
        else:
            self.move(actor)

    def where_object(self, obj: str) -> tuple[str, tuple[int, ...]] | None:
        """Where an object is now and the two lines that prove it (None if unknown)."""
        if obj in self.held:
            actor, got = self.held[obj]
            place, moved = self.at[actor]
            return place, (moved, got)
        return self.lying.get(obj)


def _episodes(make: Callable[[random.Random], Episode], n_questions: int, seed: int):
    """Stories from ``make`` until they hold ``n_questions`` questions in all."""
    rng = random.Random(seed)
    out, count = [], 0
    while count < n_questions:
        ep = make(rng)
        q = sum(line.is_question for line in ep)
        if count + q > n_questions:  # trim the last story's surplus questions
            keep, seen = [], 0
            for line in ep:
                seen += line.is_question
                if seen > n_questions - count:
                    break
                keep.append(line)
            ep, q = keep, n_questions - count
        out.append(ep)
        count += q
    return out


# -- tasks 1, 6: single supporting fact, yes/no ---------------------------------------
def task1(rng: random.Random) -> Episode:
    """Single supporting fact: "Where is Mary?" after two moves per question."""
    w = World(rng)
    for _ in range(5):
        for _ in range(2):
            w.move(rng.choice(ACTORS))
        actor = rng.choice(list(w.at))
        w.ask(f"Where is {actor}?", *_located(w, actor))
    return w.lines


def _located(w: World, actor: str) -> tuple[str, tuple[int]]:
    place, line = w.at[actor]
    return place, (line,)


def task6(rng: random.Random) -> Episode:
    """Yes/no questions: "Is John in the kitchen?" among moves and object noise."""
    w = World(rng)
    for _ in range(5):
        for _ in range(2):
            w.act()
        actor = rng.choice(list(w.at))
        place, (line,) = _located(w, actor)
        asked = place if rng.random() < 0.5 else rng.choice([p for p in PLACES if p != place])
        w.ask(f"Is {actor} in the {asked}?", "yes" if asked == place else "no", (line,))
    return w.lines


# -- tasks 2, 3: two and three supporting facts ---------------------------------------
def task2(rng: random.Random) -> Episode:
    """Two supporting facts: "Where is the football?" needs who holds it and where they are."""
    w = World(rng)
    for a in ACTORS:
        w.move(a)
    for _ in range(5):
        for _ in range(30):
            w.act()
            known = [o for o in OBJECTS if w.where_object(o)]
            if known and rng.random() < 0.35:
                break
        if known:
            obj = rng.choice(known)
            place, support = w.where_object(obj)
            w.ask(f"Where is the {obj}?", place, support)
    return w.lines


def task3(rng: random.Random) -> Episode:
    """Three supporting facts: "Where was the apple before the kitchen?"."""
    w = World(rng)
    for a in ACTORS:
        w.move(a)
    for _ in range(4):
        for _ in range(40):
            w.act()
            ready = [o for o in OBJECTS if _before(w, o)]
            if ready and rng.random() < 0.4:
                break
        if ready:
            obj = rng.choice(ready)
            here, before, support = _before(w, obj)
            w.ask(f"Where was the {obj} before the {here}?", before, support)
    return w.lines


def _before(w: World, obj: str):
    """(current place, previous place, support) when "before the <place>" is unambiguous."""
    trail = w.trail.get(obj, [])
    if len(trail) < 2 or obj not in w.held:
        return None
    (before, line_b, _), (here, line_h, got) = trail[-2], trail[-1]
    if got == 0 or [p for p, _, _ in trail].count(here) > 1:
        return None
    return here, before, (line_b, got, line_h)


# -- task 4: two-argument relations ----------------------------------------------------
OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east"}
ROOMS = ("kitchen", "office", "bedroom", "bathroom", "garden", "hallway")


def task4(rng: random.Random) -> Episode:
    """Two-argument relations (subject vs. object): "The office is north of the bedroom."
    → "What is north of the bedroom?" office / "What is the office north of?" bedroom."""
    s = Story()
    a, b, c = rng.sample(ROOMS, 3)
    d1, d2 = rng.choice(sorted(OPPOSITE)), rng.choice(sorted(OPPOSITE))
    shape = rng.choice(("chain", "same object", "same subject"))
    if shape != "chain" and d1 == d2:  # two rooms north of one room: ambiguous
        d2 = OPPOSITE[d1]
    second = {"chain": (b, d2, c), "same object": (c, d2, b), "same subject": (a, d2, c)}[shape]
    facts = [(a, d1, b), second]
    rng.shuffle(facts)
    lines = [s.say(f"The {x} is {d} of the {y}.") for x, d, y in facts]
    (x, d, y), line = rng.choice(list(zip(facts, lines, strict=True)))
    if rng.random() < 0.5:
        s.ask(f"What is {d} of the {y}?", x, (line,))
    else:
        s.ask(f"What is the {x} {d} of?", y, (line,))
    return s.lines


# -- tasks 7, 8: counting, lists -------------------------------------------------------
def _holdings(rng: random.Random, ask: Callable[[World, str], None]) -> Episode:
    w = World(rng)
    for a in ACTORS:
        w.move(a)
    for _ in range(5):
        for _ in range(12):
            w.act()
            busy = [a for a in ACTORS if w.touched[a]]
            if busy and rng.random() < 0.3:
                break
        if busy:
            ask(w, rng.choice(busy))
    return w.lines


def task7(rng: random.Random) -> Episode:
    """Counting: "How many objects is Mary carrying?"."""

    def ask(w: World, actor: str) -> None:
        n = len(w.carrying(actor))
        w.ask(f"How many objects is {actor} carrying?", NUMBERS[n], w.touched[actor].values())

    return _holdings(rng, ask)


def task8(rng: random.Random) -> Episode:
    """Lists/sets: "What is Mary carrying?" → "apple,milk" (in the order picked up)."""

    def ask(w: World, actor: str) -> None:
        answer = ",".join(w.carrying(actor)) or "nothing"
        w.ask(f"What is {actor} carrying?", answer, w.touched[actor].values())

    return _holdings(rng, ask)


# -- tasks 9, 10: negation, indefinite knowledge ---------------------------------------
PEOPLE = ("Bill", "Fred", "Julie", "Mary")
TOWN = ("school", "park", "office", "kitchen", "cinema", "bedroom")


def _beliefs(
    rng: random.Random,
    tell: Callable[[Story, str], tuple[str, ...]],
    answer: Callable[[tuple[str, ...], str], str],
) -> Episode:
    """Facts about people; ``tell`` narrates one and returns what it says (places or "-place")."""
    s, last = Story(), {}
    for _ in range(5):
        for _ in range(2):
            who = rng.choice(PEOPLE)
            last[who] = (tell(s, who), len(s.lines))
        who = rng.choice(list(last))
        said, line = last[who]
        # After "not in X" only X has an answer; otherwise ask a place said, or any place.
        negated = said[0].startswith("-")
        asked = said[0][1:] if negated else rng.choice([*said, rng.choice(TOWN)])
        s.ask(f"Is {who} in the {asked}?", answer(said, asked), (line,))
    return s.lines


def task9(rng: random.Random) -> Episode:
    """Simple negation: "Mary is no longer in the office." → "Is Mary in the office?" no."""

    def tell(s: Story, who: str) -> tuple[str, ...]:
        place = rng.choice(TOWN)
        if rng.random() < 0.4:
            s.say(f"{who} is {rng.choice(('no longer', 'not'))} in the {place}.")
            return (f"-{place}",)
        s.say(f"{who} {rng.choice(('is in', 'travelled to', 'went to'))} the {place}.")
        return (place,)

    def answer(said: tuple[str, ...], asked: str) -> str:
        return "yes" if said == (asked,) else "no"

    return _beliefs(rng, tell, answer)


def task10(rng: random.Random) -> Episode:
    """Indefinite knowledge: "Julie is either in the park or the school." → maybe."""

    def tell(s: Story, who: str) -> tuple[str, ...]:
        if rng.random() < 0.5:
            p, q = rng.sample(TOWN, 2)
            s.say(f"{who} is either in the {p} or the {q}.")
            return (p, q)
        p = rng.choice(TOWN)
        s.say(f"{who} {rng.choice(('is in', 'travelled to', 'went to'))} the {p}.")
        return (p,)

    def answer(said: tuple[str, ...], asked: str) -> str:
        if asked not in said:
            return "no"
        return "yes" if len(said) == 1 else "maybe"

    return _beliefs(rng, tell, answer)


# -- tasks 11, 12, 13: coreference, conjunction ----------------------------------------
def task11(rng: random.Random) -> Episode:
    """Basic coreference: "Daniel went to the kitchen. Then he journeyed to the garden."."""
    s, at = Story(), {}
    for _ in range(5):
        actor = rng.choice(ACTORS)
        place = rng.choice(PLACES)
        named = s.say(f"{actor} {rng.choice(MOVE)} the {place}.")
        at[actor] = (place, (named,))
        place = rng.choice([p for p in PLACES if p != place])
        line = s.say(f"{rng.choice(THEN)} {GENDER[actor]} {rng.choice(MOVE)} the {place}.")
        at[actor] = (place, (named, line))
        who = rng.choice(list(at))
        s.ask(f"Where is {who}?", at[who][0], at[who][1])
    return s.lines


def task12(rng: random.Random) -> Episode:
    """Conjunction: "Mary and Daniel went to the bathroom." → "Where is Daniel?"."""
    s, at = Story(), {}
    for _ in range(5):
        for _ in range(2):
            pair = rng.sample(ACTORS, 2)
            place = rng.choice(PLACES)
            line = s.say(f"{pair[0]} and {pair[1]} {rng.choice(MOVE)} the {place}.")
            for a in pair:
                at[a] = (place, (line,))
        who = rng.choice(list(at))
        s.ask(f"Where is {who}?", *at[who])
    return s.lines


def task13(rng: random.Random) -> Episode:
    """Compound coreference: "Sandra and John went to the office. Then they went to the garden."."""
    s, at = Story(), {}
    for _ in range(5):
        pair = rng.sample(ACTORS, 2)
        place = rng.choice(PLACES)
        named = s.say(f"{pair[0]} and {pair[1]} {rng.choice(MOVE)} the {place}.")
        place = rng.choice([p for p in PLACES if p != place])
        line = s.say(f"{rng.choice(THEN)} they {rng.choice(MOVE)} the {place}.")
        for a in pair:
            at[a] = (place, (named, line))
        who = rng.choice(list(at))
        s.ask(f"Where is {who}?", *at[who])
    return s.lines


# -- tasks 15, 16: deduction, induction ------------------------------------------------
SPECIES = {"mouse": "mice", "sheep": "sheep", "wolf": "wolves", "cat": "cats"}
PETS = ("Gertrude", "Winona", "Jessica", "Emily")


def task15(rng: random.Random) -> Episode:
    """Basic deduction: "Sheep are afraid of wolves. Gertrude is a sheep." → wolf."""
    s = Story()
    fears = {k: rng.choice([o for o in SPECIES if o != k]) for k in SPECIES}
    kind = {name: rng.choice(list(SPECIES)) for name in PETS}
    facts = [("fear", k) for k in SPECIES] + [("is", n) for n in PETS]
    rng.shuffle(facts)
    line_of = {}
    for what, x in facts:
        if what == "fear":
            text = f"{SPECIES[x].capitalize()} are afraid of {SPECIES[fears[x]]}."
        else:
            text = f"{x} is a {kind[x]}."
        line_of[x] = s.say(text)
    for name in rng.sample(PETS, 4):
        k = kind[name]
        s.ask(f"What is {name} afraid of?", fears[k], (line_of[name], line_of[k]))
    return s.lines


ANIMALS = ("swan", "lion", "frog", "rhino")
COLOURS = ("white", "gray", "yellow", "green")
NAMES16 = ("Lily", "Bernhard", "Greg", "Julius", "Brian")


def task16(rng: random.Random) -> Episode:
    """Basic induction: "Lily is a swan. Lily is white. Greg is a swan." → Greg is white.

    As the published generator does it: each animal has its own colour, each of five
    names is an animal, and the asked-about name shares its animal with at least one
    other. Every name's "is a <animal>" and every other name's "is <colour>" are told
    in a random order (a colour may come before its name's animal); the supporting
    facts are the asked name's animal and both sentences of every name like it.
    """
    s = Story()
    colour = dict(zip(ANIMALS, rng.sample(COLOURS, 4), strict=True))
    *seen, target = rng.sample(NAMES16, 5)
    kind = {n: rng.choice(ANIMALS) for n in seen}
    # Redrawn until shared, in the original: uniform over the animals the others are.
    kind[target] = rng.choice([a for a in ANIMALS if a in kind.values()])
    facts = [(n, "kind") for n in (*seen, target)] + [(n, "colour") for n in seen]
    rng.shuffle(facts)
    line_of = {}
    for n, what in facts:
        text = f"{n} is a {kind[n]}." if what == "kind" else f"{n} is {colour[kind[n]]}."
        line_of[(n, what)] = s.say(text)
    like = [n for n in seen if kind[n] == kind[target]]
    support = [line_of[(target, "kind")]]
    support += [line_of[(n, what)] for n in like for what in ("kind", "colour")]
    s.ask(f"What color is {target}?", colour[kind[target]], support)
    return s.lines


TASKS: dict[int, tuple[str, Callable[[random.Random], Episode]]] = {
    1: ("single supporting fact", task1),
    2: ("two supporting facts", task2),
    3: ("three supporting facts", task3),
    4: ("two argument relations", task4),
    6: ("yes/no questions", task6),
    7: ("counting", task7),
    8: ("lists/sets", task8),
    9: ("simple negation", task9),
    10: ("indefinite knowledge", task10),
    11: ("basic coreference", task11),
    12: ("conjunction", task12),
    13: ("compound coreference", task13),
    15: ("basic deduction", task15),
    16: ("basic induction", task16),
}


def generate(task: int, n_questions: int, seed: int) -> list[Episode]:
    """Stories of bAbI task ``task`` holding exactly ``n_questions`` questions."""
    return _episodes(TASKS[task][1], n_questions, seed)
