"""``python -m engine.evaluate <family> …``: measure quality; last stdout line is JSON."""

import sys

from engine._cli import dispatch

if __name__ == "__main__":
    sys.exit(dispatch("evaluation", "evaluate", sys.argv[1:]))
