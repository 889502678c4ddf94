"""Training entry points, one module per model family (``main(argv)``)."""
