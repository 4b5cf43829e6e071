"""Metric columns that say the same thing on a run: a ``quality_*`` column equal to an earlier one on every question
of every candidate (strict and lenient containment on short answers) is shown once, and a note names the pair."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from rag_lab.evaluation.families import is_quality
from rag_lab.stats.summary import is_ci_bound


def identical_columns(table: pd.DataFrame, rows: pd.DataFrame | None = None,
                      columns: Sequence[str] | None = None, prefer: Sequence[str] = ()) -> dict[str, str]:
    """Each ``quality_*`` column of ``table`` (or of ``columns``) equal to an earlier one → that earlier column: on
    every per-question row of ``rows`` when given (:meth:`~rag_lab.experiments.engine.results.SweepResult.all_rows`;
    missing values equal only missing ones), else on every value of ``table``. Columns in ``prefer`` (the plotted one)
    come first, so they are the ones kept."""
    source = rows if rows is not None and len(rows) else table
    listed = list(columns if columns is not None else table.columns)
    names = [c for c in [*(p for p in prefer if p in listed), *(c for c in listed if c not in prefer)]
             if is_quality(c) and not is_ci_bound(c, list(table.columns)) and c in source.columns]
    same: dict[str, str] = {}
    for i, col in enumerate(names):
        for earlier in names[:i]:
            if earlier not in same and _equal(source[earlier], source[col]):
                same[col] = earlier
                break
    return same


def _equal(a: pd.Series, b: pd.Series) -> bool:
    a, b = pd.to_numeric(a, errors="coerce"), pd.to_numeric(b, errors="coerce")
    return bool(((a == b) | (a.isna() & b.isna())).all())


def collapsed(table: pd.DataFrame, same: dict[str, str]) -> pd.DataFrame:
    """``table`` without the columns ``same`` names as duplicates (and their ``_lo``/``_hi`` bounds)."""
    drop = [c for col in same for c in (col, f"{col}_lo", f"{col}_hi") if c in table.columns]
    return table.drop(columns=drop)
