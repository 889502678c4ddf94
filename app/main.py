"""Attention Studio: the router. Every page is its own script under app/studios/."""

import os

# One torch thread per server process, set before torch is first imported: the models are
# small and sessions share two cores; with a second thread waiting on a busy core a
# Transformer trace took 0.7–5.4 s here instead of 0.14–0.22 s.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import streamlit as st  # noqa: E402 - after the thread setting, like everything below
from catalog import PAGES  # noqa: E402
from kit import language_picker  # noqa: E402
from state import preload  # noqa: E402

# No icons: a Material icon as page or favicon icon is fetched from fonts.gstatic.com, which
# the studio must never contact (the e2e network guard caught it), and emoji need a font
# that projector machines often lack.
st.set_page_config(page_title="Attention Studio", layout="wide")

language_picker()
home, *studios = PAGES
pages = [st.Page(home.path, title=home.title, url_path="", default=True)]
pages += [st.Page(p.path, title=p.title, url_path=p.url) for p in studios]


def _home_again() -> None:
    """The home page at "/" for a typed "/home", with the link's parameters (``?lang=zh``):
    Streamlit would show its "Page not found" dialog there."""
    st.switch_page(pages[0], query_params=st.query_params.to_dict())


pages.append(st.Page(_home_again, title=home.title, url_path="home", visibility="hidden"))
st.navigation(pages).run()
preload.start()  # after the page: the chat model loads while the class reads it
