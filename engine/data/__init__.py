"""Generated tasks and vocabularies; nothing is downloaded."""
