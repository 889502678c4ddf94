"""engine.data.coverage stays cheap whatever is typed: banded distance, long words refused."""

import random
import time

import pytest

from engine.data import coverage as cv
from engine.errors import InputError


def full_distance(a: str, b: str) -> int:
    """Optimal string alignment over the whole table: the reference for the banded one."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(
                d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])
            )
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


def test_banded_distance_equals_the_full_table_within_its_cap():
    rng = random.Random(0)
    for _ in range(400):
        a = "".join(rng.choice("abc") for _ in range(rng.randint(0, 9)))
        b = "".join(rng.choice("abc") for _ in range(rng.randint(0, 9)))
        exact = full_distance(a, b)
        assert cv.distance(a, b) == exact
        for cap in range(4):
            assert cv.distance(a, b, cap) == min(exact, cap + 1), (a, b, cap)


def test_distance_to_a_far_longer_word_costs_nothing():
    start = time.process_time()
    assert cv.distance("q" * 1_000_000, "minister", 2) == 3
    assert time.process_time() - start < 0.01


@pytest.mark.parametrize("paste", ["q" * 100_000, "zorblaxification" * 6_250])
def test_a_100k_character_word_is_read_in_well_under_a_second(paste):
    start = time.process_time()
    c = cv.coverage(paste)
    assert time.process_time() - start < 1.0
    assert c.unknown == [paste] and not c.covered
    assert not any(s.how in ("spelling", "role") for w in c.words for s in w.suggestions)


def test_a_100k_character_text_of_words_is_refused_in_well_under_a_second():
    start = time.process_time()
    with pytest.raises(InputError, match="limit here is"):
        cv.coverage("the zorblax signed the treaty . " * 3_200)
    assert time.process_time() - start < 1.0


def test_only_the_first_unknown_words_get_replacements():
    c = cv.coverage(" ".join(["qzqzqzq"] * 40))
    offered = [w for w in c.words if w.suggestions]
    assert len(offered) == cv.SUGGESTED
    assert all(not w.known for w in c.words)


def test_a_typo_still_finds_its_word():
    assert "minister" in [s.text for s in cv.coverage("the minster signed .").words[1].suggestions]
