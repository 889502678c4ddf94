"""``python -m engine.train <family> …``: reproduce the shipped checkpoints from a seed."""

import sys

from engine._cli import dispatch

if __name__ == "__main__":
    sys.exit(dispatch("training", "train", sys.argv[1:]))
