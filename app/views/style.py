"""The figures' shared style: type size, the legend's place, the alignment palette.

Apart from :mod:`views.heatmap` so that a page drawing only line charts (the home page's
BLEU by length) imports neither numpy nor the map vocabulary: its first paint waits for
neither.
"""

from __future__ import annotations

FONT = dict(size=16)
# Okabe–Ito, colour-blind safe: a sure gold link, a possible one, and an accent.
SURE, POSSIBLE, ACCENT = "#D55E00", "#56B4E9", "#E69F00"


def legend_below(**extra) -> dict:
    """A horizontal legend on the figure's bottom edge (container coordinates). Plotly
    reserves its band, so the x axis's ticks and title stay above it whatever its rows or
    type size; a paper-fraction ``y`` hung it a fraction of the plot's height below the
    axis, which a many-row legend or a projector's larger type pushed into the ticks."""
    return dict(orientation="h", yref="container", y=0, yanchor="bottom") | extra


def legend_line(name: str, **line) -> dict:
    """A legend entry for a line the figure draws as a shape (a dashed step, a needle's
    position): an empty trace of that line, so the plot itself carries no text."""
    return dict(type="scatter", mode="lines", x=[None], y=[None], name=name, line=line)


_BLANKS = str.maketrans({" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍", "\u3000": "␣"})


def visible_label(label: str) -> str:
    """A token of blanks alone (a character model's space) drawn as ␣ (↵, ⇥): a blank
    label is an unlabelled row, and its repeats' numbers ("#2") read as tokens."""
    return label.translate(_BLANKS) if not label.strip() else label
