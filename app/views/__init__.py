"""Figure builders and HTML embedding: each renders (part of) a Trace, nothing else."""
