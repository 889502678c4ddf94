"""Models that answer with a Trace: one readable file per paper."""
