"""Measurements on attention maps of a real decoder: sinks, head types, cache policies.

Each module is one measurement with its formula in the docstring; all of them read plain
``[L, H, Q, K]`` weights (or run the chat model of :mod:`engine.models.chat`), and none
of them holds state between calls.

- :mod:`engine.analysis.sinks`: attention sinks (Xiao et al. 2023, StreamingLLM).
- :mod:`engine.analysis.heads`: previous-token, duplicate-token and induction heads
  (the definitions of TransformerLens's ``head_detector``).
- :mod:`engine.analysis.cache_eval`: teacher-forced next-token quality under a KV-cache
  policy, against the full cache.
- :mod:`engine.analysis.retrieval`: MiniLM retrieval over a passage store and the chat
  model's attention mass on each retrieved passage while it answers.
"""
