"""Home: what the studio does, and a link to every page. Imports nothing heavy."""

import streamlit as st
from catalog import PAGES
from kit import page_bottom, page_top

page_top()
st.title("Attention Studio")
st.markdown(
    "Type or paste an input and **see what attention does** inside the models that made "
    "modern deep learning. Every model here is implemented and trained by this project, "
    "runs on your machine with no network, and every number it shows is measured."
)

st.subheader("Studios")
for page in PAGES:
    if page.url == "home":
        continue
    with st.container(border=True):
        st.page_link(page.path, label=page.title)
        st.caption(page.blurb)

st.subheader("Reading the figures")
st.markdown(
    "- Heatmaps put the **query** (what is looking) on the rows and the **key** (what is "
    "looked at) on the columns; hover a cell for its exact weight.\n"
    "- Every attention figure carries flags: **exact** weights, **approximate** or "
    "**implied** maps of methods that never form one, **pooled ×k** maps of long inputs, "
    "and **masked-only** patterns that show what a variant *may* see.\n"
    "- Any trace can be downloaded as JSON or NPZ and read back with "
    "`engine.trace.Trace.from_json` / `from_npz`."
)
page_bottom("home")
