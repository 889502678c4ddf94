"""Evaluation entry points, one module per model family (``main(argv)``); last stdout line is JSON."""
