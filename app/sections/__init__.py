"""Sections draw a part of a page with Streamlit from the figures that app/views builds: a
page (app/studios) calls a section, and the section lays out the figures, tables and text that
views and state hand it (``st.markdown``, ``st.columns``, ``kit.chart``, widgets kept in the
URL). Views never import Streamlit, so a figure can be built, tested and benchmarked with no
app running; what needs a widget, a column or a caption lives here. A part that a page
shares with a lesson step or another page belongs here; one that only its page draws may
stay in the page or its helper."""
