"""Metrics of a pair — a question and its unanswerable twin (:mod:`rag_lab.loaders.twins`) — read from the two
questions' per-question rows (:data:`PAIR_METRICS`): what a finding ``over: pairs`` tests, and what
:class:`~rag_lab.experiments.engine.pairs.PairedHalves` tabulates. The method: docs/design.md §5, "What a guard
buys".

* ``pair_score`` — MuSiQue-Full's rule (Trivedi et al., 2022, ``evaluate_v1.0.py``): a pair counts only when the
  answerable question is answered right *and* its twin is refused, so refusing everything and answering everything
  both score 0.
* ``pair_utility`` — right − wrong over both questions (the CRAG benchmark's truthfulness score at a price of 1 for
  a wrong answer, summed over the pair: −2 … 2).
* ``pair_right`` / ``pair_wrong`` — right answers and confident errors over both questions (0 … 2): the parts of a
  utility at any price ``c`` (right − c·wrong), and of the break-even price between two candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rag_lab.registry import Registry

__all__ = ["PAIR_METRICS", "PairMetric"]

Row = Mapping[str, Any]


@dataclass(frozen=True)
class PairMetric:
    """One pair metric: ``value(answerable_row, twin_row)`` (None when undefined), its ``label``, which way is
    better, and its range (``zero_one``: every value 0 or 1)."""

    value: Callable[[Row, Row], float | None]
    label: str
    better: str = "higher"
    zero_one: bool = False

    @property
    def value_range(self) -> tuple[float, float] | None:
        return (0.0, 1.0) if self.zero_one else None


def _number(row: Row, key: str) -> float | None:
    value = row.get(key)
    return None if value is None or value != value else float(value)


def _both(key: str, combine: Callable[[float, float], float]) -> Callable[[Row, Row], float | None]:
    def value(answerable: Row, twin: Row) -> float | None:
        a, t = _number(answerable, key), _number(twin, key)
        return None if a is None or t is None else combine(a, t)
    return value


def _pair_score(answerable: Row, twin: Row) -> float | None:
    right, answered = _number(answerable, "quality_right"), _number(twin, "quality_answered")
    return None if right is None or answered is None else float(right == 1.0 and answered == 0.0)


#: The pair metrics, by name (a finding's ``metric`` when it is ``over: pairs``).
PAIR_METRICS: Registry[PairMetric] = Registry("pair metric")
PAIR_METRICS.add("pair_score", PairMetric(_pair_score, "pair score (right on the question and refused on its twin)",
                                          zero_one=True))
PAIR_METRICS.add("pair_utility", PairMetric(_both("quality_utility", lambda a, t: a + t),
                                            "utility at c = 1 over the pair (right − wrong)"))
PAIR_METRICS.add("pair_right", PairMetric(_both("quality_right", lambda a, t: a + t), "right answers over the pair"))
PAIR_METRICS.add("pair_wrong", PairMetric(_both("quality_confident_error", lambda a, t: a + t),
                                          "confident errors over the pair", better="lower"))
