"""Read the points of Zoology's "Recall-Memory Tradeoff" figure off its pixels.

    python scripts/digitise_zoology.py FIGURE.png > assets/published/zoology-recall-memory.json

FIGURE.png is ``zoology/analysis/paper/zoology_paper/zoology_results.png`` of
HazyResearch/zoology (commit d88d6f5, the figure of its README; not shipped here: the
repository states no licence). Its axes are calibrated on their tick marks, found in the
pixels (x: 10⁴, 10⁵, 10⁶ on a log axis; y: 0.2 … 1.0); each marker is found by its fill
colour (the legend's), opened to drop outlines and the dashed line, and its centre read
against the ticks. A marker half under another still shows ≥ 100 pixels and is read;
one wholly under another is not. Two disks that touch are split by k-means on their
pixels. Attention and Sliding Window share one colour (black) in the figure, so their
points are one series here. Accuracy is read to ≈ 0.01 and state size to ≈ 4 % (half a
marker's radius).
"""

from __future__ import annotations

import json
import sys

import numpy as np
from PIL import Image
from scipy import ndimage

SOURCE = (
    "HazyResearch/zoology (Arora et al.), zoology/analysis/paper/zoology_paper/"
    "zoology_results.png at commit d88d6f5: the README's Recall-Memory Tradeoff figure"
)
BLACK = "Attention or Sliding Window"
FILLS = {  # the legend markers' fill colours, read off the same image
    BLACK: (0, 0, 0),
    "H3": (176, 122, 161),
    "Hyena": (186, 176, 172),
    "Based": (89, 161, 79),
    "Mamba": (118, 183, 178),
    "GLA": (242, 142, 43),
    "Mamba-2": (78, 121, 167),
    "DeltaNet": (225, 87, 89),
    "RWKV-7": (237, 201, 72),
    "Gated DeltaNet": (156, 117, 95),
}
PLOT = (slice(125, 1380), slice(212, 1425))  # rows below the title, columns inside the axes
MIN_PIXELS = 100  # smaller: anti-aliasing around another marker, not a marker


def ticks(dark: np.ndarray) -> tuple[dict, dict]:
    """Major tick positions: the axes are the longest dark column and row; ticks are the
    columns (rows) with a long dark run just outside them."""
    h, w = dark.shape
    y_axis = int(np.argmax(dark[:, : w // 2].sum(0)))
    x_axis = h // 2 + int(np.argmax(dark[h // 2 :].sum(1)))
    cols = np.flatnonzero(dark[x_axis + 3 : x_axis + 25].sum(0) >= 8)
    rows = np.flatnonzero(dark[:, y_axis - 25 : y_axis - 3].sum(1) >= 8)
    x = dict(zip(_runs(cols), (4, 5, 6), strict=True))  # log10 of the state size
    y = dict(zip(_runs(rows), (1.0, 0.8, 0.6, 0.4, 0.2), strict=True))
    return x, y


def _runs(idx: np.ndarray) -> list[float]:
    """The centre of each run of neighbouring indices (a tick is 3 pixels wide)."""
    return [float(np.mean(g)) for g in np.split(idx, np.flatnonzero(np.diff(idx) > 2) + 1)]


def markers(region: np.ndarray, fill) -> list[tuple[float, float]]:
    """(row, column) centres of the disks of one fill colour."""
    mask = np.abs(region - np.array(fill)).sum(-1) < (30 if fill == (0, 0, 0) else 40)
    mask = ndimage.binary_opening(mask, iterations=2)
    lab, n = ndimage.label(mask)
    areas = ndimage.sum(mask, lab, range(1, n + 1))
    disk = float(np.median(areas[areas > 300])) if (areas > 300).any() else 670.0
    found = []
    for i in range(1, n + 1):
        ys, xs = np.nonzero(lab == i)
        if len(ys) < MIN_PIXELS:
            continue
        k = max(1, round(len(ys) / disk)) if len(ys) > 1.6 * disk else 1
        pts = np.stack([ys, xs], 1).astype(float)
        centre = pts[np.linspace(0, len(pts) - 1, k).astype(int)]
        for _ in range(50):  # k-means: disks that touch
            nearest = ((pts[:, None] - centre[None]) ** 2).sum(-1).argmin(1)
            centre = np.array([pts[nearest == j].mean(0) for j in range(k)])
        found += [tuple(c) for c in centre]
    return found


def main(path: str) -> dict:
    im = np.asarray(Image.open(path).convert("RGB")).astype(int)
    x_ticks, y_ticks = ticks(im.sum(-1) < 150)
    fx = np.polyfit(list(x_ticks), list(x_ticks.values()), 1)
    fy = np.polyfit(list(y_ticks), list(y_ticks.values()), 1)
    points = []
    for model, fill in FILLS.items():
        for row, col in markers(im[PLOT], fill):
            row, col = row + PLOT[0].start, col + PLOT[1].start
            points.append(
                {
                    "model": model,
                    "state_bytes": int(round(10 ** np.polyval(fx, col), -2)),
                    "accuracy": round(float(np.polyval(fy, row)), 2),
                }
            )
    points.sort(key=lambda p: (p["model"], p["state_bytes"]))
    return {
        "source": SOURCE,
        "label": "read from the figure (its pixels), not ours",
        "read": " ".join(__doc__.split("\n\n")[2].split()),
        "setting": (
            "MQAR trained on lengths 64–256 with 4–64 key–value pairs and tested up to 1,024 "
            "tokens and 256 pairs (the repository's original_mqar_configs), every mixer with "
            "a short convolution before it (the Based recipe)"
        ),
        "state": (
            "their _compute_state_size (zoology/model.py): each layer's mixer state at the "
            "longest test length, summed over layers, × 4 bytes — bytes at float32 over all "
            "layers, as ours; RWKV-7's adjusted as their plotting script does"
        ),
        "points": points,
    }


if __name__ == "__main__":
    json.dump(main(sys.argv[1]), sys.stdout, ensure_ascii=False, indent=1)
    print()
