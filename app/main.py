"""Attention Studio: the router. Every page is its own script under app/studios/."""

import streamlit as st
from catalog import PAGES

# No icons: a Material icon as page or favicon icon is fetched from fonts.gstatic.com, which
# the studio must never contact (the e2e network guard caught it), and emoji need a font
# that projector machines often lack.
st.set_page_config(page_title="Attention Studio", layout="wide")

pages = [st.Page(p.path, title=p.title, url_path=p.url, default=(p.url == "home")) for p in PAGES]
st.navigation(pages).run()
