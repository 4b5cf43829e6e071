"""Mean of a value over a grid of two keys (e.g. two swept parameters, their values from
:func:`~rag_lab.figures.common.axis_values`): the data behind the CRAG heat-map and the truncation-retention lines."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from rag_lab.figures.common import frozen, is_missing


def grid_mean(row_keys: Sequence[Hashable], col_keys: Sequence[Hashable], values: np.ndarray,
              rows: tuple, cols: tuple) -> tuple[np.ndarray, np.ndarray]:
    """``(mean, n)``: the mean of ``values`` (NaN = undefined) over the entries whose keys are ``(rows[i], cols[j])``,
    NaN where a cell has no defined value, and the count of defined values. Entries with a missing key are left out."""
    total = np.zeros((len(rows), len(cols)))
    count = np.zeros((len(rows), len(cols)), dtype=int)
    row_index = {v: i for i, v in enumerate(rows)}
    col_index = {v: j for j, v in enumerate(cols)}
    for r, c, v in zip(row_keys, col_keys, values, strict=True):
        if is_missing(r) or is_missing(c) or np.isnan(v):
            continue
        i, j = row_index[r], col_index[c]
        total[i, j] += v
        count[i, j] += 1
    mean = np.full(total.shape, np.nan)
    np.divide(total, count, out=mean, where=count > 0)
    return frozen(mean), frozen(count)
