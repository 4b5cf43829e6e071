"""The one rule for "a paired difference shows what is claimed": its p below ``alpha`` and its interval on the
claimed side. A declared finding (:attr:`~rag_lab.experiments.engine.findings.Finding.holds`), a measured row of
the exploratory table (:func:`~rag_lab.experiments.engine.comparisons.is_measured`) and a cell of the
robustness table all ask :func:`holds`."""

from __future__ import annotations

import math
from typing import Literal

#: What a claim says of the difference candidate − reference: it is positive, negative, not zero (an
#: exploratory row), or within ±margin (an equivalence, tested by TOST).
Direction = Literal["above", "below", "two-sided", "none"]


def on_claimed_side(direction: Direction, lo: float, hi: float, *, delta: float = math.nan, margin: float = 0.0,
                    n: int | None = None) -> bool:
    """Whether the interval ``[lo, hi]`` lies where ``direction`` says: above 0, below 0, off 0 (``two-sided``)
    or, for ``none``, the difference ``delta`` inside ±``margin``; never with no questions (``n == 0``) or an
    undefined bound."""
    if n == 0 or lo != lo or hi != hi:
        return False
    if direction == "above":
        return lo > 0
    if direction == "below":
        return hi < 0
    if direction == "two-sided":
        return lo > 0 or hi < 0
    if direction == "none":
        return -margin < delta < margin
    raise ValueError(f"direction is 'above', 'below', 'two-sided' or 'none', got {direction!r}")


def holds(direction: Direction, p: float | None, lo: float, hi: float, alpha: float = 0.05, *,
          delta: float = math.nan, margin: float = 0.0, n: int | None = None) -> bool:
    """Whether the difference shows its claim: ``p`` (already corrected for its family) defined and below
    ``alpha``, and :func:`on_claimed_side`. ``p=None``: there is no p to read, and the interval alone decides."""
    if p is not None and not p < alpha:  # a NaN p never holds
        return False
    return on_claimed_side(direction, lo, hi, delta=delta, margin=margin, n=n)
