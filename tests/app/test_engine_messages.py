"""Text from the engine in the reader's language: every message id, variant title and
parameter label has an English entry equal to the engine's own text and a 简体中文 entry
with the same fields; pages show the Chinese text in ?lang=zh and the English unchanged."""

import importlib
import pickle
import pkgutil
import re
import string
from pathlib import Path

import numpy as np
import pytest
from kit import i18n
from streamlit.testing.v1 import AppTest

import engine
from engine import profile
from engine.errors import InputError
from engine.messages import MESSAGES, Message
from engine.models import registry
from engine.models.cards.pretrained import PretrainedCard
from engine.params import Param
from engine.text import tokens_within
from engine.trace import AttentionMap
from engine.variants.registry import REGISTRY

APP = Path(__file__).resolve().parents[2] / "app"


def engine_english() -> dict[str, str]:
    """Every translatable engine text under its ``engine.`` key, as the engine writes it."""
    found = {f"engine.{k}": v for k, v in MESSAGES.items()}
    for name, variant in REGISTRY.items():
        found[f"engine.variants.{name}.title"] = variant.title
        if variant.map_note:
            found[f"engine.variants.{name}.map_note"] = variant.map_note
        for p in variant.params:
            found[f"engine.variants.{name}.params.{p.name}.label"] = p.label
            if p.help:
                found[f"engine.variants.{name}.params.{p.name}.help"] = p.help
            found |= {f"engine.choices.{c}": c for c in p.choices}
    decoder = PretrainedCard("hf:any", {"arch": "decoder"})  # the options a generator has
    options = [p for card in [*registry.cards(), decoder] for p in card.options]
    options += [profile.LENGTH, *profile.RUN_PARAMS, *profile.BUDGETS]  # the cost profile's knobs
    for p in options + module_params():
        assert found.setdefault(f"engine.options.{p.name}.label", p.label) == p.label, p
        if p.help:
            found[f"engine.options.{p.name}.help"] = p.help
        found |= {f"engine.choices.{c}": c for c in p.choices}
    return found


def module_params() -> list[Param]:
    """Every ``Param`` an engine module names at its top level, alone or in a tuple: the
    limits an error message quotes by label (head detection's random tokens, rollout's
    residual weight), which a reader of 简体中文 must not meet in English."""
    found, of_variants = [], {id(p) for v in REGISTRY.values() for p in v.params}
    for info in pkgutil.walk_packages(engine.__path__, "engine."):
        if info.name.startswith("engine.kernels."):
            continue  # Triton kernels name no parameters, and import triton
        for value in vars(importlib.import_module(info.name)).values():
            group = value if isinstance(value, tuple) else (value,)
            found += [p for p in group if isinstance(p, Param) and id(p) not in of_variants]
    return found


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.fixture(autouse=True)
def english_afterwards():
    yield
    i18n._last = i18n.DEFAULT


def test_the_english_file_is_the_engine_text():
    shipped = {k: v for k, v in i18n.catalog("en").items() if k.startswith("engine.")}
    assert shipped == engine_english()


@pytest.mark.parametrize("lang", [lang for lang in i18n.LANGUAGES if lang != i18n.DEFAULT])
def test_every_engine_text_is_translated_with_the_same_fields(lang):
    other = i18n.catalog(lang)
    for key, english in engine_english().items():
        assert key in other, key
        assert fields(other[key]) == fields(english), key


def test_a_message_is_its_english_text():
    exc = InputError("text.too_many_tokens", n=60, limit=50)
    assert str(exc) == "That text has 60 tokens; the limit here is 50."
    assert exc.message.key == "text.too_many_tokens" and exc.message.params == {
        "n": 60,
        "limit": 50,
    }
    with pytest.raises(KeyError, match="message id"):  # the engine speaks only in ids
        InputError("Any sentence at all.")
    import pickle

    copied = pickle.loads(pickle.dumps(Message("limits.chars", chars=2000)))
    assert copied == "at most 2,000 characters" and copied.key == "limits.chars"


def test_engine_text_translates_by_id_and_keeps_english():
    with pytest.raises(InputError) as caught:
        tokens_within("a " * 60, 50)
    i18n._last = "en"
    assert i18n.engine_text(caught.value) == "That text has 60 tokens; the limit here is 50."
    i18n._last = "zh"
    assert i18n.engine_text(caught.value) == i18n.catalog("zh")[
        "engine.text.too_many_tokens"
    ].format(n=60, limit=50)
    assert i18n.engine_text("plain text stays") == "plain text stays"


def test_a_visitors_words_in_an_engine_message_are_inert_markdown():
    """The engine's warnings name what was typed ("“**hi**” is not in the vocabulary");
    st.warning renders Markdown, so "**hi**" showed as bold and "[x](y)" as a link. Escaped
    as values, in both languages; the template's own text and numbers' formats stay."""
    typed = ["**hi**", "[x](http://y)"]
    warning = Message("warn.unknown_words", n=2, total=3, words=", ".join(typed))
    nested = Message(
        "warn.low_confidence", what=Message("warn.what.date"), confidence=-1.5, floor=-0.25
    )
    for lang in ("en", "zh"):
        i18n._last = lang
        shown = i18n.engine_text(warning, markdown=True)
        assert r"\*\*hi\*\*" in shown and r"\[x\]\(http\://y\)" in shown
        assert "**hi**" not in shown and "](" not in shown
        assert i18n.engine_text(warning) == (
            str(warning) if lang == "en" else shown.replace("\\", "")
        )
    i18n._last = "en"
    escaped = str(nested).replace("-1.50", r"\-1\.50").replace("-0.25", r"\-0\.25")
    assert i18n.engine_text(nested, markdown=True) == escaped  # the nested message as written
    assert i18n.engine_text(
        Message("card.unknown_model", name="a_b", known="x"), markdown=True
    ) == (r"Unknown model 'a\_b'; known: x.")


def test_nested_messages_and_terms_are_translated():
    longformer = REGISTRY["longformer"]
    window = next(p for p in longformer.params if p.name == "window")
    with pytest.raises(InputError) as caught:
        window.check(0)
    i18n._last = "zh"
    shown = i18n.engine_text(caught.value)
    assert "window" not in shown and i18n.param_label(window, longformer) in shown
    card = registry.get("memn2n-joint") if "memn2n-joint" in registry.names() else None
    describe = (card or registry.cards()[0]).limits.describe()
    assert "characters" in describe and "characters" not in i18n.engine_text(describe)
    assert i18n.variant_title(longformer) != longformer.title
    label = i18n.variant_param_label(longformer, window)
    assert label.endswith("(1 … 1024)") and "window" not in label
    # The run's details the engine adds to a variant's sentence are messages too: "first 64
    # of 128 tokens." stood in English in 中文 captions; a γ list's full stops stay inside it.
    gammas = Message("note.retnet_gammas", gammas="0.9688, 0.9844")
    first = Message("note.first_tokens", m=64, n=128)
    note = REGISTRY["performer"].map_flags(first, after=[gammas])["note"]
    assert note == f"{first} {REGISTRY['performer'].map_note} {gammas}"  # English as before
    shown = i18n.engine_text(note)
    assert shown.startswith("前 64 个词元（共 128 个）。") and "Implied" not in shown
    assert shown.endswith("γ：0.9688, 0.9844。") and "first" not in shown
    i18n._last = "en"
    assert i18n.engine_text(note) == note


def test_a_map_note_is_one_message_of_messages_all_the_way_to_the_page():
    """A map's note was one English string the page re-parsed with patterns of every
    message's English text; now it is a Message whose parts are Messages, so the variant's
    sentence, the model's words around it and a reading's notes translate as themselves,
    and keep their ids through Streamlit's cache (a pickle)."""
    for name, variant in REGISTRY.items():
        note = variant.map_flags()["note"]
        assert not variant.map_note or note.key == f"variants.{name}.map_note", name
    w = np.full((1, 2, 3, 3), 1 / 3, np.float32)
    flags = REGISTRY["linformer"].map_flags(Message("note.computed_by", title="Linformer"))
    amap = AttentionMap(w, list("abc"), list("abc"), "self", **flags).head_average()
    again = pickle.loads(pickle.dumps(amap))
    assert again.note == amap.note and again.note.key == amap.note.key == "limits.join"
    i18n._last = "zh"
    shown = i18n.engine_text(again.note)
    assert shown.startswith("由 Linformer") and shown.endswith("；各头平均"), shown
    assert "computed" not in shown and "Implied" not in shown


def test_a_reading_of_the_heads_is_noted_in_chinese():
    """The Transformer page's caption under the enlarged head: rollout, merged word pieces
    and hidden sinks were written in English under a 中文 page."""
    w = np.full((2, 3, 4, 4), 0.25, np.float32)
    tokens = ["[CLS]", "play", "##ing", "[SEP]"]
    amap = AttentionMap(w, tokens, tokens, "self").merge_word_pieces(("[CLS]", "[SEP]"))
    amap = amap.rollout(0.25).hide_sinks(["[CLS]", "[SEP]"])
    assert amap.note.startswith("word pieces merged") and "0.25" in amap.note
    i18n._last = "zh"
    shown = i18n.engine_text(amap.note)
    assert not re.search(r"[A-Za-z]", shown), shown
    assert "0.25" in shown and "; " not in shown  # joined with 中文's own mark, "；"
    mean = AttentionMap(w, tokens, tokens, "self").head_average()
    assert i18n.engine_text(mean.note) == "各头平均"


def zh_alignment() -> AppTest:
    at = AppTest.from_file(str(APP / "studios/alignment.py"), default_timeout=180)
    at.query_params["lang"] = "zh"
    return at.run()


def shown(at: AppTest) -> list[str]:
    return [el.value for kind in ("info", "warning", "error") for el in at.get(kind)]


def test_a_chinese_page_shows_the_engine_messages_in_chinese():
    """Empty and over-long input on the alignment page: the card's limits, in Chinese."""
    at = zh_alignment()
    assert not at.exception, [e.value for e in at.exception]
    box = at.text_area(key="nmt-text-en-fr")
    zh = i18n.catalog("zh")
    assert "characters" not in box.label and zh["engine.unit.words_and_marks"] in box.label
    box.set_value("").run()
    assert zh["engine.card.nmt.empty"] in shown(at), shown(at)
    # The box of the current run: an empty text stops the page before its later widgets.
    at.text_area(key="nmt-text-en-fr").set_value("a" * 2_001).run()
    over = i18n.catalog("zh")["gate.over_chars"].format(n="2,001", limit="2,000")
    assert over in shown(at), shown(at)
