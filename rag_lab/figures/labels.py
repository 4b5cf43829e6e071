"""Point labels that never overlap and are never clipped: a greedy placement of each label beside its point, in
pixels of the smallest plot the figure is drawn at (:data:`PLOT_PX`; a larger plot only leaves more room), with
the axis ranges fixed from the points (:func:`padded_range`). A label that fits nowhere is dropped."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from rag_lab.figures.common import point_texts

#: The plot area (width, height, in px) the placement assumes: the smallest the figures are drawn at.
PLOT_PX = (520.0, 330.0)
#: The width (px) of one character at the 10 px label font (a conservative average for sans-serif).
CHAR_PX = 6.4
LINE_PX = 14.0
#: Gap between a point and its label, and the half-size of a point's marker (px).
GAP_PX = 9.0
MARKER_PX = 8.0
#: Where a label may go, in order of preference: plotly's textposition and the box's offset from the point.
POSITIONS = ("middle right", "middle left", "top center", "bottom center", "top right", "bottom right", "top left",
             "bottom left")
#: The corner positions' offset from the point (px): plotly draws their text diagonally off the marker.
CORNER_PX = 3.0


class Box(NamedTuple):
    """A rectangle in pixels, y downwards."""

    left: float
    top: float
    right: float
    bottom: float

    def overlaps(self, other: Box) -> bool:
        return self.left < other.right and other.left < self.right and self.top < other.bottom and other.top < self.bottom


def padded_range(values: Sequence[float], share: float = 0.08) -> tuple[float, float]:
    """An axis range holding ``values`` with ``share`` of their span (or of their size, for one value) on each side."""
    finite = [v for v in values if v == v and math.isfinite(v)]
    if not finite:
        return 0.0, 1.0
    lo, hi = min(finite), max(finite)
    span = hi - lo or max(abs(hi), 1.0) * 0.5
    return lo - share * span, hi + share * span


def _label_box(px: float, py: float, text: str, position: str) -> Box:
    width, height = CHAR_PX * len(text), LINE_PX
    if position == "middle right":
        left = px + GAP_PX
        return Box(left, py - height / 2, left + width, py + height / 2)
    if position == "middle left":
        right = px - GAP_PX
        return Box(right - width, py - height / 2, right, py + height / 2)
    vertical, horizontal = position.split()
    if horizontal == "center":
        left = px - width / 2
    else:
        left = px + CORNER_PX if horizontal == "right" else px - CORNER_PX - width
    top = py - GAP_PX - height if vertical == "top" else py + GAP_PX
    return Box(left, top, left + width, top + height)


def place_labels(x: Sequence[float], y: Sequence[float], texts: Sequence[str], x_range: tuple[float, float],
                 y_range: tuple[float, float], order: Sequence[int] | None = None,
                 plot_px: tuple[float, float] = PLOT_PX,
                 lines: Sequence[tuple[tuple[float, float], tuple[float, float]]] = ()) -> list[str | None]:
    """Each label's plotly ``textposition`` (:data:`POSITIONS`), or None where it is dropped: labels are placed in
    ``order`` (default: as given; put the ones that matter most first), each at the first position whose box lies
    inside the plot area and overlaps no point's marker, no horizontal or vertical line of ``lines`` (segments in
    data units, e.g. a Pareto staircase) and no label placed before it. An empty text is not drawn."""
    width, height = plot_px
    (x0, x1), (y0, y1) = x_range, y_range

    def to_px(xv: float, yv: float) -> tuple[float, float]:
        return (xv - x0) / ((x1 - x0) or 1.0) * width, (1 - (yv - y0) / ((y1 - y0) or 1.0)) * height

    points = [to_px(a, b) for a, b in zip(x, y, strict=True)]
    markers = [Box(px - MARKER_PX, py - MARKER_PX, px + MARKER_PX, py + MARKER_PX) for px, py in points]
    for start, end in lines:
        (ax, ay), (bx, by) = to_px(*start), to_px(*end)
        markers.append(Box(min(ax, bx) - 1, min(ay, by) - 1, max(ax, bx) + 1, max(ay, by) + 1))
    area = Box(0.0, 0.0, width, height)
    placed: list[Box] = []
    out: list[str | None] = [None] * len(texts)
    for i in (order if order is not None else range(len(texts))):
        if not texts[i]:
            continue
        for position in POSITIONS:
            box = _label_box(*points[i], texts[i], position)
            inside = area.left <= box.left and box.right <= area.right and area.top <= box.top and box.bottom <= area.bottom
            if inside and not any(box.overlaps(m) for m in markers) and not any(box.overlaps(b) for b in placed):
                out[i] = position
                placed.append(box)
                break
    return out


def labelled_markers(x: Sequence[float], y: Sequence[float], texts: Sequence[str], x_range: tuple[float, float],
                     y_range: tuple[float, float], plot_px: tuple[float, float] = PLOT_PX) -> dict[str, Any]:
    """A marker trace's ``text``, ``textposition`` and ``textfont``: each point named by its text where it fits
    (:func:`place_labels`; points at one place share one text: ``common.point_texts``)."""
    texts = point_texts(x, y, texts)
    places = place_labels(x, y, texts, x_range, y_range, plot_px=plot_px)
    return dict(text=[html.escape(t) if p else "" for t, p in zip(texts, places, strict=True)],
                textposition=[p or "top center" for p in places], textfont=dict(size=10, color="#555"))
