"""Message files: every language has every key, every template formats the same names."""

import string

import pytest
from kit import i18n


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("lang", [lang for lang in i18n.LANGUAGES if lang != i18n.DEFAULT])
def test_every_language_has_every_key_with_the_same_fields(lang):
    en, other = i18n.catalog(i18n.DEFAULT), i18n.catalog(lang)
    assert en, "the English catalog is empty"
    assert set(other) == set(en), sorted(set(en) ^ set(other))
    for key, template in en.items():
        assert fields(other[key]) == fields(template), key
