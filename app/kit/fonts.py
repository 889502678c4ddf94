"""What a label takes on screen: Source Sans's letter widths, measured in Chromium.

Figures lay their label margins out from them (views.heatmap) and a table on a projector
its type (kit.tables), in one pass each: no layout round trip through the browser.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence

# Advance widths of Source Sans, the type Streamlit's theme draws charts and tables in, in em,
# measured in Chromium (canvas measureText) and rounded up to 0.05 em. Other letters take
# 0.65 em (an accented one its base letter's), CJK characters a full em.
_SOURCE_SANS_EM = {
    char: em
    for em, chars in {
        0.2: " ",
        0.25: "',.:;ij|’·",
        0.3: "!Ifl",
        0.35: "()-/[\\]rt{}",
        0.45: '"*?sxz',
        0.5: "0123456789#$+<=>FJLY^_cekvy~–",
        0.55: "AESTVXZ`aghnou",
        0.6: "BCKPRbdpq",
        0.65: "&DGNU",
        0.7: "HOQ",
        0.75: "Mw",
        0.8: "W—",
        0.85: "%@m",
        0.9: "★",
        0.95: "…",
    }.items()
    for char in chars
}


def label_px(labels: Sequence[str], size: float) -> float:
    """The drawn width of the longest label in Source Sans ``size`` px high, within a few
    per cent (kerning and hinting; 5 % is added). views.heatmap.text_px's flat 0.62 em of a
    14-px font is 1.5 × these for 12.75-px labels: a third of the Memory hops map's room
    stood empty left of its sentences on a projector."""
    widest = 0.0
    for label in labels:
        em = 0.0
        for c in html.unescape(str(label)):
            base = unicodedata.normalize("NFD", c)[0]
            em += _SOURCE_SANS_EM.get(base, 1.0 if ord(c) >= 0x2E80 else 0.65)
        widest = max(widest, em)
    return 1.05 * size * widest


_TAG = re.compile(r"<[^>]+>")  # markup (<sub>, <b>) takes no width of its own


def wrap_lines(text: str, px: float, size: float) -> tuple[str, int]:
    """``text`` broken with <br> so no line is wider than ``px`` in Source Sans ``size`` px
    (Plotly cuts a long title at the figure's edge); returns (text, lines). Breaks already
    in it stay; a ``<sup>`` tail starts its own line. Chinese breaks between characters."""
    head, sup, tail = text.partition("<sup>")
    lines = []
    for part in head.split("<br>"):
        line = ""
        for unit in re.findall(r"[\u2e80-\uffff]|[^\s\u2e80-\uffff]+\s*|\s+", part.strip()):
            if line and label_px([_TAG.sub("", line + unit.rstrip())], size) > px:
                lines.append(line.rstrip())
                line = unit.lstrip()
            else:
                line += unit
        lines.append(line.rstrip())
    if sup:
        lines.append(sup + tail)
    kept = [x for x in lines if x]
    return "<br>".join(kept), len(kept)


def flag_spans(title: str, px: int) -> str:
    """A title's <sup> line (a map's flags) at ``px``: Plotly draws a <sup> at 70 % of the
    title, 12 px, too small to read from the back of a room."""
    return title.replace("<sup>", f'<span style="font-size:{px}px">').replace("</sup>", "</span>")
