"""Evaluation entry points, one module per family (``main(argv)``); last stdout line is JSON."""
