"""Which deck: a shipped one (in the page's language) or a file the teacher uploads."""

from __future__ import annotations

import streamlit as st
from kit import language, t
from kit.decks import MAX_BYTES, Deck, DeckError, load, parse, shipped

UPLOAD = "upload"


def _title(name: str) -> str:
    if name == UPLOAD:
        return t("lessons.upload_choice")
    try:
        return load(name, language()).title
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
        return _uploaded()
    path = (
        files[choice].get(language())
        or files[choice].get("en")
        or next(iter(files[choice].values()))
    )
    raw = path.read_bytes()
    try:
        return parse(raw, path.name), raw, path.name
    except DeckError as exc:
        st.error(str(exc))
        return None, raw, path.name


def _uploaded() -> tuple[Deck | None, bytes, str]:
    f = st.file_uploader(
        t("lessons.upload", kb=MAX_BYTES // 1000),
        type=["toml"],
        key="lesson-upload",
        max_upload_size=1,
    )
    if f is None:
        st.caption(t("lessons.upload_help"))
        return None, b"", ""
    raw = f.getvalue()
    try:
        return parse(raw, f.name), raw, f.name
    except DeckError as exc:
        st.error(str(exc))
        return None, raw, f.name
