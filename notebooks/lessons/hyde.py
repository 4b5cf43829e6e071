"""Notebook 04's own code (HyDE): the LLM calls each configuration incurred, per role."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from rag_lab.experiments.engine.results import SweepResult

__all__ = ["calls_table"]


def calls_table(result: SweepResult, names: Mapping[str, str]) -> pd.DataFrame:
    """LLM calls incurred per role (rows) for each named configuration (columns), from the traces."""
    return pd.DataFrame({name: result.calls_by_role(cid).set_index("role")["incurred"]
                         for name, cid in names.items()}).fillna(0).astype(int)
