"""Home: what the studio does, which models it runs (read from the model registry: trained
by this project, or shipped pretrained), and a link to every page."""

import streamlit as st
from catalog import PAGES
from kit import chart, engine_text, page_bottom, page_top, t
from state import models
from views.bleu import bleu_by_length_figure

# The first figure: Bahdanau et al.'s Figure 2 on this project's English → French models.
FIGURE_TASK = "en-fr"


def why_attention() -> None:
    """BLEU by sentence length of every translation model of FIGURE_TASK, with attention and
    without, read from their shipped evaluations (no model is loaded: start-up stays fast)."""
    cards = [c for c in models.cards().values() if c.task == FIGURE_TASK]
    measured = {
        engine_text(c.title): r for c in cards if (r := c.results()) and "bleu_by_length" in r
    }
    if not measured:
        return
    st.subheader(t("home.figure"))
    chart(bleu_by_length_figure(measured), key="home-bleu")
    st.caption(t("home.figure_caption"))


def models_shipped() -> None:
    """The registry's cards: a card with a training command was trained here; one without
    (MiniLM, a chat model) ships pretrained and runs unchanged."""
    cards = list(models.cards().values())
    trained: dict[tuple[str, str], int] = {}  # (the family's name, its paper) → checkpoints
    for c in cards:
        if c.train_command is not None:
            family = (engine_text(c.title).split(" · ")[0], c.paper)
            trained[family] = trained.get(family, 0) + 1
    pretrained = [engine_text(c.title) for c in cards if c.train_command is None]
    st.subheader(t("home.models"))
    lines = [t("home.family", name=a, paper=b, n=n) for (a, b), n in trained.items()]
    st.markdown(t("home.trained") + "\n" + "\n".join(f"- {line}" for line in lines))
    if pretrained:
        listed = "\n".join(f"- {title}" for title in pretrained)
        st.markdown(t("home.pretrained") + "\n" + listed)


page_top("home")
st.title("Attention Studio")
st.markdown(t("home.intro"))
why_attention()
models_shipped()

st.subheader(t("home.studios"))
for page in PAGES:
    if page.url == "home":
        continue
    with st.container(border=True):
        st.page_link(page.path, label=page.title)
        st.caption(page.blurb)

st.subheader(t("home.reading"))
st.markdown(t("home.reading_text"))
page_bottom("home")
