"""Figure builders and HTML embedding: each renders (part of) a Trace, nothing else.

Views never import Streamlit (tests/unit/test_views_are_pure.py): app/sections draws what
they build.
"""
