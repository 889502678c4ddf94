import datetime as dt

from engine.data import dates


def test_at_least_twenty_formats_all_parse_to_iso():
    assert len(dates.FORMATS) >= 20
    d = dt.date(1979, 5, 3)
    for name in dates.FORMATS:
        p = dates.pair(d, name)
        assert "".join(p.tgt) == "1979-05-03", name
        assert p.sure == frozenset() and p.possible == frozenset()
        assert len(p.src) <= dates.MAX_CHARS


def test_examples_from_the_issue():
    d = dt.date(1979, 5, 3)
    spelt = {dates.FORMATS[n](d) for n in dates.FORMATS}
    assert {"Thursday, 3 May 1979", "03/05/79", "May 3rd 1979", "3 mai 1979"} <= spelt


def test_splits_are_deterministic_and_disjoint():
    a = dates.splits(seed=3, n_train=300, n_valid=50, n_test=50)
    b = dates.splits(seed=3, n_train=300, n_valid=50, n_test=50)
    assert a == b
    assert [len(a[k]) for k in ("train", "valid", "test")] == [300, 50, 50]
    train = {p.src for p in a["train"]}
    assert not train & {p.src for p in a["test"]}
    assert not train & {p.src for p in a["valid"]}
    assert dates.splits(seed=4, n_train=300, n_valid=50, n_test=50) != a


def test_ordinals():
    assert [dates.ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23)] == [
        "1st",
        "2nd",
        "3rd",
        "4th",
        "11th",
        "12th",
        "13th",
        "21st",
        "22nd",
        "23rd",
    ]
