"""Attention Studio: the router. Every page is its own script under app/studios/."""

import streamlit as st
from catalog import PAGES

st.set_page_config(page_title="Attention Studio", page_icon="🔍", layout="wide")

pages = [
    st.Page(p.path, title=p.title, icon=p.icon, url_path=p.url, default=(p.url == "home"))
    for p in PAGES
]
st.navigation(pages).run()
