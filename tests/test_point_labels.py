"""Point labels (rag_lab.figures.labels): the placement never lets two labels, or a label and a point or a line,
overlap, and never leaves the plot; labels that fit nowhere are dropped, the ones placed first kept."""

from __future__ import annotations

import numpy as np
import pytest

from rag_lab.figures.labels import PLOT_PX, _label_box, padded_range, place_labels


def _boxes(x, y, texts, x_range, y_range, positions):
    width, height = PLOT_PX
    to_px = lambda a, b: ((a - x_range[0]) / (x_range[1] - x_range[0]) * width,  # noqa: E731
                          (1 - (b - y_range[0]) / (y_range[1] - y_range[0])) * height)
    return [_label_box(*to_px(x[i], y[i]), texts[i], p) for i, p in enumerate(positions) if p is not None]


@pytest.mark.parametrize("seed", range(5))
def test_placed_labels_never_overlap_or_leave_the_plot(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(0, 1, 25).tolist(), rng.uniform(0, 1, 25).tolist()
    texts = [f"candidate {i} " + "x" * int(rng.integers(0, 15)) for i in range(25)]
    x_range, y_range = padded_range(x), padded_range(y)
    positions = place_labels(x, y, texts, x_range, y_range)
    boxes = _boxes(x, y, texts, x_range, y_range, positions)
    assert 0 < len(boxes) < 25                              # a crowded plot: some fit, some are dropped
    for i, a in enumerate(boxes):
        assert 0 <= a.left and a.right <= PLOT_PX[0] and 0 <= a.top and a.bottom <= PLOT_PX[1]
        assert not any(a.overlaps(b) for b in boxes[i + 1:])


def test_the_first_in_order_are_placed_first_and_lines_are_avoided():
    x, y = [0.0, 0.05, 1.0], [0.0, 0.0, 1.0]
    texts = ["a long label for the first point", "a long label for the second one", "c"]
    x_range, y_range = padded_range(x), padded_range(y)
    first = place_labels(x, y, texts, x_range, y_range, order=[1, 0, 2])
    assert first[1] is not None and first[2] is not None
    across = place_labels([0.0], [0.5], ["right of the point"], (-0.1, 1.1), (0.0, 1.0))
    assert across == ["middle right"]
    blocked = place_labels([0.0], [0.5], ["right of the point"], (-0.1, 1.1), (0.0, 1.0),
                           lines=[((0.0, 0.5), (1.0, 0.5))])
    assert blocked[0] != "middle right"
    assert place_labels([0.5], [0.5], [""], (0, 1), (0, 1)) == [None]
