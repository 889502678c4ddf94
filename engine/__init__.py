"""Attention Studio engine: models, attention variants, kernels and the Trace contract.

Usable on its own (notebook, CLI, tests); it never imports Streamlit.
"""

__version__ = "0.1.0"
