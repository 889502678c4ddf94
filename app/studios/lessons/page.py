"""Lessons: a deck stepped through in class, every step a live studio view.

A deck (assets/decks/*.toml, or an uploaded file) gives each step a title, a short
explanation, a question and a view written as a page link; the view is drawn here, with
the same state calls and figures as its page. The deck and the step live in the URL
(``?deck=bahdanau&step=3``), so a link opens the lesson where it was left.
"""

import streamlit as st
from kit import language, page_bottom, page_top, t
from kit.reveal import state_key
from studios.lessons import picker, views_models, views_more

VIEWS = {
    "alignment": views_models.alignment,
    "transformer": views_models.transformer,
    "memory": views_more.memory,
    "positional": views_more.positional,
    "variants": views_more.variants,
}

page_top()  # presenter mode: the step fills a projector's first screen
st.title(t("lessons.title"))
st.caption(t("lessons.intro"))
deck, raw, filename = picker.choose()
if deck is None:
    st.stop()
st.caption(deck.summary)
st.download_button(t("lessons.download"), raw, filename, mime="application/toml")

n = len(deck.steps)
try:
    index = min(max(int(st.query_params.get("step", 1)), 1), n) - 1
except ValueError:
    index = 0


def go(to: int) -> None:
    st.query_params["step"] = str(to + 1)


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
st.markdown(f"[{t('lessons.open')}]({step.view.link(lang=language())})")
key = state_key("lesson", deck.name, deck.lang, index, step.view.link())
VIEWS[step.view.page](step.view.params, step.predict, key)
page_bottom(f"lesson-{deck.name}-{index + 1}")
