"""The Lessons page through AppTest: every shipped deck steps through in both languages,
a broken deck is reported with its line, and predict-then-reveal hides the map until asked."""

from pathlib import Path

import pytest
from kit import decks
from state.lessons import results
from streamlit.testing.v1 import AppTest

PAGE = Path(__file__).resolve().parents[2] / "app" / "studios" / "lessons.py"


def open_page(**params) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=300)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def charts(at) -> int:
    return len(at.get("plotly_chart"))


def texts(at) -> str:
    parts = [*at.markdown, *at.info, *at.warning, *at.success, *at.caption, *at.error]
    return "\n".join(str(p.value) for p in parts)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", sorted(decks.shipped()))
def test_every_shipped_deck_steps_through(name, lang):
    deck = decks.load(name, lang, results)
    assert deck.lang == lang, "every shipped deck has both languages"
    at = open_page(deck=name, lang=lang)
    for i, step in enumerate(deck.steps):
        assert not at.exception, (name, lang, i, at.exception)
        assert not at.error, (name, lang, i, [e.value for e in at.error])
        assert at.header[0].value == step.title
        assert step.question in texts(at)
        if step.predict is not None:  # hidden until the reveal
            assert at.button(key=next(b.key for b in at.button if b.key.endswith("-reveal")))
        else:  # a figure, a table, or a note such as "this baseline has no attention"
            assert charts(at) >= 1 or at.dataframe or len(at.info) >= 2, (name, lang, i)
        if i + 1 < len(deck.steps):
            at.button(key="lesson-next").click().run()
            assert at.query_params["step"] in (str(i + 2), [str(i + 2)])


def test_reveal_hides_the_map_then_shows_it_with_the_guess_distance():
    at = open_page(deck="bahdanau", step="1")  # « signé » → signed
    assert charts(at) == 0, "the alignment is hidden before the reveal"
    guess = at.pills[-1]
    src = guess.options
    words = [o.rsplit(" (", 1)[0] for o in src]  # "signed (9)": the word and its position
    guess.set_value(words.index("in")).run()
    assert charts(at) == 0, "a guess alone does not reveal"
    reveal = next(b for b in at.button if b.key.endswith("-reveal"))
    reveal.click().run()
    assert not at.exception
    assert charts(at) >= 1, "the reveal draws the alignment"
    said = " ".join(w.value for w in at.warning)
    assert "signed (9)" in said and "1 word(s) away" in said and "rank" in said, said


def test_a_right_guess_is_called_right():
    at = open_page(deck="memory", step="1")  # hop 1 reads "Mary got the milk." (sentence 5)
    guess = at.pills[-1]
    guess.set_value(next(i for i, o in enumerate(guess.options) if "milk" in o)).run()
    next(b for b in at.button if b.key.endswith("-reveal")).click().run()
    assert at.success and "Mary got the milk" in at.success[0].value
    assert charts(at) >= 1


def test_the_class_guesses_the_press_that_keeps_the_needle():
    """Chat deck: the class picks a press at ratio 0.5; the reveal names the measured best
    (from the shipped sweep) and then draws the curves (issue 32)."""
    deck = decks.load("chat", "en", results)
    step = next(i for i, s in enumerate(deck.steps) if s.view.params.get("section") == "presses")
    at = open_page(deck="chat", step=str(step + 1))
    assert not at.exception and charts(at) == 0, "the curves are hidden before the reveal"
    guess = at.pills[-1]
    names = [o.rsplit(" (", 1)[0] for o in guess.options]  # "random (1)": the press and its place
    assert "random" in names and "SnapKV with the question" in names
    guess.set_value(names.index("random")).run()
    next(b for b in at.button if b.key.endswith("-reveal")).click().run()
    assert not at.exception
    said = " ".join(str(w.value) for w in [*at.warning, *at.success, *at.info])
    assert "At ratio 0.5 the press that keeps the most answers is" in said, said
    assert charts(at) == 2, "the reveal draws accuracy and perplexity"


def test_is_attention_an_explanation_reveals_measured_effects():
    """Step 2: four heads' patterns first; the class picks L23 H3 (it looks at « John»),
    the reveal confirms it from the shipped IOI evaluation and draws the effects. Step 3:
    the passage the answer needs, measured by dropping each passage (issue 33)."""
    at = open_page(deck="explanation", step="2")
    assert not at.exception
    assert charts(at) == 1, "the patterns are shown, the effects hidden"
    guess = at.pills[-1]
    names = [o.rsplit(" (", 1)[0] for o in guess.options]
    assert names == ["L24 H4", "L22 H7", "L23 H3", "L20 H0"]
    guess.set_value(names.index("L23 H3")).run()
    next(b for b in at.button if b.key.endswith("-reveal")).click().run()
    assert not at.exception
    assert at.success and "L23 H3" in at.success[0].value and "0.49" in at.success[0].value
    assert charts(at) == 2
    at = open_page(deck="explanation", step="4")
    assert not at.exception
    guess = at.pills[-1]
    needed = next(i for i, o in enumerate(guess.options) if "moved to the office" in o)
    guess.set_value(needed).run()
    next(b for b in at.button if b.key.endswith("-reveal")).click().run()
    assert not at.exception
    assert at.success and "Mary moved to the office." in at.success[0].value
    assert charts(at) >= 1, "the meter after the reveal"


NO_TEXT = (
    'title = "x"\n\n[[steps]]\ntitle = "a"\nexplain = "b"\nquestion = "c"\n'
    'view = "alignment?model=nmt-enfr-additive"\n'
)


@pytest.mark.parametrize(
    "text, where",
    [
        ('title = "x"\n[[steps]]\ntitle = \n', "line 3, column 9: not valid TOML"),
        (NO_TEXT, "line 7: step 1, view: alignment views need text"),
    ],
)
def test_an_uploaded_broken_deck_is_reported_with_its_line(text, where):
    at = open_page(deck="upload")
    assert not at.exception
    at.file_uploader[0].set_value(("mine.en.toml", text.encode(), "application/toml")).run()
    assert not at.exception
    shown = " ".join(e.value for e in at.error)
    assert f"mine.en.toml, {where}" in shown, shown


def test_an_uploaded_deck_is_stepped_like_a_shipped_one():
    raw = decks.shipped()["memory"]["en"].read_bytes()
    at = open_page(deck="upload")
    at.file_uploader[0].set_value(("copy.en.toml", raw, "application/toml")).run()
    assert not at.exception and not at.error
    assert at.header[0].value == decks.load("memory", "en", results).steps[0].title


def test_unknown_deck_and_step_fall_back_with_a_note():
    at = open_page(deck="no-such-deck", step="99")
    assert not at.exception
    assert any("no-such-deck" in i.value for i in at.info)
    first = decks.load(sorted(decks.shipped())[0], "en", results)
    assert at.header[0].value == first.steps[0].title  # another deck starts at its step 1


def test_a_step_past_the_end_opens_the_last_step():
    at = open_page(deck="memory", step="99")
    assert not at.exception
    assert at.header[0].value == decks.load("memory", "en", results).steps[-1].title


def test_bad_step_number_opens_the_first_step():
    at = open_page(deck="memory", step="<script>")
    assert not at.exception
    assert at.header[0].value == decks.load("memory", "en", results).steps[0].title


def test_without_positions_both_copies_of_a_word_are_the_top_cell():
    at = open_page(deck="transformer", step="5")  # no PE: the first « le » splits its weight
    at.pills[-1].set_value(5).run()  # the second « the »
    next(b for b in at.button if b.key.endswith("-reveal")).click().run()
    assert at.success and "tie" in at.success[0].value, [s.value for s in at.success]


def test_the_ioi_step_says_what_the_model_writes_in_body_text():
    """A lesson is projected, and presenting hides captions: what the model writes (the
    name the heads move) is body text, as the timelines' "At step …" lines are."""
    at = open_page(deck="explanation", step="3")
    assert not at.exception
    assert any("The model continues the prompt with «" in m.value for m in at.markdown)
