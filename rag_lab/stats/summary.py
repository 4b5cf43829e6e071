"""Statistics of evaluation runs: bootstrap confidence intervals over questions, mean ± std over seeds, and the
cost-quality Pareto front (docs/design.md §5–6). An undefined quality value (None or NaN) is left out of its
column; a missing ``cost_*``, ``spent_*`` or ``run_*`` key counts as 0. :func:`bootstrap_ci` is kept by hand
(it draws ``scipy.stats.bootstrap``'s resamples, checked in tests/test_stats_against_scipy.py)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from rag_lab.evaluation.families import family_of, is_metric
from rag_lab.stats.paired import check_bootstrap, percentile_interval, resample_indices

CI_SUFFIXES = ("_lo", "_hi")


def _float_array(values: Iterable[Any], what: str) -> np.ndarray:
    """``values`` as a 1-D float array, None becoming NaN; a clear error for anything non-numeric."""
    items = list(values)
    text = next((v for v in items if isinstance(v, (str, bytes))), None)
    if text is not None:
        raise ValueError(f"{what}: expected numbers or None, got {text!r}")
    try:
        array = np.array([np.nan if v is None else v for v in items], dtype=float)
    except (TypeError, ValueError) as exc:
        bad = next((v for v in items if v is not None and not _is_number(v)), None)
        raise ValueError(f"{what}: expected numbers or None, got {bad!r}") from exc
    if array.ndim != 1:
        raise ValueError(f"{what}: expected a flat sequence of numbers, got shape {array.shape}")
    return array


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def bootstrap_ci(values: Iterable[float | None], n_boot: int = 1000, alpha: float = 0.05,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap confidence interval ``(lo, hi)`` of the mean of ``values``.

    ``n_boot`` resamples of the defined values (None and NaN are dropped), drawn with replacement by
    ``numpy.random.default_rng(seed)`` in one vectorised step (memory ``n_boot × n``), so the same inputs
    and seed always give the same interval. The bounds are the ``alpha/2`` and ``1 - alpha/2`` quantiles of
    the resampled means. No defined value gives ``(nan, nan)``; a single one gives a zero-width interval."""
    check_bootstrap(n_boot, alpha)
    array = _float_array(values, "bootstrap_ci values")
    array = array[~np.isnan(array)]
    if array.size == 0:
        return (math.nan, math.nan)
    idx = resample_indices(np.random.default_rng(seed), n_boot, None, array.size)
    return percentile_interval(array[idx].mean(axis=1), alpha)


def _columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every key of ``rows``, in order of first appearance."""
    seen: dict[str, None] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ValueError(f"rows[{i}]: expected a dict of metrics, got {type(row).__name__}")
        seen.update(dict.fromkeys(row))
    return list(seen)


def aggregate_rows(rows: Sequence[Mapping[str, Any]], n_boot: int = 1000, alpha: float = 0.05,
                   seed: int = 0) -> dict[str, Any]:
    """One summary of per-question metric rows.

    Keys: ``n_questions``; for every ``quality_*`` column its mean over the questions where it is defined
    with ``<col>_lo`` and ``<col>_hi``, the :func:`bootstrap_ci` bounds (same ``n_boot``, ``alpha`` and
    ``seed`` for every column); for every ``cost_*``, ``spent_*`` and ``run_*`` column its mean per question.
    Columns keep the order in which they first appear in ``rows``; other keys (``qid``, ``type`` ...) are ignored."""
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Sequence):
        raise ValueError(f"rows must be a list of dicts, got {type(rows).__name__}")
    out: dict[str, Any] = {"n_questions": len(rows)}
    for col in _columns(rows):
        family = family_of(col)   # its side of the trade-off, and what a row without it counts as
        if family is None:
            continue
        values = _float_array((row.get(col, family.absent) for row in rows), col)
        defined = values[~np.isnan(values)]
        out[col] = float(defined.mean()) if defined.size else math.nan
        if family.side == "quality":
            out[f"{col}_lo"], out[f"{col}_hi"] = bootstrap_ci(defined, n_boot=n_boot, alpha=alpha, seed=seed)
    return out


def aggregate_by_type(rows: Sequence[Mapping[str, Any]], n_boot: int = 1000, alpha: float = 0.05,
                      seed: int = 0) -> dict[str, dict[str, Any]]:
    """:func:`aggregate_rows` per question type (the rows' ``type`` key), types in sorted order."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping) or "type" not in row:
            raise ValueError(f"rows[{i}]: every row needs a 'type' key to aggregate by question type")
        groups.setdefault(str(row["type"]), []).append(row)
    return {t: aggregate_rows(groups[t], n_boot=n_boot, alpha=alpha, seed=seed) for t in sorted(groups)}


def is_ci_bound(column: str, columns: Iterable[str]) -> bool:
    """Whether ``column`` is the ``_lo``/``_hi`` interval bound of another column in ``columns``."""
    return column.endswith(CI_SUFFIXES) and column[:-3] in set(columns)


def _require_columns(table: pd.DataFrame, cols: Iterable[str], what: str) -> None:
    if not isinstance(table, pd.DataFrame):
        raise ValueError(f"expected a pandas DataFrame, got {type(table).__name__}")
    missing = [c for c in cols if c not in table.columns]
    if missing:
        raise ValueError(f"{what}: no column(s) {missing} in the table (columns: {list(table.columns)})")


def mean_std_over_seeds(table: pd.DataFrame, group_cols: list[str],
                        value_cols: list[str] | None = None) -> pd.DataFrame:
    """Mean and standard deviation across seeds of each configuration.

    Rows of ``table`` that agree on ``group_cols`` (typically the ``param_*`` columns) are repeated runs of
    one configuration; missing parameter values (NaN, as in conditional grids) form their own group. The
    result has ``group_cols``, then ``<col>_mean`` and ``<col>_std`` (ddof=1, NaN for a single seed) for each
    value column, and ``n_seeds``; groups in order of first appearance. ``value_cols`` defaults to every
    ``quality_*``, ``cost_*``, ``spent_*`` and ``run_*`` column that is not a CI bound. When the table has a
    ``seed`` column, a seed repeated within one group is an error (``group_cols`` do not identify a configuration)."""
    group_cols = list(group_cols)
    if not group_cols:
        raise ValueError("group_cols must name at least one column")
    _require_columns(table, group_cols, "group_cols")
    if value_cols is None:
        value_cols = [c for c in table.columns if is_metric(c) and not is_ci_bound(c, table.columns)]
    else:
        value_cols = list(value_cols)
        _require_columns(table, value_cols, "value_cols")
    overlap = set(group_cols) & set(value_cols)
    if overlap:
        raise ValueError(f"columns {sorted(overlap)} are both group and value columns")

    grouped = table.groupby(group_cols, dropna=False, sort=False)
    if "seed" in table.columns and "seed" not in group_cols:
        repeated = grouped["seed"].agg(lambda s: s.duplicated().any())
        if repeated.any():
            first = repeated[repeated].index[0]
            raise ValueError(f"seed repeated within the configuration {first!r}: group_cols do not identify one")
    values = table[value_cols].apply(pd.to_numeric, errors="coerce")
    values[group_cols] = table[group_cols]
    stats = values.groupby(group_cols, dropna=False, sort=False)[value_cols].agg(["mean", "std"])
    stats.columns = [f"{col}_{stat}" for col, stat in stats.columns]
    stats["n_seeds"] = grouped.size().to_numpy()  # same grouping, same (first-appearance) order
    return stats.reset_index()


def pareto_mask(cost: Iterable[float | None], quality: Iterable[float | None]) -> np.ndarray:
    """Boolean mask of the non-dominated points when minimising ``cost`` and maximising ``quality``.

    A point is dominated if another has cost ≤ and quality ≥ with at least one strict; identical points
    do not dominate each other, so both are on the front. A point with a NaN (or None) cost or quality is
    never on the front and never dominates. Sorting by cost and a running maximum of quality: O(n log n)."""
    c = _float_array(cost, "pareto_mask cost")
    q = _float_array(quality, "pareto_mask quality")
    if c.shape != q.shape:
        raise ValueError(f"pareto_mask: cost and quality differ in length ({c.size} vs {q.size})")
    mask = np.zeros(c.size, dtype=bool)
    valid = np.flatnonzero(~(np.isnan(c) | np.isnan(q)))
    if valid.size == 0:
        return mask
    cv, qv = c[valid], q[valid]
    levels, level_of = np.unique(cv, return_inverse=True)  # distinct costs, ascending
    best_at = np.full(levels.size, -np.inf)
    np.maximum.at(best_at, level_of, qv)  # best quality at each cost
    best_below = np.concatenate(([-np.inf], np.maximum.accumulate(best_at)[:-1]))  # best at strictly lower cost
    mask[valid] = (qv == best_at[level_of]) & (qv > best_below[level_of])
    return mask


#: A results-table column that, where present, says which rows may be on the front (a search's candidates
#: dropped by a race or breaking a constraint are not).
ELIGIBLE_COL = "is_eligible"


def add_pareto(table: pd.DataFrame, cost_col: str, quality_col: str, column: str = "is_pareto") -> pd.DataFrame:
    """A copy of ``table`` with a boolean ``column`` flagging the :func:`pareto_mask` of the two columns.
    Rows whose :data:`ELIGIBLE_COL` is False (when the table has it) are never on the front and never dominate."""
    _require_columns(table, [cost_col, quality_col], "add_pareto")
    out = table.copy()
    cost = pd.to_numeric(table[cost_col], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    quality = pd.to_numeric(table[quality_col], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    if ELIGIBLE_COL in table.columns:
        cost = np.where(table[ELIGIBLE_COL].to_numpy(dtype=bool), cost, np.nan)
    out[column] = pareto_mask(cost, quality)
    return out
