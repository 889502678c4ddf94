"""Attention Studio: the router. Every page is its own script under app/pages/."""

from pathlib import Path

import streamlit as st

HERE = Path(__file__).parent

st.set_page_config(page_title="Attention Studio", page_icon="🔍", layout="wide")

PAGES = [
    ("pages/home.py", "Home", "🏠", "home"),
    ("pages/basics.py", "Attention basics", "🧮", "basics"),
    ("pages/positional.py", "Positional encoding", "〰️", "positional"),
    ("pages/alignment.py", "Alignment (Bahdanau)", "🔀", "alignment"),
    ("pages/memory.py", "Memory (MemN2N)", "🧠", "memory"),
    ("pages/transformer.py", "Transformer", "🤖", "transformer"),
    ("pages/variants.py", "Variants lab", "⚡", "variants"),
]

pages = [
    st.Page(path, title=title, icon=icon, url_path=url, default=(url == "home"))
    for path, title, icon, url in PAGES
    if (HERE / path).exists()
]
st.navigation(pages).run()
