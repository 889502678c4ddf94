"""Lessons: a deck stepped through in class, every step a live studio view.

A deck (assets/decks/*.toml, or an uploaded file) gives each step a title, a short
explanation, a question and a view written as a page link; the view is drawn here
(studios/lessons_views.py), with the same state calls and drawing as its page. The deck and
the step live in the URL (``?deck=bahdanau&step=3``), so a link opens the lesson where it
was left. Numbers a deck states (``{result:MODEL:KEY}``) are read from the model cards'
results when the deck is read.
"""

from __future__ import annotations

import streamlit as st
from kit import language, page_bottom, page_top, t
from kit.decks import MAX_BYTES, Deck, DeckError, load, parse, shipped
from kit.errors import halt
from kit.presenter import manage
from kit.reveal import state_key
from state.lessons import results
from studios.lessons_views import VIEWS

UPLOAD = "upload"


def _title(name: str) -> str:
    if name == UPLOAD:
        return t("lessons.upload_choice")
    try:
        return load(name, language(), results).title
    except DeckError:
        return name  # the error itself is shown when the deck is picked


def choose() -> tuple[Deck | None, bytes, str]:
    """(the deck or None, its file's bytes, its file name); a broken deck is explained."""
    files = shipped()
    options = [*files, UPLOAD]
    wanted = st.query_params.get("deck", options[0])
    if wanted not in options:
        st.info(t("lessons.unknown_deck", name=wanted[:40]))
        wanted = options[0]
    titles = {name: _title(name) for name in options}  # read once, in this run's language
    choice = st.selectbox(
        t("lessons.pick"),
        options,
        index=options.index(wanted),
        format_func=titles.get,
        key="lesson-deck",
    )
    if choice != st.query_params.get("deck"):
        st.query_params["deck"] = choice
        st.query_params["step"] = "1"
    if choice == UPLOAD:
        f = st.file_uploader(
            t("lessons.upload", kb=MAX_BYTES // 1000),
            type=["toml"],
            key="lesson-upload",
            max_upload_size=1,
        )
        if f is None:
            st.caption(t("lessons.upload_help"))
            return None, b"", ""
        return _read(f.getvalue(), f.name)
    path = files[choice].get(language()) or files[choice].get("en")
    path = path or next(iter(files[choice].values()))
    return _read(path.read_bytes(), path.name)


def _read(raw: bytes, filename: str) -> tuple[Deck | None, bytes, str]:
    try:
        return parse(raw, filename, results), raw, filename
    except DeckError as exc:
        st.error(str(exc))
        return None, raw, filename


def go(to: int) -> None:
    st.query_params["step"] = str(to + 1)


def step_index(n: int) -> int:
    """The step in the URL (counted from 1), kept within the deck; the first if unreadable."""
    try:
        return min(max(int(st.query_params.get("step", 1)), 1), n) - 1
    except ValueError:
        return 0


page_top("lessons")  # presenter mode: the step fills a projector's first screen
st.title(t("lessons.title"))
st.caption(t("lessons.intro"))
with manage("deck"):  # presenting: the room sees the step, not the deck's housekeeping
    deck, raw, filename = choose()
    if deck is not None:
        st.caption(deck.summary)
        st.download_button(t("lessons.download"), raw, filename, mime="application/toml")
if deck is None:
    halt()

n = len(deck.steps)
index = step_index(n)
c1, c2, c3 = st.columns([1, 3, 1])
c1.button(
    t("lessons.previous"), disabled=index == 0, on_click=go, args=(index - 1,), key="lesson-prev"
)
c2.progress((index + 1) / n, t("lessons.step_of", i=index + 1, n=n))
c3.button(
    t("lessons.next"), disabled=index == n - 1, on_click=go, args=(index + 1,), key="lesson-next"
)

step = deck.steps[index]
st.header(step.title)
st.markdown(step.explain)
st.info(t("lessons.question", question=step.question))
key = state_key("lesson", deck.name, deck.lang, index, step.view.link())
VIEWS[step.view.page](step.view.params, step.predict, key)
st.markdown(f"[{t('lessons.open')}]({step.view.link(lang=language())})")  # after the figure
page_bottom(f"lesson-{deck.name}-{index + 1}")
