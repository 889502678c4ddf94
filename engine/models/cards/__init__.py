"""One module per model family: how its checkpoints describe themselves and answer."""
