"""Home: what the studio does, and a link to every page. Imports nothing heavy."""

import streamlit as st
from catalog import PAGES
from kit import page_bottom, page_top, t

page_top()
st.title("Attention Studio")
st.markdown(t("home.intro"))

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
