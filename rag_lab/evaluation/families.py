"""The families of metric columns — ``quality_*``, ``cost_*``, ``spent_*``, ``run_*`` — as a registry,
:data:`FAMILIES`, and the one place that reads a column name's prefix (:func:`family_of`). Every table,
summary, figure and search asks these functions which family a column is in, what a missing value counts
as and whether a replay reproduces it; no other module tests a metric name's prefix (a test checks). A results
table's parameter columns are named with :data:`PARAM_PREFIX`."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from rag_lab.registry import Registry

#: The prefix of a results table's parameter columns: ``param_<dotted key>``, one per key a sweep's grid sets.
PARAM_PREFIX = "param_"

__all__ = ["FAMILIES", "PARAM_PREFIX", "Family", "absent_value", "family_name", "family_of", "is_cost", "is_metric",
           "is_quality", "is_reproducible", "metric_columns", "short_name"]


@dataclass(frozen=True)
class Family:
    """One family of metric columns: the ``prefix`` its names start with, the ``side`` of the cost-quality
    trade-off it is on (a quality mean gets a bootstrap interval, a cost a plain mean), the value a row's
    missing key counts as (``absent``: 0 for a cost not incurred, NaN for an undefined quality) and whether a
    replay of a recorded sweep reproduces it exactly (``reproducible``: not wall time, not cache misses)."""

    prefix: str
    side: Literal["quality", "cost"]
    absent: float
    reproducible: bool
    what: str


#: The metric families, in the order tables list them.
FAMILIES: Registry[Family] = Registry("metric family")
FAMILIES.add("quality", Family("quality_", "quality", math.nan, True, "per-question quality, undefined where None"))
FAMILIES.add("cost", Family("cost_", "cost", 0.0, True, "cost the policy incurred, whether or not the cache answered"))
FAMILIES.add("spent", Family("spent_", "cost", 0.0, False, "cost actually spent: cache misses"))
FAMILIES.add("run", Family("run_", "cost", 0.0, False, "what the machine decides: wall-clock time"))


def family_name(column: str) -> str | None:
    """The name of the family ``column`` belongs to (``"cost"`` for ``cost_llm_calls``), else None."""
    if not isinstance(column, str):
        return None
    return next((name for name, family in FAMILIES.items() if column.startswith(family.prefix)), None)


def family_of(column: str) -> Family | None:
    """The :class:`Family` of ``column``, else None (``param_*``, ``candidate_id``, ``n_questions``...)."""
    name = family_name(column)
    return None if name is None else FAMILIES[name]


def is_metric(column: str) -> bool:
    """Whether ``column`` is in a metric family."""
    return family_of(column) is not None


def is_quality(column: str) -> bool:
    """Whether ``column`` is on the quality side (``quality_*``)."""
    family = family_of(column)
    return family is not None and family.side == "quality"


def is_cost(column: str) -> bool:
    """Whether ``column`` is on the cost side (``cost_*``, ``spent_*``, ``run_*``): a missing value counts as 0."""
    family = family_of(column)
    return family is not None and family.side == "cost"


def absent_value(column: str) -> float:
    """What a row's missing ``column`` counts as: 0 for a cost (not incurred), NaN otherwise (undefined)."""
    family = family_of(column)
    return math.nan if family is None else family.absent


def short_name(column: str) -> str:
    """``column`` without its family prefix (``cost_tokens`` → ``tokens``); other columns unchanged."""
    family = family_of(column)
    return column if family is None else column[len(family.prefix):]


def is_reproducible(column: str) -> bool:
    """Whether a replay of a recorded sweep reproduces ``column`` exactly: every column but ``spent_*`` (cache
    misses) and ``run_*`` (wall time)."""
    family = family_of(column)
    return family is None or family.reproducible


def metric_columns(columns: Iterable[str]) -> list[str]:
    """The metric columns of ``columns``, in their order."""
    return [c for c in columns if is_metric(c)]
